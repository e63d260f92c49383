"""The pure split of ``metaeval mutate --shard k/n``: parsing, LPT, the fallbacks."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from metaeval.errors import InputError
from metaeval.mutation.run.shards import (
    assign,
    fill_costs,
    hashed_costs,
    makespans,
    parse_shard,
    share,
)

DURATIONS = Path(__file__).resolve().parents[2] / "data" / "mutant_durations.json"


@pytest.mark.parametrize("text, expected", [("1/1", (1, 1)), ("2/4", (2, 4)),
                                            (" 32 / 32 ", (32, 32))])
def test_a_shard_is_k_of_n(text: str, expected: tuple[int, int]) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "3", "a/b", "-1/3", "1/3/4", "",
                                  "1/100000"])
def test_a_bad_shard_is_refused_naming_the_value(text: str) -> None:
    with pytest.raises(InputError, match="--shard: got"):
        parse_shard(text)


def test_lpt_puts_the_heaviest_first_into_the_lightest_share() -> None:
    costs = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 3.0, "e": 2.0, "f": 1.0}
    # a->0, b->1, c->1 (4<5)? no: lightest is share 1 (4), then c->1 (7); d->0 (8);
    # e->1 (9); f->0 (9)
    assert assign(costs, 2) == [["a", "d", "f"], ["b", "c", "e"]]
    assert makespans(costs, assign(costs, 2)) == [9.0, 9.0]


def test_ties_are_broken_by_id_so_every_shard_computes_the_same_split() -> None:
    ids = [f"m{i:03}" for i in range(50)]
    costs = dict.fromkeys(ids, 1.0)
    shuffled = dict(random.Random(7).sample(sorted(costs.items()), len(costs)))
    assert assign(costs, 4) == assign(shuffled, 4)
    assert assign(costs, 4)[0][:3] == ["m000", "m004", "m008"]


def test_the_shares_are_a_partition_of_the_plan() -> None:
    costs = {f"m{i}": float(i % 7 + 1) for i in range(101)}
    shares = [share(costs, k, 5) for k in range(1, 6)]
    flat = [i for s in shares for i in s]
    assert sorted(flat) == sorted(costs) and len(flat) == len(set(flat))


def test_more_shards_than_mutants_leaves_some_empty() -> None:
    assert assign({"a": 1.0, "b": 2.0}, 4) == [["b"], ["a"], [], []]


def test_unknown_mutants_cost_the_median_of_the_known_ones() -> None:
    costs = fill_costs(["a", "b", "c", "new"], {"a": 1.0, "b": 10.0, "c": 3.0, "gone": 99.0})
    assert costs == {"a": 1.0, "b": 10.0, "c": 3.0, "new": 3.0}


def test_with_no_cost_data_a_stable_hash_of_the_id_stands_in() -> None:
    ids = ["x::f::flip_comparison::0", "x::f::flip_comparison::1"]
    assert fill_costs(ids, {}) == hashed_costs(ids) == hashed_costs(list(reversed(ids)))
    assert all(1.0 <= c < 2.0 for c in hashed_costs(ids).values())
    assert len(set(hashed_costs(ids).values())) == 2


def _count_balanced(costs: dict[str, float], n: int) -> list[list[str]]:
    ordered = sorted(costs)
    return [ordered[k::n] for k in range(n)]


def test_at_32_shards_the_slowest_is_within_the_bound_on_a_real_run() -> None:
    """Per-mutant seconds measured by a real run: the 609 mutants that ran in the
    result cache of ``benchmarks/bench_inspect_ai.py``'s run on inspect_ai (ids
    renamed, in a shuffled order). LPT keeps the slowest share within max(1.15 x
    mean, the longest single mutant): at 8 shards 63.8 s against a mean of 63.8 s;
    at 32 the longest mutant, 29.7 s. A split by count does not (106.7 s and 66.7 s),
    so the bound can fail."""
    costs = json.loads(DURATIONS.read_text(encoding="utf-8"))
    assert len(costs) > 200
    for n in (8, 32):
        spans = makespans(costs, assign(costs, n))
        mean = sum(costs.values()) / n
        bound = max(1.15 * mean, max(costs.values()))
        assert max(spans) <= bound, (n, max(spans), mean)
    by_count = makespans(costs, _count_balanced(costs, 32))
    assert max(by_count) > max(1.15 * sum(costs.values()) / 32, max(costs.values()))
