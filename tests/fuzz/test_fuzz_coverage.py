"""Fuzz the readers of a coverage map: the ``--coverage`` file another CI job traced
(``load_coverage_file``: exit 2 naming the file and field) and the coverage cache
another run left (``load_reuse``: a cold cache with one warning). A valid map
loads with every field; with one field broken, each either loads with every
number in its range or refuses the file, never raising anything else."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from metaeval import __version__
from metaeval.contract import JsonValue
from metaeval.errors import InputError
from metaeval.mutation.caches.coverage_cache import FORMAT, load_reuse
from metaeval.mutation.caches.coverage_data import map_fields
from metaeval.mutation.caches.coverage_file import load_coverage_file
from metaeval.mutation.limits import LINE, SECONDS
from metaeval.untrusted_json import JsonInputError, parse_json
from tests.fuzz.strategies import Break, Raw, apply, breaks, corrupted, dump, encode, texts

PACKAGES = ["pkg"]
SALT = json.dumps([FORMAT, __version__, PACKAGES, []])
seconds = st.floats(0, 86400) | st.integers(0, 86400)
lines = st.integers(0, 10**7)


@st.composite
def code_runs(draw: st.DrawFn) -> dict[str, object]:
    tests = draw(st.lists(texts, max_size=3))
    groups = draw(st.lists(st.tuples(st.lists(lines, max_size=3),
                                     st.lists(st.integers(0, len(tests) - 1), max_size=3)
                                     if tests else st.just([])), max_size=2))
    return {"module": draw(texts), "file": draw(texts), "line": draw(lines),
            "name": draw(texts), "tests": tests, "lines": [list(g) for g in groups]}


@st.composite
def maps(draw: st.DrawFn) -> dict[str, object]:
    # File names as a valid map holds them: relative paths inside the project (parts
    # of any character but "/" and NUL, none "." or ".."); a broken map's names come
    # from the breaks, and ``_Digests`` refuses those as changed files.
    names = st.lists(st.text(st.characters(codec="utf-8", exclude_characters="/\x00"),
                             min_size=1, max_size=6).filter(lambda p: p not in (".", "..")),
                     min_size=1, max_size=2).map("/".join)
    return {"plan_hash": "p" * 64, "salt": SALT,
            "tests": draw(st.dictionaries(texts, seconds, max_size=3)),
            "others": draw(st.dictionaries(texts, seconds, max_size=2)),
            "digests": draw(st.dictionaries(names, texts, max_size=2)),
            "shapes": draw(st.dictionaries(names, st.fixed_dictionaries({
                "skeleton": texts,
                "functions": st.dictionaries(texts, st.tuples(lines, lines, texts).map(list),
                                             max_size=2)}), max_size=2)),
            "ran": draw(st.lists(code_runs(), max_size=3))}


def schema(record: dict[str, object], path: tuple[str | int, ...]) -> None:
    return None  # which breaks must fail is decided by the value below


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-coverage")
    (root / "pyproject.toml").write_text("")
    return root


def _names_nul(text: str) -> bool:
    try:
        value = parse_json(text)
    except JsonInputError:
        return False
    named = value.get("digests") if isinstance(value, dict) else None
    return isinstance(named, dict) and any("\x00" in name for name in named)


def in_range(document: JsonValue) -> bool:
    """Whether every number the readers range-check is in its range (what a
    loaded map must hold whatever else was broken)."""
    fields = map_fields(document)
    return (all(SECONDS.holds(v) for v in (*fields.tests.values(), *fields.others.values()))
            and all(LINE.holds(r.line) and all(
                LINE.holds(n) and all(0 <= i < len(r.tests) for i in ts)
                for numbers, ts in r.lines for n in numbers) for r in fields.ran))


@given(maps())
def test_a_valid_map_loads_with_every_field(where: Path, document: dict[str, object]) -> None:
    path = where / "cov.json"
    path.write_text(json.dumps(document))
    found = load_coverage_file(path)
    assert (found.plan, found.packages, found.tests) == ("p" * 64, ("pkg",),
                                                          len(document["tests"]))  # type: ignore[arg-type]
    fields = map_fields(json.loads(json.dumps({k: v for k, v in document.items()
                                               if k != "plan_hash"})))
    assert fields.tests == document["tests"] and fields.others == document["others"]
    ran = document["ran"]
    assert isinstance(ran, list)
    assert [r.to_json()["tests"] for r in fields.ran] == [tuple(r["tests"]) for r in ran]
    assert [[[list(n), list(t)] for n, t in r.lines] for r in fields.ran] == [
        r["lines"] for r in ran]
    assert load_reuse(path, where, PACKAGES, ())[1] == ""


SEED: dict[str, object] = {
    "plan_hash": "p" * 64, "salt": SALT, "tests": {"t::a": 0.5}, "others": {},
    "digests": {"pkg/m.py": "d"}, "shapes": {"pkg/m.py": {"skeleton": "s", "functions": {
        "f": [1, 2, "d"]}}},
    "ran": [{"module": "pkg.m", "file": "pkg/m.py", "line": 1, "name": "f",
             "tests": ["t::a"], "lines": [[[2], [0]]]}]}


@st.composite
def broken(draw: st.DrawFn) -> tuple[dict[str, object], Break]:
    document = draw(maps())
    return document, draw(breaks(document, schema))


@given(broken(), st.booleans())
@example((SEED, Break("replace", ("tests", "t::a"), -1e9, True)), True)
@example((SEED, Break("replace", ("tests", "t::a"), 1e308, True)), True)
@example((SEED, Break("replace", ("tests", "t::a"), Raw("NaN"), True)), True)
@example((SEED, Break("replace", ("tests", "t::a"), 10**400, True)), True)
@example((SEED, Break("replace", ("ran", 0, "lines", 0, 1, 0), 1, True)), True)
@example((SEED, Break("replace", ("ran", 0, "line"), -1, True)), True)
@example((SEED, Break("drop", ("ran", 0, "tests"), must_fail=True)), True)
def test_a_map_with_one_field_broken_loads_in_range_or_is_refused(
        where: Path, case: tuple[dict[str, object], Break], ascii_only: bool) -> None:
    document, brk = case
    text = dump(apply(document, brk), ascii_only=ascii_only)
    path = where / "cov.json"
    path.write_bytes(encode(text))
    try:
        load_coverage_file(path)
        loaded = True
    except InputError as e:
        assert str(e).startswith(f"--coverage: {path}") and len(str(e)) < 2_000
        loaded = False
    assume(not _names_nul(text))  # see maps()
    reuse, warning = load_reuse(path, where, PACKAGES, ())
    assert warning.count("\n") == 0
    if not loaded:
        assert reuse is None
        return
    assert not brk.must_fail, f"{brk} loaded"
    value = parse_json(text)
    assert isinstance(value, dict)
    assert in_range({k: v for k, v in value.items() if k != "plan_hash"})
    if reuse is not None:
        assert all(math.isfinite(v) and 0 <= v <= 86400 for v in reuse.tests.values())


def test_every_range_break_of_the_seed_is_refused(where: Path) -> None:
    # The cases the issue found, outside Hypothesis: each must be refused by both.
    path = where / "cov.json"
    for brk in (Break("replace", ("tests", "t::a"), -1e9), Break("replace", ("tests", "t::a"),
                                                                   1e308),
                Break("replace", ("ran", 0, "lines", 0, 1, 0), 1)):
        path.write_text(dump(apply(SEED, brk)))
        with pytest.raises(InputError):
            load_coverage_file(path)
        reuse, warning = load_reuse(path, where, PACKAGES, ())
        assert reuse is None and warning.startswith(f"warning: {path}: ")
    path.write_text(json.dumps(SEED))
    load_coverage_file(path)  # the seed itself loads


@given(maps().flatmap(lambda d: corrupted(encode(json.dumps(d)))))
def test_a_map_of_bytes_is_refused_or_loads(where: Path, data: bytes) -> None:
    path = where / "cov.json"
    path.write_bytes(data)
    try:
        load_coverage_file(path)
    except InputError as e:
        assert str(e).startswith(f"--coverage: {path}")
    assert load_reuse(path, where, PACKAGES, ())[1].count("\n") == 0


def test_the_field_checker_raises_only_its_own_error() -> None:
    values: list[JsonValue] = [None, [], {"salt": 1}, {k: [] for k in SEED}]
    for value in values:
        with pytest.raises(JsonInputError):
            map_fields(value)
