"""How far a judge agrees with people, and with itself, on human-labelled judge items.

Pointwise: TPR, TNR and Cohen's kappa on pass/fail, with intervals, and
weighted kappa (linear and quadratic) on the 1-5 score. Pairwise: accuracy and
kappa in each order shown, ties counted, and how often both orders agree. Every
rate's denominator is all items: an unscored verdict is never dropped. The
numbers come from ``metaeval.audit.metrics`` (scikit-learn); nothing is
recomputed here. ``human_agreement`` is every way agreement with people is measured
on a set of items (with the declared classes and the several annotators'
panels): the whole audit and each category of ``--by category`` read it alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from metaeval.audit.alt_test import PanelReport, panel_reports
from metaeval.audit.bars import AltSettings
from metaeval.audit.class_agreement import ClassAgreement, class_agreement
from metaeval.audit.collect import VerdictTable
from metaeval.audit.decided import Decided, Readings, pair_label
from metaeval.audit.metrics import (
    NO_CASES,
    NO_HUMAN_FAIL,
    NO_HUMAN_PASS,
    Confusion,
    Interval,
    Value,
    confusion,
    kappa,
    kappa_interval,
    nominal_kappa,
    nominal_kappa_interval,
    tnr,
    tpr,
    weighted_kappa_or_pass_fail,
    wilson_interval,
)
from metaeval.contract import Outcome
from metaeval.judges.base import DEFAULT_SCALE, Scale
from metaeval.loaders.judge_items import Order, PairItem, PointItem, Slot, Variant


@dataclass(frozen=True, slots=True)
class ScoredItem:
    """One labelled item as people and the judge saw it, for the report's figures."""

    id: str
    human: Outcome
    label: int | None
    """People's integer label on the label scale; None when they gave pass/fail only."""
    judged: Outcome
    score: float | None
    """The judge's numeric score on its own scale; None when unscored or pass/fail."""


@dataclass(frozen=True, slots=True)
class PointAgreement:
    """Pass/fail agreement on ``confusion.n`` items; ordinal on ``ordinal_n`` items."""

    confusion: Confusion
    tpr: Value
    tpr_interval: Interval
    tnr: Value
    tnr_interval: Interval
    kappa: Value
    kappa_interval: Interval
    ordinal_n: int
    ordinal_unscored: int
    weighted_linear: Value
    weighted_quadratic: Value
    scale: Scale = DEFAULT_SCALE
    """The judge's scale, the one ``ScoredItem.score`` is on."""
    scored: tuple[ScoredItem, ...] = ()
    """Every item, in order: what people and the judge said (the figures' data)."""
    ordinal_pass_fail: int = 0
    """Of the ``ordinal_n`` items, those the judge answered pass/fail, with no score:
    decided, so not unscored, but with no number to set beside the integer label."""


NOT_ESTIMATED = Interval(-1.0, 1.0, reason="not estimated")
"""Kappa's whole range: an interval nobody estimated claims nothing."""


@dataclass(frozen=True, slots=True)
class OrderAgreement:
    """Pairwise agreement with the responses shown in ``order`` (``ab``: a first)."""

    order: Order
    n: int
    correct: int
    accuracy_interval: Interval
    kappa: Value
    ties: int
    """Items the judge called a tie (right when people did too)."""
    unscored: int
    kappa_interval: Interval = NOT_ESTIMATED
    """The bootstrap interval of ``kappa`` (``nominal_kappa_interval``)."""

    @property
    def accuracy(self) -> float:
        """Correct / all items (unscored ones count as not correct). Range [0, 1]."""
        return self.correct / self.n if self.n else 0.0


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """Each order recorded (one row per order, only those with verdicts), and
    ``consistent``: of the ``both_orders`` items with verdicts in both orders,
    those judged alike in both."""

    n: int
    human_ties: int
    orders: tuple[OrderAgreement, ...]
    consistent: int
    both_orders: int

    @property
    def consistency(self) -> float:
        """Share of the items recorded in both orders judged alike. Range [0, 1]."""
        return self.consistent / self.both_orders if self.both_orders else 0.0


@dataclass(frozen=True, slots=True)
class SelfConsistency:
    """Agreement^K: the share of slots (item and order) where all K samples agree."""

    samples: int
    n: int
    all_agree: int
    reason: str = ""

    @property
    def rate(self) -> float:
        return self.all_agree / self.n if self.n else 0.0


AGGREGATE = "median of scores; majority of pass/fail and pair labels"


def human_outcome(item: PointItem, labels: Scale) -> Outcome:
    """People's pass/fail: the ``label`` when given, else the integer score at or
    above the label scale's pass mark."""
    if item.verdict is not None:
        return Outcome(item.verdict)
    assert item.score is not None  # the loader refuses an item with neither
    return Outcome.PASS if item.score >= labels.pass_at else Outcome.FAIL


NOT_COMPUTED = (NO_CASES, NO_HUMAN_PASS, NO_HUMAN_FAIL, "one label only")
"""Reasons a figure is undefined (not a measured 0): never compared with a bar."""


def computed(v: Value) -> bool:
    """Whether ``v`` was measured; a constant judge's kappa of exactly 0 was."""
    return not v.reason.startswith(NOT_COMPUTED)


def point_agreement(items: tuple[PointItem, ...], readings: Readings,
                    scale: Scale, labels: Scale = DEFAULT_SCALE) -> PointAgreement | None:
    """``readings``: the judge's decisions read on ``scale`` and on ``labels``, the scale
    of people's integer labels and its pass mark. Items whose annotators have no
    consensus label are left out (see ``metaeval.loaders.judge_labels``)."""
    items = tuple(i for i in items if i.consensus)
    if not items:
        return None
    human = [human_outcome(i, labels) for i in items]
    read = [readings[i.id] for i in items]
    scored = [(i.score, r.ordinal) for i, r in zip(items, read, strict=True)
              if i.score is not None]
    judged = [r.outcome for r in read]
    pass_fail = sum(r.pass_fail for i, r in zip(items, read, strict=True) if i.score is not None)
    hs = [h for h, _ in scored if h is not None]
    gs = [g for _, g in scored]
    points = list(range(labels.low, labels.high + 1))
    each = tuple(ScoredItem(i.id, h, i.score, g, r.number)
                 for i, h, g, r in zip(items, human, judged, read, strict=True))
    c = confusion(human, judged)
    return PointAgreement(
        c, tpr(c), wilson_interval(c.tp, c.positives), tnr(c), wilson_interval(c.tn, c.negatives),
        kappa(human, judged), kappa_interval(human, judged),
        len(scored), sum(g is None for g in gs) - pass_fail,
        weighted_kappa_or_pass_fail(hs, gs, "linear", points, pass_fail),
        weighted_kappa_or_pass_fail(hs, gs, "quadratic", points, pass_fail), scale, each, pass_fail)


def pair_agreement(items: tuple[PairItem, ...], decided: Decided) -> PairAgreement | None:
    """Items that people did not label (``"label": null``) or whose annotators have no
    consensus label are left out."""
    items = tuple(i for i in items if i.consensus)
    if not items:
        return None
    orders: list[OrderAgreement] = []
    verdicts: dict[Order, dict[str, str | None]] = {}
    for order in Order:
        present = [i for i in items if Slot(i.id, Variant.ORIGINAL, order) in decided]
        if not present:
            continue  # an order never recorded has no row
        human = [i.label or "" for i in present]  # only labelled items are given
        judged = [pair_label(decided[Slot(i.id, Variant.ORIGINAL, order)]) for i in present]
        verdicts[order] = {i.id: j for i, j in zip(present, judged, strict=True)}
        correct = sum(h == j for h, j in zip(human, judged, strict=True))
        orders.append(OrderAgreement(order, len(present), correct,
                                     wilson_interval(correct, len(present)),
                                     nominal_kappa(human, judged), judged.count("tie"),
                                     judged.count(None),
                                     nominal_kappa_interval(human, judged)))
    ab, ba = verdicts.get(Order.AB, {}), verdicts.get(Order.BA, {})
    both = [i for i in ab if i in ba]
    consistent = sum(ab[i] is not None and ab[i] == ba[i] for i in both)
    return PairAgreement(len(items), sum(i.label == "tie" for i in items), tuple(orders),
                         consistent, len(both))


def self_consistency(table: VerdictTable, ids: set[str]) -> SelfConsistency:
    """Over the original variant of every labelled item, in every order recorded."""
    slots = [(slot, samples) for slot, samples in table.decisions.items()
             if slot.item in ids and slot.variant is Variant.ORIGINAL]
    k = max((len(s) for _, s in slots), default=0)
    if k < 2:
        return SelfConsistency(k, len(slots), 0,
                               "one sample per item: Agreement^K is undefined; ask a live "
                               "judge for K >= 2 with --samples, or record K >= 2 samples")
    agree = sum(len(set(s)) == 1 and s[0] is not None and len(s) == k for _, s in slots)
    return SelfConsistency(k, len(slots), agree)


@dataclass(frozen=True, slots=True)
class Samples:
    """Every sample on labelled items (each order recorded): how many, how many
    unscored, and how many verdict slots have no scored sample at all."""

    total: int
    unscored: int
    none_scored: int


def samples_of(table: VerdictTable, labelled: set[str]) -> Samples:
    """The samples on the original variant of the ``labelled`` items, every order."""
    slots = [s for slot, s in table.decisions.items()
             if slot.item in labelled and slot.variant is Variant.ORIGINAL]
    return Samples(sum(len(s) for s in slots), sum(v is None for s in slots for v in s),
                   sum(all(v is None for v in s) for s in slots))


@dataclass(frozen=True, slots=True)
class HumanAgreement:
    """Agreement with people, every way a set of items measures it: pass/fail and
    scores, pairs, several annotators' panels, declared classes."""

    point: PointAgreement | None
    pair: PairAgreement | None
    panels: tuple[PanelReport, ...]
    categorical: ClassAgreement | None


def human_agreement(pointwise: Sequence[PointItem], pairwise: Sequence[PairItem],
                    decided: Decided, readings: Readings, scale: Scale, labels: Scale,
                    alt: AltSettings, classes: tuple[str, ...] = ()) -> HumanAgreement:
    """The judge's decisions (``decided``, and ``readings`` on ``scale`` and on
    ``labels``) against people's on these items. An unlabelled item ("label": null,
    a log as published) is left out of each measure; its verdicts are still the
    probes' to read."""
    return HumanAgreement(point_agreement(tuple(pointwise), readings, scale, labels),
                          pair_agreement(tuple(pairwise), decided),
                          panel_reports(pointwise, pairwise, decided, readings, labels, alt,
                                        classes),
                          class_agreement(pointwise, decided, classes))
