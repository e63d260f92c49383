"""Labels files are bounded: only a regular file is read, a line at a time; one bad
row or line loses that row only; the annotators are at most ``MAX_ANNOTATORS``, and
their agreement costs one scikit-learn call per distinct pair table, not per pair."""

from __future__ import annotations

import itertools
import os
import threading
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from metaeval.audit import label_agreement
from metaeval.audit.label_agreement import agreement
from metaeval.audit.metrics import nominal_kappa
from metaeval.contract import Outcome
from metaeval.loaders.labels_files import MAX_ANNOTATORS, Annotation, read_labels
from metaeval.untrusted_json import LoadError

HEADER = "run_id,check,label,annotator,rationale\n"


def good_rows(first: int, count: int) -> str:
    return "".join(f"r{i},*,pass,ann,\n" for i in range(first, first + count))


def read_in_thread(path: Path) -> tuple[list[Annotation], list[LoadError]]:
    """``read_labels`` with a deadline: a reader that waits on a fifo fails the test
    instead of hanging it."""
    out: list[tuple[list[Annotation], list[LoadError]]] = []
    worker = threading.Thread(target=lambda: out.append(read_labels([path])), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), f"reading {path} did not return"
    return out[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no fifos here")
def test_a_fifo_named_as_a_csv_labels_file_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "labels.csv"
    os.mkfifo(fifo)
    rows, errors = read_in_thread(fifo)
    assert rows == []
    assert [(e.path, e.line) for e in errors] == [(str(fifo), 0)]
    assert "a fifo" in errors[0].message and "regular file" in errors[0].message


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_dev_zero_linked_in_as_a_csv_labels_file_is_refused_before_a_byte_is_read(
        tmp_path: Path) -> None:
    link = tmp_path / "labels.csv"
    link.symlink_to("/dev/zero")
    rows, errors = read_in_thread(link)
    assert rows == []
    assert len(errors) == 1 and "character device" in errors[0].message


def test_a_field_past_the_csv_modules_limit_loses_its_row_only(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(HEADER + good_rows(0, 2) + "r9,*,pass,ann," + "x" * 140_000 + "\n"
                    + good_rows(2, 4), encoding="utf-8")
    rows, errors = read_labels([path])
    assert [r.run_id for r in rows] == ["r0", "r1", "r2", "r3", "r4", "r5"]
    assert [(e.path, e.line) for e in errors] == [(str(path), 4)]
    assert "at most 10000" in errors[0].message


def test_a_line_that_is_not_utf8_loses_its_row_only(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_bytes((HEADER + good_rows(0, 1)).encode() + b"r8,*,pass,\xff\xfe,\n"
                     + good_rows(1, 2).encode())
    rows, errors = read_labels([path])
    assert [r.run_id for r in rows] == ["r0", "r1", "r2"]
    assert [(e.line, "not UTF-8" in e.message) for e in errors] == [(3, True)]


def test_a_line_past_the_line_limit_is_one_error_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(HEADER + good_rows(0, 1) + "y" * (3 << 20) + "\n" + good_rows(1, 1),
                    encoding="utf-8")
    rows, errors = read_labels([path])
    assert [r.run_id for r in rows] == ["r0", "r1"]
    assert [e.line for e in errors] == [3]
    assert "more than 1048576 bytes" in errors[0].message


def test_a_bom_and_carriage_returns_still_read(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (HEADER + good_rows(0, 2)).replace("\n", "\r\n").encode()
                     + b'r2,*,fail,ann,"two\r\nlines"\r\n')
    rows, errors = read_labels([path])
    assert errors == []
    assert [(r.run_id, r.rationale) for r in rows] == [("r0", ""), ("r1", ""),
                                                       ("r2", "two\r\nlines")]


def test_more_annotators_than_the_bound_is_an_error_for_each_row_past_it(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    names = [f"a{n}" for n in range(MAX_ANNOTATORS + 2)]
    path.write_text(HEADER + "".join(f"r0,*,pass,{name},\n" for name in names)
                    + "r1,*,fail,a0,\n", encoding="utf-8")
    rows, errors = read_labels([path])
    assert len({r.annotator for r in rows}) == MAX_ANNOTATORS
    assert rows[-1].run_id == "r1"  # a known annotator's later row is still read
    assert [(e.line, e.field) for e in errors] == [(MAX_ANNOTATORS + 2, "annotator"),
                                                   (MAX_ANNOTATORS + 3, "annotator")]
    assert f"'a{MAX_ANNOTATORS}'" in errors[0].message
    assert f"at most {MAX_ANNOTATORS} annotators" in errors[0].message


def crowd(annotators: int, runs: int) -> list[Annotation]:
    """Each annotator's label of each run, a fixed pattern that varies by both."""
    return [Annotation(f"r{r}", "*", Outcome.FAIL if (a * 7 + r * 3) % 5 < 2 else Outcome.PASS,
                       f"a{a:04d}", "", "f:1") for a in range(annotators) for r in range(runs)]


def test_the_mean_kappa_of_many_annotators_equals_scikit_learn_pair_by_pair() -> None:
    rows = crowd(30, 6)
    measured = agreement("*", rows)
    per: dict[str, dict[str, str]] = {}
    for row in rows:
        per.setdefault(row.annotator, {})[row.run_id] = row.label.value
    pairs = []
    for x, y in itertools.combinations(sorted(per), 2):
        runs = sorted(per[x])
        first, second = [per[x][r] for r in runs], [per[y][r] for r in runs]
        if len(set(first)) > 1 and len(set(second)) > 1:
            pairs.append(cohen_kappa_score(first, second))
    assert measured.pairs == len(pairs) > 100
    assert measured.mean_kappa.value == pytest.approx(sum(pairs) / len(pairs))


def test_scikit_learn_is_asked_once_per_distinct_pair_table_not_once_per_pair(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = nominal_kappa

    def counted(first: list[str], second: list[str]) -> object:
        calls.append(1)
        return real(first, second)

    monkeypatch.setattr(label_agreement, "nominal_kappa", counted)
    measured = agreement("*", crowd(MAX_ANNOTATORS, 4))
    assert measured.annotators == MAX_ANNOTATORS
    assert measured.pairs > 0
    # 499,500 pairs share 4 runs each; a pass/fail table of 4 runs has 4 cells,
    # so there are at most C(4 + 3, 3) = 35 distinct tables
    assert 0 < len(calls) <= 35
