"""Judge items' labels kept in a labels file: joined to the items as annotators, the
consensus for an item with no label of its own, every bad row named; and judge-audit
--labels reading them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.loaders.item_labels import join_item_labels, read_item_labels
from metaeval.loaders.judge_items import load_judge_items


def write(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def items_file(tmp_path: Path) -> Path:
    return write(tmp_path / "items.ndjson", [
        *({"id": f"p{i}", "prompt": f"q{i}", "response_a": "x", "response_b": "y",
           "label": None} for i in range(3)),
        {"id": "own", "prompt": "q", "response_a": "x", "response_b": "y", "label": "b"},
        {"id": "pt", "prompt": "q", "response": "r", "label": None}])


def test_rows_join_as_annotators_and_an_unlabelled_item_takes_their_consensus(
        tmp_path: Path) -> None:
    items = load_judge_items([items_file(tmp_path)])
    labels = write(tmp_path / "l.jsonl", [
        {"item_id": "p0", "label": "a", "annotator": "ann", "shown": "ba"},
        {"item_id": "p0", "label": "a", "annotator": "bo", "shown": "ab"},
        {"item_id": "p1", "label": "a", "annotator": "ann"},
        {"item_id": "p1", "label": "b", "annotator": "bo"},
        {"item_id": "p2", "label": "unsure", "annotator": "ann"},
        {"item_id": "own", "label": "a", "annotator": "ann"},
        {"item_id": "pt", "label": 4, "annotator": "ann"},
        {"run_id": "r1", "check": "*", "label": "pass", "annotator": "ann"}])
    rows, errors = read_item_labels([labels])
    assert not errors and len(rows) == 7
    joined, errors = join_item_labels(items, rows)
    assert not errors
    pairs = {i.id: i for i in joined.pairwise}
    assert pairs["p0"].label == "a" and len(pairs["p0"].annotations) == 2
    assert pairs["p1"].label == "" and not pairs["p1"].consensus  # a tie: no guess
    assert pairs["p2"].label is None and not pairs["p2"].annotations  # unsure: no label
    assert pairs["own"].label == "b"  # its own label stays
    (point,) = joined.pointwise
    assert (point.verdict, point.score) == (None, 4)


def test_a_bad_row_is_named_and_left_out(tmp_path: Path) -> None:
    items = load_judge_items([items_file(tmp_path)])
    labels = write(tmp_path / "l.jsonl", [
        {"item_id": "p0", "label": "pass", "annotator": "ann"},
        {"item_id": "p9", "label": "a", "annotator": "ann"},
        {"item_id": "p1", "label": "a", "annotator": "ann"},
        {"item_id": "p1", "label": "b", "annotator": "ann"},
        {"item_id": "pt", "label": "pass", "annotator": "ann", "shown": "ab"},
        {"item_id": "p2", "label": "a", "annotator": "ann", "shown": "left"},
        {"item_id": "p2", "label": True, "annotator": "bo"},
        {"item_id": "p2", "label": "a", "annotator": "bo", "side": "ab"}])
    rows, read_errors = read_item_labels([labels])
    joined, errors = join_item_labels(items, rows)
    assert [str(e).split(": ", 1)[1].split(";")[0] for e in [*read_errors, *errors]] == [
        "shown: got 'left'", "label: got True", "side: unknown column",
        "label: got 'pass' for item 'p0'", "item_id: got 'p9'",
        "annotator: 'ann' already labelled item 'p1' (at " + f"{labels}:3)",
        "shown: got 'ab' for the pointwise item 'pt'"]
    assert [e.line for e in errors] == [1, 2, 4, 5]
    assert {i.id: len(i.annotations) for i in joined.pairwise}["p1"] == 1


def test_judge_audit_reads_the_labels_file(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    items_file(tmp_path)
    rows = [{"item_id": f"p{i}", "label": label, "annotator": who}
            for i in range(3) for who, label in (("ann", "a"), ("bo", "a" if i else "b"))]
    write(tmp_path / "l.jsonl", rows)
    args = ["judge-audit", "--judge", "steady", "--items", "items.ndjson", "--no-cache",
            "--probes", "files", "--format", "json"]
    without = CliRunner().invoke(main, args, catch_exceptions=False)
    with_labels = CliRunner().invoke(main, [*args, "--labels", "l.jsonl"],
                                     catch_exceptions=False)
    assert with_labels.exit_code in (0, 1), with_labels.output
    assert json.loads(without.output)["annotators"] == []
    (pairwise,) = json.loads(with_labels.output)["annotators"]
    agreement = pairwise["agreement"]
    assert agreement["annotators"] == [{"annotator": "ann", "items": 3},
                                       {"annotator": "bo", "items": 3}]
    assert agreement["no_consensus"] == 1


def test_judge_audit_with_a_bad_labels_row_exits_2_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    items_file(tmp_path)
    write(tmp_path / "l.jsonl", [{"item_id": "p0", "label": "maybe", "annotator": "ann"}])
    result = CliRunner().invoke(main, ["judge-audit", "--judge", "steady", "--items",
                                       "items.ndjson", "--no-cache", "--probes", "files",
                                       "--labels", "l.jsonl"], catch_exceptions=False)
    assert result.exit_code == 2
    assert "l.jsonl:1: label: got 'maybe' for item 'p0'" in result.output
