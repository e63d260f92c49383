"""Fuzz the findings file reader: a valid findings file with exactly one field
broken is an InputError that names the file, or loads; never another exception.
A valid file loads with every field it was written with, and what loads can be
written back and compared against today without raising."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from metaeval.errors import InputError
from metaeval.mutation.findings_file import Findings, FindingStatus, dumps, load
from tests.fuzz.strategies import (
    OPEN,
    Break,
    Raw,
    apply,
    at,
    breaks,
    corrupted,
    dump,
    encode,
    names,
    raw_lines,
    texts,
)

dates = st.dates(dt.date(1900, 1, 1), dt.date(2200, 12, 31)).map(dt.date.isoformat)
seen = st.fixed_dictionaries({"commit": texts, "date": texts})
# A valid entry's path is relative and stays inside the repository: parts of any
# character but "/" and NUL, none of them "..", not empty.
paths = st.lists(st.text(st.characters(codec="utf-8", exclude_characters="/\x00"),
                         min_size=1, max_size=8).filter(lambda part: part != ".."),
                 min_size=1, max_size=3).map("/".join)


@st.composite
def entries(draw: st.DrawFn) -> dict[str, object]:
    entry: dict[str, object] = {
        "fingerprint": draw(names), "mutant_id": draw(texts), "rule": draw(texts),
        "mutant_status": draw(st.sampled_from(["Survived", "NoCoverage"])),
        "path": draw(paths), "line": draw(st.integers(-(10**400), 10**400)),
        "qualname": draw(texts), "first_seen": draw(seen), "last_seen": draw(seen),
        "status": draw(st.sampled_from(["open", "accepted"]))}
    if draw(st.booleans()):
        entry["breaks"] = draw(texts)
    if draw(st.booleans()):
        entry["diff"] = draw(st.lists(texts, max_size=3))
    if entry["status"] == "accepted":
        entry["reason"] = draw(names)
        entry["accepted_by"] = draw(texts)
        entry["until"] = draw(st.none() | dates)
    return entry


@st.composite
def documents(draw: st.DrawFn) -> dict[str, object]:
    return {"version": 1, "findings": draw(st.lists(entries(), min_size=1, max_size=3))}


def schema(record: dict[str, object], path: tuple[str | int, ...]) -> Mapping[str, bool] | None:
    """Required keys; unknown keys are not refused in a findings file."""
    if path == ():
        return {OPEN: True, "version": True, "findings": True}
    if len(path) == 2:
        accepted = at(record, path).get("status") == "accepted"  # type: ignore[attr-defined]
        return {OPEN: True, "fingerprint": True, "mutant_id": True, "rule": True,
                "mutant_status": True, "path": True, "line": True, "qualname": True,
                "first_seen": True, "last_seen": True, "status": True, "reason": accepted}
    if len(path) == 3 and path[2] in ("first_seen", "last_seen"):
        return {OPEN: True, "commit": True, "date": True}
    return None


@pytest.fixture(scope="module")
def findings_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-findings") / "findings.json"


def assert_usable(findings: Findings) -> None:
    today = dt.date(2026, 12, 1)
    for entry in findings.entries:
        entry.effective_status(today)
    json.loads(dumps(findings))


@given(documents(), st.booleans(), st.booleans())
def test_a_valid_findings_file_loads_with_every_field(findings_file: Path,
                                                      document: dict[str, object],
                                                      ascii_only: bool, indent: bool) -> None:
    text = (json.dumps(document, indent=2, ensure_ascii=ascii_only) if indent
            else dump(document, ascii_only=ascii_only))
    findings_file.write_bytes(encode(text))
    loaded = load(findings_file)
    assert_usable(loaded)
    written = document["findings"]
    assert isinstance(written, list)
    got = sorted((e.fingerprint, e.mutant_id, e.rule, e.mutant_status, e.path, e.line,
                  e.qualname, e.breaks, e.diff, (e.first_seen.commit, e.first_seen.date),
                  (e.last_seen.commit, e.last_seen.date), e.status.value, e.reason,
                  e.accepted_by, e.until) for e in loaded.entries)
    want = sorted((w["fingerprint"], w["mutant_id"], w["rule"], w["mutant_status"], w["path"],
                   w["line"], w["qualname"], w.get("breaks", ""), "\n".join(w.get("diff", [])),
                   (w["first_seen"]["commit"], w["first_seen"]["date"]),
                   (w["last_seen"]["commit"], w["last_seen"]["date"]), w["status"],
                   w.get("reason", ""), w.get("accepted_by", ""), w.get("until") or "")
                  for w in written)
    assert got == want
    assert [e.status for e in loaded.entries].count(FindingStatus.ACCEPTED) == sum(
        w["status"] == "accepted" for w in written)


SEED: dict[str, object] = {"version": 1, "findings": [{
    "fingerprint": "0123456789abcdef", "mutant_id": "m1", "rule": "negate_condition",
    "mutant_status": "Survived", "path": "pkg/guard.py", "line": 3, "qualname": "allow",
    "first_seen": {"commit": "abc", "date": "2026-01-01"},
    "last_seen": {"commit": "abc", "date": "2026-01-01"},
    "status": "accepted", "reason": "equivalent", "accepted_by": "me", "until": "2027-01-01"}]}


@st.composite
def broken_documents(draw: st.DrawFn) -> tuple[dict[str, object], Break]:
    document = draw(documents())
    return document, draw(breaks(document, schema))


@given(broken_documents(), st.booleans())
@example((SEED, Break("replace", ("findings", 0, "line"), Raw("1e309"), True)), True)
@example((SEED, Break("replace", ("findings", 0, "until"), "2027-02-30", True)), True)
@example((SEED, Break("replace", ("findings", 0, "reason"), "\ud800", True)), False)
@example((SEED, Break("replace", ("findings", 0, "diff"), Raw("[" * 1000 + "]" * 1000),
                      True)), True)
@example((SEED, Break("replace", ("version",), 10**400, True)), True)
@example((SEED, Break("drop", ("findings", 0, "reason"), must_fail=True)), True)
def test_a_findings_file_with_one_field_broken_is_one_error_naming_it_or_loads(
        findings_file: Path, case: tuple[dict[str, object], Break], ascii_only: bool) -> None:
    document, brk = case
    findings_file.write_bytes(encode(dump(apply(document, brk), ascii_only=ascii_only)))
    try:
        loaded = load(findings_file)
    except InputError as e:
        assert str(e).startswith(str(findings_file))
        str(e).encode("utf-8")
        assert len(str(e)) < 2_000
        return
    assert not brk.must_fail, f"{brk} loaded"
    assert_usable(loaded)


@given(documents().flatmap(lambda d: corrupted(encode(json.dumps(d, indent=2)))) | raw_lines)
def test_a_findings_file_of_bytes_is_one_error_naming_it_or_loads(findings_file: Path,
                                                                   data: bytes) -> None:
    findings_file.write_bytes(data)
    try:
        assert_usable(load(findings_file))
    except InputError as e:
        assert str(e).startswith(str(findings_file))
        str(e).encode("utf-8")
