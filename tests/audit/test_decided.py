"""The decisions every measure reads, made once from a verdict table's samples."""

from __future__ import annotations

from metaeval.audit.decided import (
    Reading,
    decide,
    number,
    ordinal,
    outcome,
    pair_label,
    read_points,
)
from metaeval.contract import Outcome
from metaeval.judges.base import Scale
from metaeval.loaders.judge_items import Order, Slot, Variant


def test_each_slot_is_decided_from_its_samples() -> None:
    decided = decide({Slot("a"): (4.0, 2.0, 5.0), Slot("b", order=Order.BA): ("a", "b"),
                      Slot("c", Variant.PADDED): (True, None, True), Slot("d"): (None,)})
    assert dict(decided) == {Slot("a"): 4.0, Slot("b", order=Order.BA): None,
                             Slot("c", Variant.PADDED): True, Slot("d"): None}


def test_a_slot_with_no_sample_reads_unscored_but_is_not_recorded() -> None:
    decided = decide({Slot("d"): (None,)})
    # Both read None; only one was recorded (unscored), the other never asked.
    assert decided[Slot("d")] is None and decided[Slot("e")] is None
    assert Slot("d") in decided
    assert Slot("e") not in decided
    assert Slot("d", order=Order.BA) not in decided


def test_a_decision_read_as_a_measure_reads_it() -> None:
    scale = Scale(1, 10, 7)
    assert [outcome(d, scale) for d in (7.0, 6.0, True, False, "a", None)] == [
        Outcome.PASS, Outcome.FAIL, Outcome.PASS, Outcome.FAIL, Outcome.UNSCORED,
        Outcome.UNSCORED]
    # 10.0 on 1-10 is the top of 1-5; 1.0 its bottom; pass/fail has no place on it.
    assert [ordinal(d, scale, Scale(1, 5, 4)) for d in (10.0, 1.0, True, None)] == [
        5, 1, None, None]
    assert [number(d) for d in (3.0, True, "tie", None)] == [3.0, None, None, None]
    assert [pair_label(d) for d in ("tie", "b", 2.0, None)] == ["tie", "b", None, None]


def test_each_pointwise_decision_is_read_once_and_a_missing_one_is_unscored() -> None:
    decided = decide({Slot("s"): (10.0,), Slot("p"): (True,), Slot("c"): ("harm",),
                      Slot("s", Variant.PADDED): (1.0,), Slot("q", order=Order.BA): ("a",)})
    readings = read_points(decided, Scale(1, 10, 7), Scale(1, 5, 4))
    assert readings["s"] == Reading(Outcome.PASS, 5, 10.0, False)  # not the padded 1.0
    assert readings["p"] == Reading(Outcome.PASS, None, None, True)
    # A class label, a pair shown b-first and an item never asked: nothing to read.
    for item in ("c", "q", "never"):
        assert readings[item] == Reading(Outcome.UNSCORED, None, None, False)
    assert sorted(readings) == ["p", "s"]
