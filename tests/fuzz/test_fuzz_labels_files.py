"""Fuzz the labels-file reader (``metaeval.loaders.labels_files.read_labels``), CSV and
JSON Lines: good rows around one bad line (bytes that are not UTF-8, a field past
the csv module's limit or the reader's, a line past 1 MiB, nesting a thousand deep,
too few fields, a bad label). The reader never raises, every good row is read with
the fields it was written with, every error names the bad line, and memory stays
bounded: the peak the reader allocates is under 32 MiB beyond ten times the bad
line (a CSV line is held at most 1 MiB of; a JSON Lines line whole, as meta-sets
are read)."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from metaeval.contract import Outcome
from metaeval.loaders.labels_files import read_labels

# Names and rationales a team writes: any printable text, but no CSV quote, comma or
# line break (a quote opens a field that may rightly run on to the end of the file).
_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"),
                              blacklist_characters=',"\r\n\x85'), min_size=1, max_size=12)
_ROW = st.fixed_dictionaries({"check": st.sampled_from(["*", "flight_booked"]),
                              "label": st.sampled_from(["pass", "fail", "unsure"]),
                              "annotator": _TEXT,
                              "rationale": st.one_of(st.just(""), _TEXT)})
_JUNK = st.binary(max_size=200).filter(lambda b: b"\n" not in b and b'"' not in b)
_CSV_BREAKS = st.one_of(
    _JUNK,
    st.sampled_from([n * b"x" for n in (10_001, 131_073, 1_100_000)]).map(
        lambda tail: b"bad,*,pass,ann," + tail),
    st.just(b"bad,*"),
    st.just(b"bad,*,maybe,ann,"),
    st.just(b"bad,*,pass,,"),
    st.just(b"bad,*,pass,ann,why,extra"),
)
_JSONL_BREAKS = st.one_of(
    _JUNK,
    st.just(b"[" * 1000 + b"]" * 1000),
    st.just(b'{"run_id": "bad", "check": "*", "label": "pass", "annotator": "\\ud800"}'),
    st.just(b'{"run_id": "bad", "check": "*", "label": "maybe", "annotator": "a"}'),
    st.just(b'{"run_id": "bad", "check": "*", "label": "pass", "annotator": "a", "x": 1}'),
    st.just(b'{"run_id": "bad", "check": "*", "label": "pass", "annotator": "'
            + b"y" * 200_000 + b'"}'),
    st.just(b'{"run_id": 1, "run_id": 2}'),
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-labels")


def _csv_line(row: dict[str, str]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(
        [row["run_id"], row["check"], row["label"], row["annotator"], row["rationale"]])
    return out.getvalue().encode("utf-8")


def _check(path: Path, rows: list[dict[str, str]], bad_line: int, bad: bytes) -> None:
    tracemalloc.start()
    try:
        read, errors = read_labels([path])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20 + 10 * len(bad), peak
    by_source = {a.source: a for a in read}
    for row in rows:  # every good row, as written
        got = by_source.get(f"{path}:{row['line']}")
        assert got is not None, (row, errors)
        assert (got.run_id, got.check, got.label, got.annotator, got.rationale) == (
            row["run_id"], row["check"], Outcome(row["label"] if row["label"] != "unsure"
                                                 else "unscored"),
            row["annotator"], row["rationale"])
    assert {a.source for a in read} - {f"{path}:{r['line']}" for r in rows} <= {
        f"{path}:{bad_line}"}  # anything else read came from the bad line
    for error in errors:
        assert (error.path, error.line) == (str(path), bad_line), error
        assert len(str(error)) < 2_000
        str(error).encode("utf-8")


def _numbered(rows: list[dict[str, str]], first_line: int, bad_at: int) -> list[dict[str, str]]:
    out = []
    for n, row in enumerate(rows):
        line = first_line + n + (1 if n >= bad_at else 0)
        out.append({**row, "run_id": f"r{n}", "line": str(line)})
    return out


@given(st.lists(_ROW, min_size=1, max_size=6), st.data(), _CSV_BREAKS)
@example([{"check": "*", "label": "pass", "annotator": "ann", "rationale": ""}] * 4,
         None, b"bad,*,pass,ann," + b"x" * 131_073)  # issue 44: 4 good rows lost
def test_a_csv_labels_file_loses_only_its_bad_line(
        folder: Path, rows: list[dict[str, str]], data: st.DataObject | None,
        bad: bytes) -> None:
    bad_at = data.draw(st.integers(0, len(rows))) if data is not None else 0
    good = _numbered(rows, 2, bad_at)
    lines = [_csv_line(r) for r in good]
    lines.insert(bad_at, bad + b"\n")
    path = folder / "labels.csv"
    path.write_bytes(b"run_id,check,label,annotator,rationale\n" + b"".join(lines))
    _check(path, good, 2 + bad_at, bad)


@given(st.lists(_ROW, min_size=1, max_size=6), st.data(), _JSONL_BREAKS)
def test_a_jsonl_labels_file_loses_only_its_bad_line(
        folder: Path, rows: list[dict[str, str]], data: st.DataObject, bad: bytes) -> None:
    bad_at = data.draw(st.integers(0, len(rows)))
    good = _numbered(rows, 1, bad_at)
    lines = [json.dumps({k: v for k, v in r.items() if k != "line"}).encode() + b"\n"
             for r in good]
    lines.insert(bad_at, bad + b"\n")
    path = folder / "labels.jsonl"
    path.write_bytes(b"".join(lines))
    _check(path, good, 1 + bad_at, bad)
