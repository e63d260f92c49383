"""``metaeval judge-audit``: may this judge gate a release?

Measures agreement with people and with itself, runs the position, length and
injection probes, and runs every probe in the same invocation on the planted
controls: ``BiasedJudge`` must be FOUND and ``SteadyJudge`` clean, or the
detector is broken and the audit is void. The verdict is "may gate" only when
every bar is met and no probe found a bias; every reason otherwise is listed.
This module must never let a void audit or a missing measurement read as a pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from metaeval.audit.bars import DEFAULT_BARS, Bars
from metaeval.audit.collect import Calls, VerdictTable, ask_judge
from metaeval.audit.judge_agreement import (
    PairAgreement,
    PointAgreement,
    SelfConsistency,
    pair_agreement,
    point_agreement,
    self_consistency,
)
from metaeval.audit.probes import (
    InjectionResult,
    LengthResult,
    PositionResult,
    ProbeStatus,
    injection_probe,
    length_probe,
    position_probe,
)
from metaeval.judge_items import JudgeItems, Order
from metaeval.judges.base import JudgeIdentity, Mode, Scale
from metaeval.judges.fakes import BiasedJudge, SteadyJudge


class AuditSource(Enum):
    """Where the verdicts an audit measures came from."""

    LIVE = "live"
    """The judge was asked (through the reply cache when there is one)."""
    RECORDED = "recorded"
    """Read from logged verdicts; no call made."""


class AuditVerdict(Enum):
    """What the audit allows."""

    MAY_GATE = "may gate"
    """Every bar met, no bias found, controls behaved: the judge may gate a release."""
    REPORT_ONLY = "report only"
    """Some bar missed or some bias found: its numbers may be shown, never gate."""
    VOID = "void"
    """A control misbehaved: the detector is broken and the audit proves nothing."""


@dataclass(frozen=True, slots=True)
class Probes:
    position: PositionResult
    length: LengthResult
    injection: InjectionResult

    def statuses(self) -> dict[str, ProbeStatus]:
        return {"position": self.position.status, "length": self.length.status,
                "injection": self.injection.status}


@dataclass(frozen=True, slots=True)
class ControlCheck:
    """One control judge on one probe: what it must show and what it showed."""

    judge: str
    probe: str
    expected: ProbeStatus
    got: ProbeStatus
    headline: str

    @property
    def ok(self) -> bool:
        return self.got is self.expected or self.got is ProbeStatus.NOT_RUN


@dataclass(frozen=True, slots=True)
class Controls:
    checks: tuple[ControlCheck, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def failures(self) -> list[str]:
        return [f"control failed: {c.judge} judge's {c.probe} probe came out "
                f"{c.got.value}, expected {c.expected.value} ({c.headline}); the detector "
                "is broken" for c in self.checks if not c.ok]


@dataclass(frozen=True, slots=True)
class JudgeAudit:
    """Everything one audit measured and decided."""

    verdict: AuditVerdict
    reasons: tuple[str, ...]
    judge: JudgeIdentity
    source: AuditSource
    items: int
    not_recorded: int
    pointwise: PointAgreement | None
    pairwise: PairAgreement | None
    self_consistency: SelfConsistency
    probes: Probes
    controls: Controls
    calls: Calls
    unscored: int
    labelled_verdicts: int
    bars: Bars
    modes: frozenset[Mode]
    """What the judge was audited for; a calibration covers only these."""


def run_probes(items: JudgeItems, table: VerdictTable, scale: Scale, bars: Bars) -> Probes:
    return Probes(position_probe(items.pairwise, table, alpha=bars.alpha,
                                 chance=bars.chance_flip),
                  length_probe(items.length, table, alpha=bars.alpha),
                  injection_probe(items.injection, table, scale, alpha=bars.alpha))


def run_controls(items: JudgeItems, bars: Bars) -> Controls:
    """Every probe on the planted controls, over the same probe items."""
    probe_items = JudgeItems(pairwise=items.pairwise, length=items.length,
                             injection=items.injection)
    checks: list[ControlCheck] = []
    for control, expected in ((BiasedJudge(), ProbeStatus.FOUND),
                              (SteadyJudge(), ProbeStatus.CLEAN)):
        probes = run_probes(probe_items, ask_judge(control, probe_items), control.scale, bars)
        for name, result in (("position", probes.position), ("length", probes.length),
                             ("injection", probes.injection)):
            checks.append(ControlCheck(control.identity.name, name, expected, result.status,
                                       result.headline()))
    return Controls(tuple(checks))


def _unscored(table: VerdictTable, items: JudgeItems) -> tuple[int, int]:
    """Unscored verdicts and all verdicts on labelled items (pairs count per order)."""
    decisions = [table.decided(i.id) for i in items.pointwise]
    decisions += [table.decided(p.id, order=o) for p in items.pairwise for o in Order]
    return sum(d is None for d in decisions), len(decisions)


def _reasons(point: PointAgreement | None, pair: PairAgreement | None, probes: Probes,
             controls: Controls, modes: frozenset[Mode], unscored: int, verdicts: int,
             bars: Bars) -> list[str]:
    """Every reason the judge may not gate; none means it may."""
    reasons = list(controls.failures())
    if point is None and pair is None:
        reasons.append("no human-labelled items: agreement not measured")
    if point is not None:
        if point.kappa.value < bars.kappa:
            reasons.append(f"kappa {point.kappa.value:.2f} < {bars.kappa:g}"
                           + (f" ({point.kappa.reason})" if point.kappa.reason else ""))
        if point.tpr.value < bars.tpr:
            reasons.append(f"TPR {point.tpr.value:.2f} < {bars.tpr:g}")
        if point.tnr.value < bars.tnr:
            reasons.append(f"TNR {point.tnr.value:.2f} < {bars.tnr:g}")
    if pair is not None:
        for order in pair.orders:
            if order.kappa.value < bars.kappa:
                reasons.append(f"pairwise kappa ({order.order.value}) {order.kappa.value:.2f} "
                               f"< {bars.kappa:g}")
    needed = {"position": Mode.PAIRWISE, "length": Mode.POINTWISE, "injection": Mode.POINTWISE}
    for name, status in probes.statuses().items():
        if status is ProbeStatus.FOUND:
            reasons.append(f"{name} bias FOUND")
        elif status is ProbeStatus.NOT_RUN and needed[name] in modes:
            reasons.append(f"{name} probe not run: no {name} probe items with verdicts, "
                           f"and the judge is audited for {needed[name].value} use")
    share = unscored / verdicts if verdicts else 0.0
    if share > bars.unscored:
        reasons.append(f"unscored {unscored} of {verdicts} "
                       f"({share:.0%}) > {bars.unscored:.0%}")
    return reasons


def audit_judge(identity: JudgeIdentity, scale: Scale, items: JudgeItems,
                table: VerdictTable, *, source: AuditSource,
                modes: frozenset[Mode] | None = None,
                bars: Bars = DEFAULT_BARS, controls: Controls | None = None) -> JudgeAudit:
    """Measure and decide. ``modes``: what the judge is audited for (default: what the
    verdicts cover); each needs its probes run. Audited from recorded verdicts,
    items with none are left out (counted in ``not_recorded``); the controls
    always run on every probe."""
    controls = controls if controls is not None else run_controls(items, bars)
    measured, missing = items, 0
    if source is AuditSource.RECORDED:
        recorded = {slot.item for slot in table.decisions}
        measured = JudgeItems(
            tuple(i for i in items.pointwise if i.id in recorded),
            tuple(i for i in items.pairwise if i.id in recorded),
            tuple(i for i in items.length if i.id in recorded),
            tuple(i for i in items.injection if i.id in recorded))
        missing = items.count - measured.count
    if modes is None:
        pointwise = measured.pointwise or measured.length or measured.injection
        modes = frozenset(({Mode.POINTWISE} if pointwise else set())
                          | ({Mode.PAIRWISE} if measured.pairwise else set()))
    labelled = {i.id for i in measured.pointwise} | {p.id for p in measured.pairwise}
    unscored, verdicts = _unscored(table, measured)
    point = point_agreement(measured.pointwise, table, scale)
    pair = pair_agreement(measured.pairwise, table)
    probes = run_probes(measured, table, scale, bars)
    reasons = tuple(_reasons(point, pair, probes, controls, modes, unscored, verdicts, bars))
    verdict = (AuditVerdict.VOID if not controls.ok else
               AuditVerdict.REPORT_ONLY if reasons else AuditVerdict.MAY_GATE)
    return JudgeAudit(verdict, reasons, identity, source, measured.count, missing, point, pair,
                      self_consistency(table, labelled), probes, controls, table.calls,
                      unscored, verdicts, bars, modes)
