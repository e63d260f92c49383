"""The labels file of a session: whole on disk after every label, never two rows for
one annotator's label, and refused (not silently trimmed) when a row is bad."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metaeval.contract import JsonObject
from metaeval.errors import InputError
from metaeval.label.store import ITEM, RUN, Key, LabelStore
from metaeval.loaders.labels_files import read_labels


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_new_label_is_appended_and_a_changed_one_replaces_its_row(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    store = LabelStore(path)
    first: JsonObject = {"run_id": "r1", "check": "*", "label": "pass", "annotator": "ann"}
    store.put(first)
    store.put({"item_id": "p1", "label": "a", "annotator": "ann", "shown": "ba"})
    assert len(lines(path)) == 2
    inode = path.stat().st_ino
    store.put({"run_id": "r1", "check": "*", "label": "fail", "annotator": "ann",
               "rationale": "wrong order"})
    assert path.stat().st_ino != inode  # rewritten whole, by rename
    assert lines(path) == [{"run_id": "r1", "check": "*", "label": "fail", "annotator": "ann",
                            "rationale": "wrong order"},
                           {"item_id": "p1", "label": "a", "annotator": "ann", "shown": "ba"}]
    # The readers of meta-eval take the file as it is: one row per annotator and check.
    annotations, errors = read_labels([path])
    assert not errors and [a.label.value for a in annotations] == ["fail"]
    reopened = LabelStore(path)
    assert reopened.get(Key(RUN, "r1", "*", "ann")) == lines(path)[0]
    assert reopened.get(Key(ITEM, "p1", "", "ann")) == lines(path)[1]
    assert reopened.get(Key(ITEM, "p1", "", "bo")) is None


def test_a_bad_or_repeated_row_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"run_id": "r1", "check": "*", "label": "pass", "annotator": "ann"}\n'
        '{"run_id": "r1", "check": "*", "label": "fail", "annotator": "ann"}\n'
        '{"item_id": "p1", "label": "a", "annotator": "ann", "shown": "sideways"}\n'
        '{"run_id": "r2", "check": "*", "label": "maybe", "annotator": "ann"}\n'
        "not json\n")
    with pytest.raises(InputError) as raised:
        LabelStore(path)
    message = str(raised.value).splitlines()
    assert [m.split(": ")[0] for m in message] == [f"{path}:{n}" for n in (2, 3, 4, 5)]
    assert "'ann' already labelled run 'r1' check '*' (at" in message[0]
    assert "shown: got 'sideways'" in message[1]
    assert "label: got 'maybe'" in message[2]


def test_a_bad_label_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    store = LabelStore(path)
    with pytest.raises(InputError):
        store.put({"run_id": "r1", "check": "*", "label": "maybe", "annotator": "ann"})
    assert not path.exists()


def test_a_torn_last_line_is_refused_and_a_line_without_its_newline_is_completed(
        tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"run_id": "r1", "check": "*", "label": "pass", "annotator": "ann"}')
    store = LabelStore(path)
    store.put({"run_id": "r2", "check": "*", "label": "pass", "annotator": "ann"})
    assert [row["run_id"] for row in lines(path)] == ["r1", "r2"]
    path.write_text(path.read_text() + '{"run_id": "r3", "che')
    with pytest.raises(InputError, match=r"labels\.jsonl:3"):
        LabelStore(path)
