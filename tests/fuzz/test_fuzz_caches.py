"""Fuzz the result cache and the scan cache under ``.metaeval/``: files another run
left. A valid cache is read with every field; with one field broken, a cache is
read with every result in range or is cold with one warning line naming the
file, and reading it never raises."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from metaeval import __version__
from metaeval.mutation.caches.result_cache import CACHEABLE, ResultCache
from metaeval.mutation.caches.result_cache import FORMAT as RESULT_FORMAT
from metaeval.mutation.find.scan_cache import ScanCache
from metaeval.mutation.find.targets import find_mutants
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
from tests.fuzz.strategies import Break, Raw, apply, breaks, corrupted, dump, encode, texts

seconds = st.floats(0, 86400) | st.integers(0, 86400)
# Test ids with any character, NUL included: ``store`` hashes the files they name,
# and ``file_digest`` refuses a name with NUL (a changed dependency, never a crash).
test_ids = st.text(st.characters(codec="utf-8"), max_size=24)


def mutant() -> Mutant:
    return Mutant(id="calc.py::double::op::0", kind=MutantKind.REWRITE, operator="op",
                  path="calc.py", module="calc", qualname="double", span=Span(2, 5, 2, 10),
                  original="x * 2", replacement="x * 3",
                  mutated_source="def double(x):\n    return x * 3\n")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-caches")
    (root / "calc.py").write_text("def double(x):\n    return x * 2\n", encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text("def test_double():\n    pass\n",
                                                 encoding="utf-8")
    return root


def written(root: Path, result: MutantResult) -> dict[str, object]:
    """The cache a run storing ``result`` writes, as JSON."""
    path = root / ".metaeval" / "mutate-cache.json"
    path.unlink(missing_ok=True)
    cache = ResultCache(root, ())
    cache.store(result, None)
    cache.save(1.0, 8.0)
    document: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return document


results = st.builds(
    lambda status, killed, covered, duration, in_tests, detail: MutantResult(
        mutant(), status, killed_by=tuple(killed), covered_by=tuple(covered),
        duration=float(duration), in_tests=float(in_tests), detail=detail),
    st.sampled_from(CACHEABLE), st.lists(test_ids, max_size=2), st.lists(test_ids, max_size=2),
    seconds, seconds, texts)


def read(root: Path) -> tuple[ResultCache, str]:
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        cache = ResultCache(root, ())
    return cache, said.getvalue()


@given(results)
def test_a_valid_result_cache_is_read_with_every_field(root: Path, result: MutantResult
                                                       ) -> None:
    written(root, result)
    cache, said = read(root)
    assert said == ""
    found = cache.lookup(mutant())
    assert found is not None and found.cached
    assert (found.status, found.killed_by, found.covered_by, found.duration, found.in_tests,
            found.detail) == (result.status, result.killed_by, result.covered_by,
                              result.duration, result.in_tests, result.detail)


SEED_RESULT = MutantResult(mutant(), Status.KILLED, killed_by=("t",), covered_by=("t",),
                           duration=0.5, in_tests=0.25)


@st.composite
def broken(draw: st.DrawFn, root: Path) -> tuple[dict[str, object], Break]:
    document = written(root, draw(results))
    return document, draw(breaks(document, lambda record, path: None))


def _entry_path(document: dict[str, object], *rest: str | int) -> tuple[str | int, ...]:
    entries = document["entries"]
    assert isinstance(entries, dict)
    return ("entries", next(iter(entries)), *rest)


def test_a_result_cache_with_one_field_broken_is_in_range_or_cold(root: Path) -> None:
    seed = written(root, SEED_RESULT)

    @given(broken(root), st.booleans())
    @example((seed, Break("replace", _entry_path(seed, "result", "duration"), 1e308, True)),
             True)
    @example((seed, Break("replace", _entry_path(seed, "result", "duration"), -1e9, True)),
             True)
    @example((seed, Break("replace", _entry_path(seed, "result", "in_tests"), Raw("NaN"),
                          True)), True)
    @example((seed, Break("replace", _entry_path(seed, "result", "status"), "Ignored", True)),
             True)
    @example((seed, Break("replace", ("timeout",), 10**400, True)), True)
    def check(case: tuple[dict[str, object], Break], ascii_only: bool) -> None:
        document, brk = case
        path = root / ".metaeval" / "mutate-cache.json"
        path.write_bytes(encode(dump(apply(document, brk), ascii_only=ascii_only)))
        cache, said = read(root)
        assert said.count("\n") <= 1
        if said:
            assert said.startswith(f"warning: {path}: ") and "empty cache" in said
            assert cache.entries == {} and cache.last_limits() == (0.0, 0.0)
        else:
            assert not brk.must_fail, f"{brk} was read"
        found = cache.lookup(mutant())
        if found is not None:
            assert found.status in CACHEABLE
            assert 0 <= found.duration <= 86400 and 0 <= found.in_tests <= 86400
        assert all(0 <= limit <= 86400 for limit in cache.last_limits())

    check()


@given(st.builds(lambda r: json.dumps(r), st.just(None)).flatmap(
    lambda _: corrupted(encode(json.dumps({"format": RESULT_FORMAT, "baseline": 1, "timeout": 2,
                                           "entries": {}})))))
def test_a_result_cache_of_bytes_is_read_or_cold(root: Path, data: bytes) -> None:
    path = root / ".metaeval" / "mutate-cache.json"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    cache, said = read(root)
    assert said.count("\n") <= 1
    cache.lookup(mutant())


# --- the scan cache ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def scan_seed(root: Path) -> dict[str, object]:
    scan = ScanCache(root)
    find_mutants(["calc.py"], root, (), scan)
    scan.save()
    document: dict[str, object] = json.loads(
        (root / ".metaeval" / "mutate-scan-cache.json").read_text(encoding="utf-8"))
    assert document["version"] == __version__
    return document


def test_a_scan_cache_with_one_field_broken_is_read_or_cold(
        root: Path, scan_seed: dict[str, object]) -> None:
    entries = scan_seed["entries"]
    assert isinstance(entries, dict)
    first = ("entries", next(iter(entries)), "mutants", 0)
    fresh = find_mutants(["calc.py"], root, (), None)

    @given(breaks(scan_seed, lambda record, path: None), st.booleans())
    @example(Break("replace", (*first, "span", "start_line"), -1, True), True)
    @example(Break("replace", (*first, "span", "end_column"), 10**400, True), True)
    @example(Break("replace", (*first, "kind"), "other", True), True)
    @example(Break("drop", (*first, "mutated_source"), must_fail=True), True)
    def check(brk: Break, ascii_only: bool) -> None:
        path = root / ".metaeval" / "mutate-scan-cache.json"
        path.write_bytes(encode(dump(apply(scan_seed, brk), ascii_only=ascii_only)))
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            scan = ScanCache(root)
            found = find_mutants(["calc.py"], root, (), scan)
        assert said.getvalue().count("\n") <= 1
        if said.getvalue():
            assert scan.entries == {} and found == fresh  # cold: scanned again
        else:
            assert not brk.must_fail, f"{brk} was read"

    check()
