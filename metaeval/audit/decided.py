"""The judge's decision on each verdict slot, made once from its samples, and what a
measure reads off one decision (pass/fail, a score on the label scale, a pair label).

Every measure of an audit (agreement, the annotators' panels, the categorical
items, the breakdown) reads the same ``Decided`` value, built once by the audit from
the verdict table, instead of asking the table slot by slot. This module sits
below the measures and the table alike: it must never read a label, nor drop an
unscored decision (it is a ``None``, and a slot with no sample reads as one).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from metaeval.contract import Outcome
from metaeval.judges.base import DEFAULT_SCALE, Scale
from metaeval.loaders.judge_items import JudgeItems, Order, PairItem, PointItem, Slot, Variant

__all__ = ["Decided", "Decision", "Reading", "Readings", "aggregate", "decide", "number",
           "ordinal", "outcome", "pair_label", "read_points", "unscored_verdicts",
           "verdicts_said"]

Decision = float | bool | str | None
"""A pointwise score or pass/fail, a pair label ``a``/``b``/``tie``, or None: unscored."""


def aggregate(samples: Sequence[Decision]) -> Decision:
    """One decision from K samples: unscored when half or more are unscored or there
    are none; else the median of scores, or the majority of pass/fail or labels
    (an even split is unscored: the judge did not decide)."""
    if len(samples) == 1:  # the common case, and a median or majority of one is itself
        return samples[0]
    scored = [s for s in samples if s is not None]
    if not scored or (len(samples) - len(scored)) * 2 >= len(samples):
        return None
    if all(isinstance(s, float) for s in scored):
        return float(statistics.median(s for s in scored if isinstance(s, float)))
    counts = Counter(scored).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


class Decided(dict[Slot, Decision]):
    """Each slot's decision (``aggregate`` of its samples). A slot the table has no
    sample for reads as None, as ``VerdictTable.decided`` says; ``slot in decided``
    tells the two apart (recorded or not)."""

    def __missing__(self, slot: Slot) -> Decision:
        return None


def decide(decisions: Mapping[Slot, Sequence[Decision]]) -> Decided:
    """The decision of every slot of a verdict table's ``decisions``."""
    return Decided({slot: aggregate(samples) for slot, samples in decisions.items()})


def outcome(decision: Decision, scale: Scale) -> Outcome:
    """A pointwise decision as pass, fail or unscored."""
    if decision is None or isinstance(decision, str):
        return Outcome.UNSCORED
    return Outcome.PASS if scale.passes(decision) else Outcome.FAIL


def ordinal(decision: Decision, scale: Scale, labels: Scale = DEFAULT_SCALE) -> int | None:
    """A pointwise score on the human label scale (rescaled when the judge's differs)."""
    if decision is None or isinstance(decision, bool | str):
        return None
    share = (decision - scale.low) / (scale.high - scale.low)
    return labels.low + round(share * (labels.high - labels.low))


def number(decision: Decision) -> float | None:
    """A pointwise score as a number; None when unscored, pass/fail or a label."""
    if decision is None or isinstance(decision, bool | str):
        return None
    return float(decision)


def pair_label(decision: Decision) -> str | None:
    """A pairwise decision's label; None when unscored."""
    return decision if isinstance(decision, str) else None


UNSCORED = "unscored"


def verdicts_said(item: PointItem | PairItem, decisions: Mapping[Slot, Sequence[Decision]],
                  scale: Scale) -> tuple[str, ...]:
    """Every sample of the judge's verdict on ``item`` (``decisions``: a verdict table's,
    sample by sample), in every order shown, as a person reads it: pass or fail on
    ``scale``, a pair label, or ``unscored``."""
    found: list[str] = []
    for order in Order:
        for sample in decisions.get(Slot(item.id, Variant.ORIGINAL, order), ()):
            if isinstance(item, PointItem):
                found.append(outcome(sample, scale).value)
            else:
                found.append(sample if isinstance(sample, str) else UNSCORED)
    return tuple(found)


def unscored_verdicts(decided: Decided, items: JudgeItems) -> tuple[int, int]:
    """Unscored verdicts and all verdicts on labelled items (pairs count per order)."""
    decisions = [decided[Slot(i.id)] for i in items.pointwise]
    # Only the orders that exist: an order never recorded is not an unscored verdict.
    decisions += [decided[Slot(p.id, Variant.ORIGINAL, o)] for p in items.pairwise for o in Order
                  if Slot(p.id, Variant.ORIGINAL, o) in decided]
    return sum(d is None for d in decisions), len(decisions)


@dataclass(frozen=True, slots=True)
class Reading:
    """One pointwise item's decision as the measures read it: pass, fail or unscored
    on the judge's scale, the score on the people's label scale and as a number
    (None when there is none), and whether the judge answered pass/fail."""

    outcome: Outcome
    ordinal: int | None
    number: float | None
    pass_fail: bool


UNREAD = Reading(Outcome.UNSCORED, None, None, False)
"""The reading of an item with no decision: unscored."""


class Readings(dict[str, Reading]):
    """Each pointwise item's ``Reading``, by item id; an item the table holds no
    verdict for reads as ``UNREAD`` (unscored)."""

    def __missing__(self, item: str) -> Reading:
        return UNREAD


def read_points(decided: Decided, scale: Scale, labels: Scale = DEFAULT_SCALE) -> Readings:
    """Every pointwise decision (the original text, shown once) read once, on the
    judge's ``scale`` and the people's ``labels``, for every measure that needs it."""
    return Readings({slot.item: Reading(outcome(d, scale), ordinal(d, scale, labels),
                                        number(d), isinstance(d, bool))
                     for slot, d in decided.items()
                     if slot.variant is Variant.ORIGINAL and slot.order is Order.AB
                     and not isinstance(d, str)})
