"""The verdict of an audit and every reason for it, read off what was measured.

"May gate" only when every bar is met, no probe found a bias and the controls
behaved; "void" when a control misbehaved or most calls to the judge failed (the
numbers prove nothing); "report only" for any other reason; "inconclusive" when
nothing else stands in the way but a gated measure these labels cannot decide.
This module decides and measures nothing itself: it must never let a void audit or
a missing measurement read as a pass.
"""

from __future__ import annotations

from enum import Enum

from metaeval.audit.alt_test import PanelReport
from metaeval.audit.bars import AltSettings, AuditSettings, Bars
from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.class_agreement import ClassAgreement
from metaeval.audit.collect import Calls
from metaeval.audit.controls import Controls, Probes
from metaeval.audit.judge_agreement import (
    HumanAgreement,
    PairAgreement,
    PointAgreement,
    computed,
)
from metaeval.audit.power import Side, side
from metaeval.audit.probes import PROBES, Required
from metaeval.audit.undecided import OpenDecision
from metaeval.decimals import fixed
from metaeval.judges.base import Mode

__all__ = ["FAILED_CALLS_VOID", "SHOWN_FAILURES", "AuditVerdict", "alt_reasons",
           "class_reasons", "failed_calls", "verdict_of"]


class AuditVerdict(Enum):
    """What the audit allows."""

    MAY_GATE = "may gate"
    """Every bar met, no bias found, controls behaved: the judge may gate a release."""
    REPORT_ONLY = "report only"
    """Some bar missed or some bias found: its numbers may be shown, never gate."""
    VOID = "void"
    """A control misbehaved (the detector is broken), or most calls to the judge
    failed (its numbers are the failures'): the audit proves nothing."""
    INCONCLUSIVE = "inconclusive"
    """No bar clearly missed and no bias found, but the interval of a gated measure
    contains its bar: these labels cannot decide; ``JudgeAudit.open`` says how many
    more would likely decide it (``metaeval.audit.power``)."""


FAILED_CALLS_VOID = 0.5
"""A live audit where more than this share of the questions put to the judge failed
(the server down, refused, timing out, erroring) is void: its zeros are those of
the failures, not the judge's. A few failed calls are unscored verdicts, weighed by
the unscored bar."""

SHOWN_FAILURES = 3
"""How many distinct failure reasons a void audit names."""


def failed_calls(calls: Calls) -> str | None:
    """The reason a live audit is void when most of its calls failed, naming the first
    few distinct errors with their counts; None when most calls got an answer."""
    if not calls.failed or calls.failed <= FAILED_CALLS_VOID * calls.asked:
        return None
    named = "; ".join(f"{reason or 'no reason given'!r} x{count}"
                      for reason, count in calls.failures[:SHOWN_FAILURES])
    more = len(calls.failures) - SHOWN_FAILURES
    return (f"the judge could not be reached: {calls.failed} of {calls.asked} calls failed "
            f"(more than {FAILED_CALLS_VOID:.0%}), so its numbers are the failures'; "
            f"errors: {named}" + (f"; and {more} other error(s)" if more > 0 else ""))


def _reasons(point: PointAgreement | None, pair: PairAgreement | None, probes: Probes,
             controls: Controls, modes: frozenset[Mode], unscored: int, verdicts: int,
             bars: Bars, generated: bool = False, other_agreement: bool = False
             ) -> list[str]:
    """Every reason the judge may not gate; none means it may. ``other_agreement``:
    agreement was measured another way (categorical items, several annotators)."""
    reasons = list(controls.failures())
    if point is None and pair is None and not other_agreement:
        reasons.append("no human-labelled items: agreement not measured")
    if point is not None:
        for name, value, interval, bar in (
                ("kappa", point.kappa, point.kappa_interval, bars.kappa),
                ("TPR", point.tpr, point.tpr_interval, bars.tpr),
                ("TNR", point.tnr, point.tnr_interval, bars.tnr)):
            if not computed(value):
                # Never compared with the bar as if it were 0, never passed either.
                reasons.append(f"{name} not computed ({value.reason}): the bar {bar:g} "
                               "cannot be checked")
            elif side(value.value, interval, bar) is Side.MISSED:
                reasons.append(f"{name} {fixed(value.value)} < {bar:g}"
                               + (f" ({value.reason})" if value.reason else ""))
    if pair is not None:
        for order in pair.orders:
            if not computed(order.kappa):
                reasons.append(f"pairwise kappa ({order.order.value}) not computed "
                               f"({order.kappa.reason}): the bar {bars.kappa:g} cannot be "
                               "checked")
            elif side(order.kappa.value, order.kappa_interval, bars.kappa) is Side.MISSED:
                reasons.append(f"pairwise kappa ({order.order.value}) {fixed(order.kappa.value)} "
                               f"< {bars.kappa:g}")
    for name, result in probes.results.items():
        unit = PROBES[name]
        if result.status is ProbeStatus.FOUND:
            reasons.append(f"{name} bias FOUND")
        elif unit.required is Required.NEVER or (unit.required is Required.GENERATED
                                                 and not generated):
            continue  # required only when they could be generated for this run
        elif result.status is ProbeStatus.NOT_RUN and unit.mode in modes:
            why = (unit.why_not_run(result) if unit.why_not_run is not None
                   else f"no {name} probe items with verdicts")
            reasons.append(f"{name} probe not run: {why}, "
                           f"and the judge is audited for {unit.mode.value} use")
    share = unscored / verdicts if verdicts else 0.0
    if share > bars.unscored:
        reasons.append(f"unscored {unscored} of {verdicts} "
                       f"({share:.0%}) > {bars.unscored:.0%}")
    return reasons


def class_reasons(agreement: ClassAgreement | None, bars: Bars) -> list[str]:
    """The kappa bar on categorical items, as on pass/fail and pairs."""
    if agreement is None:
        return []
    if not computed(agreement.kappa):
        return [f"categorical kappa not computed ({agreement.kappa.reason}): the bar "
                f"{bars.kappa:g} cannot be checked"]
    if agreement.kappa.value < bars.kappa:
        return [f"categorical kappa {agreement.kappa.value:.2f} < {bars.kappa:g}"]
    return []


def alt_reasons(reports: tuple[PanelReport, ...], settings: AltSettings) -> list[str]:
    """A failed alternative annotator test, when it ran; when the config requires the
    test, one that could not run (or no item with several annotators) too."""
    reasons = []
    for r in reports:
        alt = r.alt
        if alt.ran and not alt.passed:
            reasons.append(f"alternative annotator test failed ({r.kind}): winning rate "
                           f"{alt.omega:.2f} < 0.5 at epsilon {alt.epsilon:g}")
        elif not alt.ran and settings.required and alt.more is None:
            reasons.append(f"alternative annotator test ({r.kind}) not run ({alt.reason})"
                           "; tool.metaeval.judge_audit.require_alt_test is set")
    if settings.required and not reports:
        reasons.append("alternative annotator test not run (no item carries several "
                       "annotators' labels); tool.metaeval.judge_audit.require_alt_test is set")
    return reasons


def verdict_of(agreement: HumanAgreement, probes: Probes, controls: Controls,
               modes: frozenset[Mode], unscored: int, verdicts: int, settings: AuditSettings,
               calls: Calls | None, open_: OpenDecision | None
               ) -> tuple[AuditVerdict, tuple[str, ...]]:
    """The verdict and its reasons. ``calls``: a live judge's (None: recorded, no call
    made), void when most of them failed; ``open_``: what these labels cannot decide
    yet (see ``metaeval.audit.undecided``)."""
    bars, alt = settings.bars, settings.alt
    unreached = failed_calls(calls) if calls is not None else None
    other = agreement.categorical is not None or bool(agreement.panels)
    on_classes = class_reasons(agreement.categorical, bars)
    on_alt = alt_reasons(agreement.panels, alt)
    reasons = tuple(([unreached] if unreached else [])
                    + _reasons(agreement.point, agreement.pair, probes, controls, modes,
                               unscored, verdicts, bars, settings.generated, other)
                    + on_classes + on_alt)
    # An open measure is a reason too, but a void or a clear miss wins over it.
    verdict = (AuditVerdict.VOID if not controls.ok or unreached else
               AuditVerdict.REPORT_ONLY if reasons else
               AuditVerdict.INCONCLUSIVE if open_ is not None else AuditVerdict.MAY_GATE)
    if open_ is not None:
        reasons += (tuple(u.said() for u in open_.measures)
                    + tuple(t.said() for t in open_.tests))
    return verdict, reasons
