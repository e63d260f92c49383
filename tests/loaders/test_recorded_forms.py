"""The positional form of recorded pairwise verdicts, a preference's strength, and
unlabelled items (a judge log as published carries no human label)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from metaeval.audit.collect import recorded_table
from metaeval.audit.judge_decision import AuditSource, audit_judge
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity, Mode
from metaeval.loaders.judge_items import load_judge_items
from metaeval.loaders.recorded_verdicts import load_recorded


def _write(path: Path, records: Sequence[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_position_is_mapped_through_the_order_shown(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [
        {"id": "w", "order": "ab", "position": "first"},
        {"id": "w", "order": "ba", "position": "first"},
        {"id": "x", "order": "ab", "position": "second", "strength": "strong"},
        {"id": "x", "order": "ba", "position": "second", "strength": "slight"},
        {"id": "y", "order": "ba", "position": "tie"},
        {"id": "z", "order": "ba", "position": None},
    ])
    records, errors = load_recorded(path, kinds={k: Mode.PAIRWISE for k in "wxyz"})
    assert errors == ()
    # Shown first in "ba" is response_b: the item's "b", by metaeval, not by hand.
    assert [(r.id, r.order.value, r.verdict, r.strength) for r in records] == [
        ("w", "ab", "a", None), ("w", "ba", "b", None), ("x", "ab", "b", "strong"),
        ("x", "ba", "a", "slight"), ("y", "ba", "tie", None), ("z", "ba", None, None)]


def test_the_two_conventions_never_mix_and_a_position_needs_its_order(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [
        {"id": "w", "order": "ba", "position": "first", "verdict": "a"},
        {"id": "w", "position": "first"},
        {"id": "w", "order": "ab", "position": "A"},
        {"id": "p", "order": "ab", "position": "first"},
        {"id": "w", "order": "ab", "position": "tie", "strength": "strong"},
        {"id": "w", "order": "ab", "verdict": "a", "strength": "huge"},
        {"id": "w", "order": "ba", "verdict": "b", "strength": "slight"},
    ])
    records, errors = load_recorded(path, kinds={"w": Mode.PAIRWISE, "p": Mode.POINTWISE})
    assert [(r.id, r.verdict, r.strength) for r in records] == [("w", "b", "slight")]
    assert [(e.line, e.field) for e in errors] == [
        (1, "position"), (2, "order"), (3, "position"), (4, "position"), (5, "strength"),
        (6, "strength")]
    assert "'verdict' names the item's response" in errors[0].message
    assert "got 'A'; expected 'first', 'second', 'tie' or null" in errors[2].message
    assert "pointwise item" in errors[3].message


def test_a_missing_label_is_an_error_and_null_an_unlabelled_item(tmp_path: Path) -> None:
    path = _write(tmp_path / "items.ndjson", [
        {"id": "w", "prompt": "q", "response_a": "x", "response_b": "y", "label": None},
        {"id": "p", "prompt": "q", "response": "r", "label": None},
        {"id": "m", "prompt": "q", "response_a": "x", "response_b": "y"},
        {"id": "n", "prompt": "q", "response": "r"},
    ])
    items = load_judge_items([path])
    assert [(p.id, p.label) for p in items.pairwise] == [("w", None)]
    assert [(p.id, p.labelled) for p in items.pointwise] == [("p", False)]
    assert [(e.line, e.field) for e in items.errors] == [(3, "label"), (4, "label")]


def test_unlabelled_pairs_are_probed_for_position_but_never_scored_against_people(
        tmp_path: Path) -> None:
    pairs = [{"id": f"u{i}", "prompt": "q", "response_a": "x", "response_b": "y",
              "label": None} for i in range(4)]
    pairs.append({"id": "l", "prompt": "q", "response_a": "x", "response_b": "y",
                  "label": "a"})
    items = load_judge_items([_write(tmp_path / "items.ndjson", pairs)])
    # Always the response shown first: four flips on the unlabelled pairs, one on "l".
    log = [{"id": p["id"], "order": o, "position": "first"} for p in pairs for o in ("ab", "ba")]
    records, errors = load_recorded(_write(tmp_path / "r.jsonl", log))
    assert errors == ()
    audit = audit_judge(JudgeIdentity("log"), DEFAULT_SCALE, items, recorded_table(records),
                        source=AuditSource.RECORDED)
    assert audit.probes.position.first_preferred == 5
    assert audit.pairwise is not None and audit.pairwise.n == 1
    assert [(o.order.value, o.n, o.correct) for o in audit.pairwise.orders] == [
        ("ab", 1, 1), ("ba", 1, 0)]
    unlabelled = audit_judge(JudgeIdentity("log"), DEFAULT_SCALE,
                             load_judge_items([_write(tmp_path / "u.ndjson", pairs[:4])]),
                             recorded_table(records[:8]), source=AuditSource.RECORDED)
    assert unlabelled.pairwise is None
    assert "no human-labelled items: agreement not measured" in unlabelled.reasons
