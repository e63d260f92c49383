"""The labels file of a session: whole on disk after every label, never two rows for
one annotator's label, and refused (not silently trimmed) when a row is bad."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from metaeval.contract import JsonObject
from metaeval.errors import InputError
from metaeval.label.merge import merge
from metaeval.label.store import ITEM, RUN, Key, LabelStore, ServedElsewhere
from metaeval.loaders.labels_files import read_labels
from metaeval.untrusted_json import LoadError


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_label_and_each_change_of_it_are_appended_and_the_last_counts(
        tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    with LabelStore(path) as store:
        first: JsonObject = {"run_id": "r1", "check": "*", "label": "pass", "annotator": "ann"}
        store.put(first)
        store.put({"item_id": "p1", "label": "a", "annotator": "ann", "shown": "ba"})
        inode = path.stat().st_ino
        store.put({"run_id": "r1", "check": "*", "label": "fail", "annotator": "ann",
                   "rationale": "wrong order"})
        store.put({"run_id": "r1", "check": "*", "label": "fail", "annotator": "ann",
                   "rationale": "wrong order"})  # the same again: nothing to append
    assert path.stat().st_ino == inode  # appended to, never replaced
    written = lines(path)
    assert [{k: v for k, v in row.items() if k != "at"} for row in written] == [
        first, {"item_id": "p1", "label": "a", "annotator": "ann", "shown": "ba"},
        {"run_id": "r1", "check": "*", "label": "fail", "annotator": "ann",
         "rationale": "wrong order", "was": "pass"}]
    assert all(str(row["at"]).endswith("Z") for row in written)
    # meta-eval's reader applies the same rule: the last label counts.
    annotations, errors = read_labels([path])
    assert not errors
    assert [(a.label.value, a.was) for a in annotations] == [
        ("pass", None), ("fail", "pass")]
    with LabelStore(path) as reopened:
        assert reopened.get(Key(RUN, "r1", "*", "ann")) == written[2]
        assert reopened.get(Key(ITEM, "p1", "", "ann")) == written[1]
        assert reopened.get(Key(ITEM, "p1", "", "bo")) is None


def test_a_change_must_name_the_label_in_force(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    write = '{"run_id": "r1", "check": "*", "label": %s, "annotator": "ann"%s}\n'
    path.write_text(write % ('"pass"', "") + write % ('"fail"', ', "was": "fail"')
                    + write % ('"fail"', ', "was": "pass"')
                    + '{"item_id": "i1", "label": "b", "annotator": "ann", "was": "a"}\n')
    with pytest.raises(InputError) as raised:
        LabelStore(path)
    message = str(raised.value).splitlines()
    assert message == [
        f"{path}:2: was: got 'fail'; expected 'pass', the label of run 'r1' check '*' in "
        f"force at {path}:1",
        f"{path}:4: was: got 'a', a change of item 'i1'; expected a first label (no 'was'): "
        "'ann' has no earlier label of it"]
    # Line 3 was a good change: without the two bad lines the file opens at its label.
    path.write_text(write % ('"pass"', "") + write % ('"fail"', ', "was": "pass"'))
    with LabelStore(path) as store:
        assert store.get(Key(RUN, "r1", "*", "ann"))["label"] == "fail"  # type: ignore[index]


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
    assert path.read_bytes() == b""


def test_a_torn_last_line_is_cut_and_said_and_a_line_without_its_newline_is_completed(
        tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"run_id": "r1", "check": "*", "label": "pass", "annotator": "ann"}')
    with LabelStore(path) as store:
        assert store.torn is None
        store.put({"run_id": "r2", "check": "*", "label": "pass", "annotator": "ann"})
    assert [row["run_id"] for row in lines(path)] == ["r1", "r2"]
    path.write_text(path.read_text() + '{"run_id": "r3", "che')
    # A reader names the torn line and reads the rest.
    torn: list[LoadError] = []
    annotations, errors = read_labels([path], torn=torn)
    assert not errors and [a.run_id for a in annotations] == ["r1", "r2"]
    assert [str(t) for t in torn] == [
        f"{path}:3: a torn last line (21 bytes with no newline at the end, not valid JSON: a "
        "write that never finished): left out; it began '{\"run_id\": \"r3\", \"che'"]
    with LabelStore(path) as store:
        assert store.torn == str(torn[0])
        store.put({"run_id": "r3", "check": "*", "label": "fail", "annotator": "ann"})
    assert [row["run_id"] for row in lines(path)] == ["r1", "r2", "r3"]
    # A bad line in the middle is still an error: only a last line can be torn.
    path.write_text('{"run_id": "r1", "che\n' + path.read_text())
    with pytest.raises(InputError, match=r"labels\.jsonl:1"):
        LabelStore(path)


def test_a_second_store_on_one_file_is_refused_naming_the_first_servers_port(
        tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    with LabelStore(path) as first:
        first.serving(8123)
        with pytest.raises(ServedElsewhere) as raised:
            LabelStore(path)
        assert str(raised.value) == (
            f"{path}: another metaeval label is serving this labels file (pid {os.getpid()}, "
            "port 8123: http://127.0.0.1:8123/ with the token it printed); label there, or "
            "stop it first: two servers on one file would lose each other's labels")
        # --merge may not replace a file a server holds either.
        other = tmp_path / "other.jsonl"
        other.write_text('{"run_id": "r1", "check": "*", "label": "pass", "annotator": "bo"}\n')
        with pytest.raises(ServedElsewhere):
            merge([other, other], path)
    with LabelStore(path):  # closed: the next one opens
        pass


def test_a_labels_file_in_a_missing_folder_is_refused_before_serving(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot create the lock file beside it"):
        LabelStore(tmp_path / "no-such-folder" / "labels.jsonl")
