"""Near misses first: runs whose graders disagree with each other or with a label,
items whose recorded judge disagrees with the labels or with itself; the rest keep
their order, and a run where all agree is not a near miss."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from metaeval.config import load_config
from metaeval.contract import JsonObject
from metaeval.label.queue import BLIND_NEAR_MISS, item_entry, ordered, sides
from metaeval.label.session import load_entries
from metaeval.label.store import LabelStore
from metaeval.loaders.judge_items import load_judge_items
from tests.audit.airline import airline_run
from tests.builders import config_project
from tests.label.conftest import pair, write_lines


def two_checks(task: int, *, bad: bool, label: str | None = None) -> JsonObject:
    run: Any = airline_run(task, 0, bad=bad, checks=True, label=label)
    run["task"]["checks"].append({"grader": "tool_called", "tool": "get_reservation_details"})
    return dict(run)


def test_runs_where_graders_disagree_or_a_label_differs_come_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config_project(tmp_path)
    runs = write_lines(tmp_path / "runs.jsonl", [
        two_checks(0, bad=False),               # both pass: agreed
        two_checks(1, bad=True),                # the lookup passes, the guard fails
        two_checks(2, bad=False, label="fail"),  # both pass; the line's label says fail
        two_checks(3, bad=False),               # both pass, but the labels file says fail
        two_checks(4, bad=False, label="pass")])  # agreed with its label
    (tmp_path / "labels.jsonl").write_text(
        '{"run_id": "t03-trial0", "check": "no_tool_called", "label": "fail", '
        '"annotator": "bo"}\n')
    entries = load_entries([runs], "ann", LabelStore(tmp_path / "labels.jsonl"), load_config())
    # Near misses first; within each group, ann's own order (a hash of her name and the id).
    assert [(e.id, bool(e.near_miss)) for e in entries] == [
        *((run_id, True) for run_id in drawn("ann", "run", ["t01-trial0", "t02-trial0",
                                                             "t03-trial0"])),
        *((run_id, False) for run_id in drawn("ann", "run", ["t00-trial0", "t04-trial0"]))]
    reasons = {e.id: e.near_miss for e in entries}
    assert reasons["t01-trial0"].startswith("the graders disagree")
    assert reasons["t02-trial0"] == "the evaluator found pass; an existing label differs"
    assert reasons["t03-trial0"] == "no_tool_called found pass; an existing label differs"
    run = next(e for e in entries if e.id == "t01-trial0")
    events: Any = run.data["events"]
    assert events[2]["tool"] == "update_reservation_passengers"  # results fold into calls


def test_items_where_the_recorded_judge_disagrees_come_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config_project(tmp_path)
    labelled: list[JsonObject] = [{**pair(i), "label": "a"} for i in range(4)]
    items = write_lines(tmp_path / "items.ndjson", labelled)
    recorded = write_lines(tmp_path / "judge.jsonl", [
        {"id": "pair-0", "order": "ab", "sample": 0, "verdict": "a"},
        {"id": "pair-0", "order": "ba", "sample": 0, "verdict": "a"},   # agrees, both orders
        {"id": "pair-1", "order": "ab", "sample": 0, "verdict": "a"},
        {"id": "pair-1", "order": "ba", "sample": 0, "verdict": "b"},   # flips with the order
        {"id": "pair-2", "order": "ab", "sample": 0, "verdict": "b"}])  # against the label
    entries = load_entries([items], "ann", LabelStore(tmp_path / "l.jsonl"), load_config(),
                           recorded)
    reasons = {"pair-1": "the judge changed its verdict between the two orders",
               "pair-2": "the judge said b; an existing label differs"}
    assert [(e.id, e.near_miss) for e in entries] == [
        *((i, reasons[i]) for i in drawn("ann", "pair", ["pair-1", "pair-2"])),
        *((i, "") for i in drawn("ann", "pair", ["pair-0", "pair-3"]))]
    # The page is blind: it says why an entry comes first, never what the judge said.
    blind = [str(e.json()["near_miss"]) for e in entries[:2]]
    assert blind == [BLIND_NEAR_MISS["pair"]] * 2 and all("said" not in b for b in blind)
    assert entries[0].json(blind=False)["near_miss"] == entries[0].near_miss


def drawn(annotator: str, kind: str, ids: list[str]) -> list[str]:
    """The order the page draws for ``annotator``, computed here on its own."""
    return sorted(ids, key=lambda i: hashlib.sha256(f"{annotator}\0{kind}\0{i}".encode())
                  .hexdigest())


def test_the_entries_order_is_drawn_per_annotator_and_kept(tmp_path: Path) -> None:
    items = load_judge_items([write_lines(tmp_path / "i.ndjson",
                                          [pair(i) for i in range(20)])])
    entries = [item_entry(i, "ann", {}) for i in items.pairwise]
    ann = [e.id for e in ordered(entries, "ann")]
    assert ann == [e.id for e in ordered(reversed(entries), "ann")]  # not the files' order
    assert ann != [e.id for e in entries]
    assert [e.id for e in ordered(entries, "bo")] != ann  # another annotator, another order


def test_a_pairs_sides_are_drawn_per_annotator_and_kept(tmp_path: Path) -> None:
    items = load_judge_items([write_lines(tmp_path / "i.ndjson",
                                          [pair(i) for i in range(40)])])
    ann = [item_entry(i, "ann", {}).shown for i in items.pairwise]
    assert ann == [item_entry(i, "ann", {}).shown for i in items.pairwise]  # every restart
    assert 10 < ann.count("ab") < 30  # both sides, about half each
    bo = [sides("bo", i.id) for i in items.pairwise]
    assert bo != ann  # another annotator, another draw
    for item, shown in zip(items.pairwise, ann, strict=True):
        entry = item_entry(item, "ann", {})
        left = item.response_a if shown == "ab" else item.response_b
        assert entry.data["left"] == left


def test_a_bad_line_stops_the_session_before_it_serves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from metaeval.errors import InputError

    monkeypatch.chdir(tmp_path)
    config_project(tmp_path)
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(two_checks(0, bad=False)) + "\n{\"id\": 3}\n")
    with pytest.raises(InputError, match=r"runs\.jsonl:2: "):
        load_entries([runs], "ann", LabelStore(tmp_path / "l.jsonl"), load_config())
