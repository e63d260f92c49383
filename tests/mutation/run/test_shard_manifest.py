"""Shard manifests: written, read back, and refused when a set is not one whole run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metaeval.errors import InputError
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
from metaeval.mutation.run.shard_manifest import (
    Manifest,
    ShardPlan,
    check_shards,
    find_manifests,
    plan_hash,
    read_manifest,
    write_manifest,
)
from metaeval.mutation.run.timings import read_timings, write_timings


def _mutant(i: str, source: str = "x = 1\n") -> Mutant:
    return Mutant(i, MutantKind.REWRITE, "flip_comparison", "p.py", "p", "f",
                  Span(1, 0, 1, 5), "<", ">=", mutated_source=source)


IDS = ["a", "b", "c", "d"]
PLAN = "h" * 64


def _write(out: Path, k: int, n: int, ids: list[str], *, finished: bool = True,
           plan: str = PLAN, results: list[str] | None = None) -> Path:
    shard = ShardPlan(k, n, plan, len(IDS), tuple(ids), out)
    done = ids if results is None else results
    write_manifest(shard, [MutantResult(_mutant(i), Status.KILLED, killed_by=("t",),
                                        duration=0.5) for i in done], finished=finished)
    return shard.path


def _all(out: Path) -> list[Manifest]:
    return [read_manifest(p) for p in find_manifests([out])]


def test_a_whole_set_passes(tmp_path: Path) -> None:
    _write(tmp_path / "one", 1, 2, ["a", "c"])
    _write(tmp_path / "two", 2, 2, ["b", "d"])
    manifests = _all(tmp_path)
    assert check_shards(manifests, PLAN, IDS) == []
    assert manifests[0].results["a"]["status"] == "Killed"


def test_a_missing_shard_is_named(tmp_path: Path) -> None:
    _write(tmp_path, 1, 3, ["a", "c"])
    _write(tmp_path, 3, 3, ["b"])
    assert check_shards(_all(tmp_path), PLAN, IDS) == [
        "shard 2/3 is missing (no shard-2-of-3.json)"]


def test_a_duplicated_shard_is_named(tmp_path: Path) -> None:
    _write(tmp_path / "x", 1, 2, ["a", "c"])
    _write(tmp_path / "y", 1, 2, ["a", "c"])
    _write(tmp_path / "z", 2, 2, ["b", "d"])
    problems = check_shards(_all(tmp_path), PLAN, IDS)
    assert len(problems) == 1 and problems[0].startswith("shard 1/2 is there 2 times")


def test_a_shard_of_another_plan_is_named(tmp_path: Path) -> None:
    _write(tmp_path / "x", 1, 2, ["a", "c"])
    other = _write(tmp_path / "y", 2, 2, ["b", "d"], plan="o" * 64)
    problems = check_shards(_all(tmp_path), PLAN, IDS)
    assert len(problems) == 1 and problems[0].startswith(f"{other}: shard 2/2 is from another")


def test_an_unfinished_shard_is_named(tmp_path: Path) -> None:
    _write(tmp_path / "x", 1, 2, ["a", "c"])
    started = _write(tmp_path / "y", 2, 2, ["b", "d"], finished=False, results=[])
    assert check_shards(_all(tmp_path), PLAN, IDS) == [
        f"{started}: shard 2/2 did not finish (0 of 2 results)"]
    short = _write(tmp_path / "y", 2, 2, ["b", "d"], results=["b"])
    assert check_shards(_all(tmp_path), PLAN, IDS) == [
        f"{short}: shard 2/2 did not finish (1 of 2 results)"]


def test_shares_that_are_not_the_plan_are_refused(tmp_path: Path) -> None:
    _write(tmp_path / "x", 1, 2, ["a"])
    _write(tmp_path / "y", 2, 2, ["b", "d"])
    assert check_shards(_all(tmp_path), PLAN, IDS) == [
        "the shards' shares are not the plan: 1 planned mutants in no share, 0 not "
        "planned, 0 in two shares"]


def test_no_manifest_at_all_is_refused(tmp_path: Path) -> None:
    assert check_shards(_all(tmp_path), PLAN, IDS)[0].startswith("no shard manifest found")


def test_a_manifest_that_is_not_one_names_the_file_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path, 1, 1, IDS)
    data = json.loads(path.read_text())
    data["results"]["a"]["status"] = "Dead"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"results: a: status: got 'Dead'; expected one of"):
        read_manifest(path)
    path.write_text("[1]")
    with pytest.raises(InputError, match="not a shard manifest"):
        read_manifest(path)
    with pytest.raises(InputError, match="no such file or directory"):
        find_manifests([tmp_path / "nowhere"])


def test_the_plan_hash_sees_code_config_operators_since_and_tests(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("def test(): pass\n")
    base = plan_hash([_mutant("a")], {"targets": ["p"]}, ["flip_comparison"], None, tmp_path)
    assert base == plan_hash([_mutant("a")], {"targets": ["p"]}, ["flip_comparison"], None,
                             tmp_path)
    assert base != plan_hash([_mutant("a", "x = 2\n")], {"targets": ["p"]},
                             ["flip_comparison"], None, tmp_path)
    assert base != plan_hash([_mutant("a")], {"targets": ["q"]}, ["flip_comparison"], None,
                             tmp_path)
    assert base != plan_hash([_mutant("a")], {"targets": ["p"]}, [], None, tmp_path)
    assert base != plan_hash([_mutant("a")], {"targets": ["p"]}, ["flip_comparison"], "HEAD",
                             tmp_path)
    (tmp_path / "test_x.py").write_text("def test(): assert 1\n")
    assert base != plan_hash([_mutant("a")], {"targets": ["p"]}, ["flip_comparison"], None,
                             tmp_path)


def test_the_plan_hash_never_reads_a_test_file_linked_to_a_device(tmp_path: Path) -> None:
    # A branch can add tests/test_zero.py -> /dev/zero; the plan is hashed before any
    # test runs, so it must not read that until memory runs out.
    (tmp_path / "test_x.py").write_text("def test(): pass\n")
    base = plan_hash([_mutant("a")], {}, [], None, tmp_path)
    (tmp_path / "test_zero.py").symlink_to("/dev/zero")
    assert plan_hash([_mutant("a")], {}, [], None, tmp_path) != base


def test_timings_round_trip_and_bad_ones_are_named(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    write_timings(path, [MutantResult(_mutant("a"), Status.KILLED, duration=1.25),
                         MutantResult(_mutant("b"), Status.IGNORED)])
    assert read_timings(path) == {"a": 1.25}
    path.write_text('{"a": "slow"}')
    with pytest.raises(InputError, match=r"a: got 'slow'; expected a number of seconds"):
        read_timings(path)
    # The file is read as untrusted JSON: NaN and a key given twice are refused
    # while parsing, naming the file.
    path.write_text('{"a": NaN}')
    with pytest.raises(InputError, match=r"--timings: .*t\.json: .*NaN is not a JSON number"):
        read_timings(path)
    path.write_text('{"a": 1, "a": 2}')
    with pytest.raises(InputError, match=r"--timings: .*t\.json: .*a"):
        read_timings(path)


@pytest.mark.parametrize(("where", "value", "named"), [
    ("n", 100_000_000, "n: got 100000000; expected a shard count from 1 to 10000"),
    ("n", 0, "n: got 0; expected a shard count"),
    ("k", 3, "k: got 3; expected a shard number from 1 to n (2)"),
    ("k", True, "k: got True"),
    ("planned", -1, "planned: got -1; expected a count"),
    ("baseline", 1e308, "baseline: got 1e+308; expected a number of seconds from 0 to 86400"),
    ("timeout", -1, "timeout: got -1; expected a number of seconds"),
    ("duration", 1e308, "results: a: duration: got 1e+308; expected a number of seconds"),
    ("in_tests", -1e9, "results: a: in_tests: got -1000000000.0"),
])
def test_a_number_out_of_range_names_the_file_and_field(
        tmp_path: Path, where: str, value: object, named: str) -> None:
    path = _write(tmp_path, 1, 2, ["a", "c"])
    read_manifest(path)  # as written: read
    data = json.loads(path.read_text())
    if where in ("duration", "in_tests"):
        data["results"]["a"][where] = value
    else:
        data[where] = value
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        read_manifest(path)
    assert str(caught.value).startswith(f"{path}: ") and named in str(caught.value)


def test_many_missing_shards_are_counted_after_the_first_few(tmp_path: Path) -> None:
    # Two manifests saying n = 10000 (the most --shard takes): the first five
    # missing by name, the rest as one count, not 9,998 lines.
    _write(tmp_path / "x", 1, 10_000, ["a", "c"])
    _write(tmp_path / "y", 2, 10_000, ["b", "d"])
    problems = check_shards(_all(tmp_path), PLAN, IDS)
    assert problems == [*(f"shard {k}/10000 is missing (no shard-{k}-of-10000.json)"
                          for k in range(3, 8)),
                        "... and 9993 more shards of 10000 missing (9998 in all)"]
    # Five missing are all named, with no count.
    _write(tmp_path / "z", 1, 7, ["a", "b", "c", "d"])
    _write(tmp_path / "w", 2, 7, [])
    problems = check_shards(_all(tmp_path / "z") + _all(tmp_path / "w"), PLAN, IDS)
    assert len(problems) == 5 and problems[-1].startswith("shard 7/7 is missing")


def test_what_write_timings_writes_reads_back_with_timings(tmp_path: Path) -> None:
    # A mutant measured past the range (1e308 s once made a file --timings refused)
    # is written at the bound; the file always reads back.
    path = tmp_path / "t.json"
    write_timings(path, [MutantResult(_mutant("a"), Status.KILLED, duration=1e308),
                         MutantResult(_mutant("b"), Status.TIMEOUT, duration=float("inf")),
                         MutantResult(_mutant("c"), Status.KILLED, duration=0.123456)])
    assert read_timings(path) == {"a": 86400.0, "b": 86400.0, "c": 0.1235}
    path.write_text('{"a": 86401}')
    with pytest.raises(InputError, match=r"a: got 86401; expected a number of seconds from 0"):
        read_timings(path)


def test_a_manifest_metaeval_writes_always_reads_back(tmp_path: Path) -> None:
    shard = ShardPlan(1, 1, PLAN, 1, ("a",), tmp_path)
    write_manifest(shard, [MutantResult(_mutant("a"), Status.TIMEOUT, duration=1e308,
                                        in_tests=float("nan"))],
                   finished=True, baseline=1e308, timeout=float("inf"))
    manifest = read_manifest(shard.path)
    assert (manifest.baseline, manifest.timeout) == (86400.0, 86400.0)
    assert manifest.results["a"]["duration"] == 86400.0
    assert manifest.results["a"]["in_tests"] == 0.0


def test_a_shard_reporting_beyond_its_share_or_plan_is_named(tmp_path: Path) -> None:
    # Forged or mixed up: a result for a mutant another shard was assigned (it would
    # have overridden that shard's), or a count from another plan.
    _write(tmp_path / "x", 1, 2, ["a", "c"], results=["a", "c", "b"])
    _write(tmp_path / "y", 2, 2, ["b", "d"])
    problems = check_shards(_all(tmp_path), PLAN, IDS)
    assert len(problems) == 1 and "has 1 results for mutants not assigned to it, e.g. 'b'" \
        in problems[0]
    (tmp_path / "x" / "shard-1-of-2.json").unlink()
    _write(tmp_path / "x", 1, 2, ["a", "c"])
    assert check_shards(_all(tmp_path), PLAN, IDS) == []  # as written: one whole run
    assert "says its plan holds 4 mutants; this plan holds 5" in check_shards(
        _all(tmp_path), PLAN, [*IDS, "e"])[0]
