"""An audit's open decision: the gated measures its labels cannot decide yet, people's
labels so far, and the judge's verdicts on the items nobody has labelled, which
``metaeval label --next-for`` orders by (``metaeval.label.next_for``).

Reads measured values and the verdict table; decides nothing itself (the verdict is
``audit.verdict``'s) and never counts an open measure as met or missed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from metaeval.audit.alt_test import PanelReport
from metaeval.audit.bars import AltSettings, Bars
from metaeval.audit.collect import VerdictTable
from metaeval.audit.decided import verdicts_said
from metaeval.audit.judge_agreement import (
    HumanAgreement,
    PairAgreement,
    PointAgreement,
    computed,
    human_outcome,
)
from metaeval.audit.power import Side, Undecided, more_said, most, side, undecided
from metaeval.judges.base import Scale
from metaeval.loaders.judge_items import JudgeItems, PairItem, PointItem


@dataclass(frozen=True, slots=True)
class OpenTest:
    """A required alternative annotator test that could not run for want of items or
    annotators, and the further labelled items after which it would likely decide."""

    kind: str
    reason: str
    more: int | None

    def said(self) -> str:
        return (f"alternative annotator test ({self.kind}) not run ({self.reason}); "
                "tool.metaeval.judge_audit.require_alt_test is set: "
                f"{more_said(self.more)} would likely decide it (simulated from the "
                "observed duels)")


def open_tests(reports: tuple[PanelReport, ...], settings: AltSettings
               ) -> tuple[OpenTest, ...]:
    """The required tests not run whose further items a simulation could count."""
    return tuple(OpenTest(r.kind, r.alt.reason, r.alt.more) for r in reports
                 if settings.required and not r.alt.ran and r.alt.more is not None)


@dataclass(frozen=True, slots=True)
class OpenDecision:
    """What an inconclusive audit still needs, and what could settle it."""

    measures: tuple[Undecided, ...]
    tests: tuple[OpenTest, ...]
    labels: tuple[tuple[str, int], ...]
    """People's labels on the measured items so far: label, count (most first)."""
    unlabelled: tuple[tuple[str, tuple[str, ...]], ...]
    """Each item nobody labelled (or with no consensus yet), in file order, with the
    judge's verdicts on it: every sample in every order shown (``unscored`` for none)."""

    @property
    def more(self) -> int | None:
        """Further labelled items that would likely decide every open measure and test."""
        counts = [most(self.measures)] if self.measures else []
        counts += [t.more for t in self.tests]
        if not counts or any(c is None for c in counts):
            return None
        return max(c for c in counts if c is not None)


def open_measures(point: PointAgreement | None, bars: Bars,
                  pair: PairAgreement | None = None) -> tuple[Undecided, ...]:
    """The gated measures whose interval contains the bar, each with the further items
    it needs: pointwise kappa, TPR and TNR, and the pairwise kappa of each order. The
    categorical kappa has no interval yet: its bar is read on the estimate, never open."""
    found = []
    for order in pair.orders if pair is not None else ():
        if computed(order.kappa) and side(order.kappa.value, order.kappa_interval,
                                          bars.kappa) is Side.OPEN:
            found.append(undecided(f"pairwise kappa ({order.order.value})", order.kappa.value,
                                   order.kappa_interval, bars.kappa, order.n))
    if point is None:
        return tuple(found)
    n = point.confusion.n
    for name, value, interval, bar in (
            ("kappa", point.kappa, point.kappa_interval, bars.kappa),
            ("TPR", point.tpr, point.tpr_interval, bars.tpr),
            ("TNR", point.tnr, point.tnr_interval, bars.tnr)):
        if computed(value) and side(value.value, interval, bar) is Side.OPEN:
            found.append(undecided(name, value.value, interval, bar, n))
    return tuple(found)


def open_decision(agreement: HumanAgreement, bars: Bars, alt: AltSettings,
                  items: JudgeItems, table: VerdictTable, scale: Scale, labels: Scale
                  ) -> OpenDecision | None:
    """What ``agreement`` over ``items`` leaves open: its gated measures whose interval
    holds the bar, and the required alternative annotator tests not run; with people's
    labels so far and the judge's verdicts on the items nobody has labelled. None when
    nothing is open."""
    tests = open_tests(agreement.panels, alt)
    measures = open_measures(agreement.point, bars, agreement.pair)
    if not measures and not tests:
        return None
    said: Counter[str] = Counter()
    pending: list[tuple[str, tuple[str, ...]]] = []
    every: tuple[PointItem | PairItem, ...] = (*items.pointwise, *items.pairwise)
    for item in every:
        if isinstance(item, PointItem) and item.labelled and item.consensus:
            said[human_outcome(item, labels).value] += 1
        elif isinstance(item, PairItem) and item.label is not None and item.consensus:
            said[item.label] += 1
        else:
            pending.append((item.id, verdicts_said(item, table.decisions, scale)))
    return OpenDecision(measures, tests, tuple(said.most_common()), tuple(pending))
