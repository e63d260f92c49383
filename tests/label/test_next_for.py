"""``metaeval label --next-for AUDIT.json``: an inconclusive audit's unlabelled items in
an order that settles it, on the side the whole source is on, with fewer labels than a
file grouped by the judge's verdict."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import pytest

from metaeval.audit.bars import Bars
from metaeval.audit.collect import VerdictTable, aggregate
from metaeval.audit.controls import Controls
from metaeval.audit.judge_decision import AuditSettings, AuditSource, AuditVerdict, audit_judge
from metaeval.audit.metrics import kappa, kappa_interval
from metaeval.audit.power import Side, side
from metaeval.contract import Outcome
from metaeval.errors import InputError
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity
from metaeval.label.next_for import (
    AGAINST_MAJORITY,
    NOT_NAMED,
    OTHER,
    WAVERS,
    interleaved,
    ordered_for,
    read_open_audit,
)
from metaeval.label.queue import Entry, item_entry
from metaeval.loaders.judge_items import JudgeItems, Order, PointItem, Slot, Variant
from metaeval.report.open_render import open_document


def write(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def open_audit(tmp_path: Path, unlabelled: dict[str, list[str]],
               labels: dict[str, int] | None = None) -> Path:
    return write(tmp_path / "audit.json", {"verdict": "inconclusive", "inconclusive": {
        "more_items": 40, "labels": labels or {"pass": 15, "fail": 5},
        "unlabelled": unlabelled}})


def point(item: str) -> PointItem:
    return PointItem(item, "p", "r", None, None, None, f"items.ndjson:{item}")


# --- the rule ---------------------------------------------------------------------------


def test_the_groups_waver_then_against_the_majority_then_the_rest(tmp_path: Path) -> None:
    audit = read_open_audit(open_audit(tmp_path, {
        "w": ["pass", "fail"], "m": ["fail", "fail"], "o": ["pass"], "u": ["unscored"]}))
    assert audit.majority == "pass" and audit.more == 40
    assert [audit.group(i) for i in ("w", "m", "o", "u", "elsewhere")] == [
        WAVERS, AGAINST_MAJORITY, OTHER, OTHER, NOT_NAMED]
    # an unscored sample beside a verdict is no second opinion
    assert read_open_audit(open_audit(tmp_path, {"x": ["fail", "unscored"]})).group("x") \
        == AGAINST_MAJORITY


def test_a_tie_among_people_has_no_majority_to_go_against(tmp_path: Path) -> None:
    audit = read_open_audit(open_audit(tmp_path, {"m": ["fail"]}, {"pass": 5, "fail": 5}))
    assert audit.majority is None and audit.group("m") == OTHER


def test_every_prefix_keeps_the_groups_in_proportion_and_a_waverer_comes_first() -> None:
    # 3 waverers, 6 against the majority, 21 others: one of each first, then in proportion
    groups = [[item_entry(point(f"{g}{n}"), "ann", {}) for n in range(size)]
              for g, size in (("w", 3), ("m", 6), ("o", 21))]
    order = interleaved(groups)
    assert len(order) == 30 and [e.id[0] for e in order[:3]] == ["w", "m", "o"]
    for k in range(1, 31):
        for g, size in (("w", 3), ("m", 6), ("o", 21)):
            taken = sum(e.id.startswith(g) for e in order[:k])
            assert abs(taken - size * k / 30) <= 2, (k, g)  # within one entry per group


def test_entries_the_audit_does_not_name_come_after(tmp_path: Path) -> None:
    audit = read_open_audit(open_audit(tmp_path, {"b": ["fail"], "c": ["pass"]}))
    entries = [item_entry(point(i), "ann", {}) for i in ("a", "b", "c", "d")]
    order = [e.id for e in ordered_for(entries, "ann", audit)]
    assert set(order[:2]) == {"b", "c"} and set(order[2:]) == {"a", "d"}


# --- the file is data -------------------------------------------------------------------


@pytest.mark.parametrize(("document", "said"), [
    ({"verdict": "may gate", "inconclusive": None}, "verdict: got 'may gate'; expected an "
                                                    "audit with a measure its labels cannot"),
    ([1, 2], "not a judge-audit result"),
    ({"verdict": "inconclusive"}, "verdict: got 'inconclusive'; expected an audit"),
    ({"verdict": "inconclusive", "inconclusive": []}, "inconclusive: got []"),
    ({"verdict": "inconclusive", "inconclusive": {"labels": {"pass": -1}, "unlabelled": {}}},
     "inconclusive.labels.pass: got -1; expected a count"),
    ({"verdict": "inconclusive", "inconclusive": {"labels": {}, "unlabelled": {"x": "pass"}}},
     "inconclusive.unlabelled.'x': got 'pass'; expected a list of verdicts"),
    ({"verdict": "inconclusive", "inconclusive": {"more_items": True, "labels": {},
                                                  "unlabelled": {}}},
     "inconclusive.more_items: got true; expected a count or null"),
])
def test_a_bad_audit_file_is_refused_naming_the_field(tmp_path: Path, document: object,
                                                      said: str) -> None:
    path = write(tmp_path / "audit.json", document)
    with pytest.raises(InputError) as raised:
        read_open_audit(path)
    assert str(path) in str(raised.value) and said in str(raised.value)


def test_an_audit_none_of_whose_items_is_given_is_refused(tmp_path: Path) -> None:
    audit = read_open_audit(open_audit(tmp_path, {"elsewhere": ["pass"]}))
    with pytest.raises(InputError, match="none of its 1 unlabelled item"):
        ordered_for([item_entry(point("a"), "ann", {})], "ann", audit)


# --- it settles the audit, and on the right side ------------------------------------------

BAR = 0.6
START = 20
POOL = 300
STEP = 10
SEEDS = 12
WAVERS_SHARE = 0.1
RIGHT = 0.98


def source(seed: int) -> list[tuple[str, str, tuple[bool, ...]]]:
    """A pool whose judge is above the bar: people pass 3 in 4; on ``WAVERS_SHARE`` of the
    items the judge wavers between its two samples, else it is right ``RIGHT`` of the
    time."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(POOL):
        human = "pass" if rng.random() < 0.75 else "fail"
        if rng.random() < WAVERS_SHARE:
            samples = tuple(bool(rng.random() < 0.5) for _ in range(2))
        else:
            right = rng.random() < RIGHT
            samples = ((human == "pass") == right,) * 2
        rows.append((f"i{i:03d}", human, samples))
    return rows


def decided(rows: list[tuple[str, str, tuple[bool, ...]]]) -> Side:
    human = [Outcome(h) for _, h, _ in rows]
    judged = []
    for _, _, samples in rows:
        verdict = aggregate(samples)
        judged.append(Outcome.UNSCORED if verdict is None else
                      Outcome.PASS if verdict else Outcome.FAIL)
    return side(kappa(human, judged).value, kappa_interval(human, judged, resamples=300), BAR)


def labels_to_decide(start: list[tuple[str, str, tuple[bool, ...]]],
                     order: list[tuple[str, str, tuple[bool, ...]]], truth: Side) -> int:
    """Labels until the interval leaves the bar; a decision on the wrong side of the whole
    pool's is no decision (it counts as labelling everything)."""
    for k in range(STEP, len(order) + 1, STEP):
        found = decided(start + order[:k])
        if found is not Side.OPEN:
            return k if found is truth else len(order)
    return len(order)


def trial(seed: int, tmp_path: Path) -> tuple[int, int] | None:
    rows = source(seed)
    items = tuple(PointItem(i, "p", "r", None, h if n < START else None, None, f"x:{n}")
                  for n, (i, h, _) in enumerate(rows))
    table = VerdictTable({Slot(i, Variant.ORIGINAL, Order.AB): s for i, _, s in rows})
    audit = audit_judge(JudgeIdentity("j", "recorded"), DEFAULT_SCALE, JudgeItems(items),
                        table, source=AuditSource.RECORDED, modes=frozenset(),
                        controls=Controls(()), settings=AuditSettings(Bars(tpr=0, tnr=0)))
    if audit.verdict is not AuditVerdict.INCONCLUSIVE:
        return None
    path = write(tmp_path / f"audit-{seed}.json", {"verdict": audit.verdict.value,
                                                   "inconclusive": open_document(audit.open)})
    entries: list[Entry] = [item_entry(i, "ann", {}) for i in items[START:]]
    by_id = {r[0]: r for r in rows}
    next_for = [by_id[e.id] for e in ordered_for(entries, "ann", read_open_audit(path))]
    # The file as a log sorted by the judge's verdict often is: its passes first.
    grouped = sorted(rows[START:], key=lambda r: not r[2][0])
    human = [Outcome(h) for _, h, _ in rows]
    judged = [Outcome.UNSCORED if aggregate(s) is None else
              Outcome.PASS if aggregate(s) else Outcome.FAIL for _, _, s in rows]
    assert kappa(human, judged).value > BAR  # the planted judge is above the bar
    truth = Side.MET
    return (labels_to_decide(rows[:START], grouped, truth),
            labels_to_decide(rows[:START], next_for, truth))


def test_next_for_decides_with_fewer_labels_than_a_file_grouped_by_the_judge(
        tmp_path: Path) -> None:
    found = [t for t in (trial(seed, tmp_path) for seed in range(SEEDS)) if t is not None]
    in_file = statistics.median(f for f, _ in found)
    next_for = statistics.median(n for _, n in found)
    # Measured: 9 of 12 seeds inconclusive at 20 labels; median labels to the right
    # decision 240 in the grouped file's order (3 of 9 never reach it: they settle as a
    # miss, or not at all in 280), 40 with --next-for. In a file already in random order
    # the median is 30: --next-for is a random order's equal, whatever the file's order.
    assert len(found) >= 8
    assert next_for < in_file, (found, in_file, next_for)
