"""Fuzz the files ``--merge`` and ``--shard`` read from other jobs: shard manifests
(``read_manifest``, then ``check_shards``) and ``--timings`` files. A valid file
loads with every field; with one field broken, it loads with every number in
its range or is an ``InputError`` naming the file, never another exception; and
what ``--write-timings`` writes always reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from metaeval.errors import InputError
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
from metaeval.mutation.run.shard_manifest import (
    ShardPlan,
    check_shards,
    read_manifest,
    write_manifest,
)
from metaeval.mutation.run.timings import read_timings, write_timings
from tests.fuzz.strategies import Break, Raw, apply, breaks, corrupted, dump, encode, texts

seconds = st.floats(0, 86400) | st.integers(0, 86400)
PLAN = "h" * 64


def _mutant(i: str) -> Mutant:
    return Mutant(i, MutantKind.REWRITE, "op", "p.py", "p", "f", Span(1, 0, 1, 5), "<", ">=")


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-shards")


@st.composite
def manifests(draw: st.DrawFn, out: Path) -> tuple[dict[str, object], ShardPlan,
                                                    list[MutantResult]]:
    n = draw(st.integers(1, 10_000))
    k = draw(st.integers(1, n))
    ids = draw(st.lists(texts, unique=True, max_size=3))
    results = [MutantResult(_mutant(i), draw(st.sampled_from(list(Status))),
                            killed_by=tuple(draw(st.lists(texts, max_size=2))),
                            duration=float(draw(seconds)), in_tests=float(draw(seconds)),
                            detail=draw(texts)) for i in ids]
    shard = ShardPlan(k, n, PLAN, draw(st.integers(len(ids), 10**7)), tuple(ids), out)
    write_manifest(shard, results, finished=draw(st.booleans()),
                   baseline=float(draw(seconds)), timeout=float(draw(seconds)))
    document: dict[str, object] = json.loads(shard.path.read_text(encoding="utf-8"))
    shard.path.unlink()
    return document, shard, results


def test_a_valid_manifest_loads_with_every_field(out: Path) -> None:
    @given(manifests(out))
    def check(case: tuple[dict[str, object], ShardPlan, list[MutantResult]]) -> None:
        document, shard, results = case
        path = out / "m.json"
        path.write_text(json.dumps(document))
        found = read_manifest(path)
        assert (found.k, found.n, found.plan, found.planned, found.assigned) == (
            shard.k, shard.n, shard.plan, shard.planned, shard.assigned)
        assert {i: (e["status"], e["duration"], e["in_tests"], e["detail"])
                for i, e in found.results.items()} == {
            r.mutant.id: (r.status.value, r.duration, r.in_tests, r.detail) for r in results}
        check_shards([found], PLAN, list(shard.assigned))

    check()


SEED: dict[str, object] = {
    "format": 1, "kind": "metaeval-mutate-shard", "plan": PLAN, "k": 1, "n": 2,
    "planned": 2, "assigned": ["a"], "finished": True, "baseline": 1.0, "timeout": 3.0,
    "results": {"a": {"status": "Killed", "killed_by": ["t"], "covered_by": ["t"],
                      "duration": 0.5, "in_tests": 0.25, "detail": "", "cached": False}}}


def test_a_manifest_with_one_field_broken_is_one_error_naming_it_or_loads(out: Path) -> None:
    @st.composite
    def broken(draw: st.DrawFn) -> tuple[dict[str, object], Break]:
        document = draw(manifests(out))[0]
        return document, draw(breaks(document, lambda record, path: None))

    @given(broken(), st.booleans())
    @example((SEED, Break("replace", ("n",), 100_000_000, True)), True)
    @example((SEED, Break("replace", ("k",), 3, True)), True)
    @example((SEED, Break("replace", ("results", "a", "duration"), 1e308, True)), True)
    @example((SEED, Break("replace", ("results", "a", "in_tests"), -1e9, True)), True)
    @example((SEED, Break("replace", ("results", "a", "status"), "Dead", True)), True)
    @example((SEED, Break("replace", ("baseline",), Raw("NaN"), True)), True)
    @example((SEED, Break("replace", ("planned",), 10**400, True)), True)
    @example((SEED, Break("drop", ("plan",), must_fail=True)), True)
    # Found by the long profile: a 10,000-character mutant id was echoed whole.
    @example(({**SEED, "results": {"k" * 10_000: 1}}, Break("replace", ("k",), 1, True)),
             True)
    def check(case: tuple[dict[str, object], Break], ascii_only: bool) -> None:
        document, brk = case
        path = out / "m.json"
        path.write_bytes(encode(dump(apply(document, brk), ascii_only=ascii_only)))
        try:
            found = read_manifest(path)
        except InputError as e:
            assert str(e).startswith(str(path)) and len(str(e)) < 2_000
            return
        assert not brk.must_fail, f"{brk} loaded"
        assert 1 <= found.k <= found.n <= 10_000 and 0 <= found.planned <= 10**7
        assert 0 <= found.baseline <= 86400 and 0 <= found.timeout <= 86400
        for entry in found.results.values():
            assert 0 <= entry["duration"] <= 86400  # type: ignore[operator]
            assert 0 <= entry["in_tests"] <= 86400  # type: ignore[operator]
        problems = check_shards([found], PLAN, ["a"])
        assert len(problems) <= 12  # a few named, the rest counted

    check()


@given(st.just(SEED).flatmap(lambda d: corrupted(encode(json.dumps(d)))))
def test_a_manifest_of_bytes_is_one_error_naming_it_or_loads(out: Path, data: bytes) -> None:
    path = out / "m.json"
    path.write_bytes(data)
    try:
        read_manifest(path)
    except InputError as e:
        assert str(e).startswith(str(path))


# --- timings -----------------------------------------------------------------------------


@given(st.dictionaries(texts, seconds, max_size=4))
def test_valid_timings_load_with_every_value(out: Path, timings: dict[str, float]) -> None:
    path = out / "t.json"
    path.write_text(json.dumps(timings))
    assert read_timings(path) == timings


def _timings_and_break(d: dict[str, object]) -> st.SearchStrategy[tuple[dict[str, object],
                                                                        Break]]:
    return st.tuples(st.just(d), breaks(d, lambda record, path: None))


@given(st.dictionaries(texts, seconds.map(lambda v: v), min_size=1, max_size=4)
       .map(lambda d: dict[str, object](d)).flatmap(_timings_and_break), st.booleans())
@example(({"a": 1.0}, Break("replace", ("a",), 1e308, True)), True)
@example(({"a": 1.0}, Break("replace", ("a",), -1e9, True)), True)
@example(({"a": 1.0}, Break("replace", ("a",), Raw("NaN"), True)), True)
@example(({"a": 1.0}, Break("replace", ("a",), 10**400, True)), True)
def test_timings_with_one_value_broken_are_one_error_naming_them_or_load(
        out: Path, case: tuple[dict[str, object], Break], ascii_only: bool) -> None:
    timings, brk = case
    path = out / "t.json"
    path.write_bytes(encode(dump(apply(timings, brk), ascii_only=ascii_only)))
    try:
        found = read_timings(path)
    except InputError as e:
        assert str(e).startswith(f"--timings: {path}") and len(str(e)) < 2_000
        return
    assert not brk.must_fail, f"{brk} loaded"
    assert all(0 <= v <= 86400 for v in found.values())


@given(st.lists(st.tuples(texts, st.floats(allow_nan=True) | st.integers(-10**6, 10**12)),
                unique_by=lambda pair: pair[0], max_size=4))
def test_what_write_timings_writes_always_reads_back(
        out: Path, measured: list[tuple[str, float]]) -> None:
    path = out / "t.json"
    write_timings(path, [MutantResult(_mutant(i), Status.KILLED, duration=float(d))
                         for i, d in measured])
    found = read_timings(path)
    assert set(found) == {i for i, d in measured if d > 0}
    assert all(0 <= v <= 86400 for v in found.values())
