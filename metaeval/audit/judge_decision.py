"""``metaeval judge-audit``: may this judge gate a release?

Measures agreement with people and with itself, runs the position, length and
injection probes, and runs every probe in the same invocation on the planted
controls: ``BiasedJudge`` must be FOUND and ``SteadyJudge`` clean, or the
detector is broken and the audit is void. The verdict is "may gate" only when
every bar is met and no probe found a bias; every reason otherwise is listed.
This module must never let a void audit or a missing measurement read as a pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TypeVar

from metaeval.audit.alt_test import PanelReport, panel_reports
from metaeval.audit.annotator_position import AnnotatorPosition, item_positions
from metaeval.audit.bars import DEFAULT_ALT, DEFAULT_BARS, AltSettings, Bars
from metaeval.audit.bias_probes import (
    InjectionResult,
    LengthResult,
    PositionResult,
    ProbeStatus,
)
from metaeval.audit.breakdown import CategoryFigures, by_category
from metaeval.audit.class_agreement import ClassAgreement, class_agreement
from metaeval.audit.collect import Calls, VerdictTable, ask_judge
from metaeval.audit.decided import decide, read_points, unscored_verdicts
from metaeval.audit.judge_agreement import (
    PairAgreement,
    PointAgreement,
    Samples,
    SelfConsistency,
    computed,
    pair_agreement,
    point_agreement,
    samples_of,
    self_consistency,
)
from metaeval.audit.measured_set import MeasuredSet
from metaeval.audit.pair_probes import PairFlipResult
from metaeval.audit.power import Side, more_said, side
from metaeval.audit.probe_budget import ProbePlan
from metaeval.audit.probes import PROBES, ProbeResult, ProbeRun, Required
from metaeval.audit.strength import Strengths, strengths
from metaeval.audit.undecided import OpenDecision, open_decision, open_measures, open_tests
from metaeval.decimals import fixed
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity, Mode, Scale
from metaeval.judges.fakes import BiasedJudge, SteadyJudge
from metaeval.judges.scales import default_pass_at
from metaeval.loaders.judge_items import FILES, JudgeItems
from metaeval.untrusted_json import LoadError

R = TypeVar("R")


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


@dataclass(frozen=True, slots=True)
class Probes:
    """Every registered probe's result (``metaeval.audit.probes.PROBES``), by name, in
    the registry's order. The five first probes are also attributes, typed, for the
    figures drawn of them."""

    results: Mapping[str, ProbeResult]

    def statuses(self) -> dict[str, ProbeStatus]:
        return {name: r.status for name, r in self.results.items()}

    def headlines(self) -> dict[str, str]:
        return {name: r.headline() for name, r in self.results.items()}

    def _typed(self, name: str, kind: type[R]) -> R:
        result = self.results[name]
        assert isinstance(result, kind)
        return result

    @property
    def position(self) -> PositionResult:
        return self._typed("position", PositionResult)

    @property
    def length(self) -> LengthResult:
        return self._typed("length", LengthResult)

    @property
    def injection(self) -> InjectionResult:
        return self._typed("injection", InjectionResult)

    @property
    def pair_length(self) -> PairFlipResult:
        return self._typed("pairwise length", PairFlipResult)

    @property
    def pair_injection(self) -> PairFlipResult:
        return self._typed("pairwise injection", PairFlipResult)


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

    @property
    def ran(self) -> bool:
        """Whether any control ran a probe. None did when no probe had items to run
        on: then no detector was used, so none is proven or broken, and the probes
        not run are reasons of their own (the audit is not void for it)."""
        return any(c.got is not ProbeStatus.NOT_RUN for c in self.checks)

    def said(self) -> str:
        """``ok``, ``FAILED`` or ``none ran``, as a report line says it."""
        if not self.ran:
            return "none ran (no probe had items to run on)"
        return "ok" if self.ok else "FAILED"

    def failures(self) -> list[str]:
        return [f"control failed: {c.judge} judge's {c.probe} probe came out "
                f"{c.got.value}, expected {c.expected.value} ({c.headline}); the detector "
                "is broken" for c in self.checks if not c.ok]


@dataclass(frozen=True, slots=True)
class ItemCounts:
    """The items an audit measured, apart: those people labelled (a label, a class,
    or several annotators' labels, agreeing or not), those no person labelled (a
    published log's), and the probes. Every report line counts from here."""

    labelled: int = 0
    unlabelled: int = 0
    probes: int = 0


def item_counts(items: JudgeItems) -> ItemCounts:
    """``items`` counted as ``ItemCounts`` says."""
    labelled = (sum(i.labelled or i.label_class is not None or bool(i.annotations)
                    for i in items.pointwise)
                + sum(p.label is not None or bool(p.annotations) for p in items.pairwise))
    return ItemCounts(labelled, len(items.pointwise) + len(items.pairwise) - labelled,
                      len(items.probes))


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
    errors: tuple[LoadError, ...] = ()
    """Bad input lines, each named and left out; the rest was audited (exit 2)."""
    labels: Scale = DEFAULT_SCALE
    """The scale of people's integer labels and its pass mark."""
    samples: Samples = field(default_factory=lambda: Samples(0, 0, 0))
    temperature_known: bool = True
    """False for a recorded judge metaeval cannot build: the log does not say."""
    probe_plan: ProbePlan | None = None
    strength: Strengths | None = None
    """How strongly the pairwise preferences were stated, when the log or reply says."""
    annotators: tuple[PanelReport, ...] = ()
    """Per kind of item with several annotators: the human ceiling and the alternative
    annotator test."""
    alt: AltSettings = DEFAULT_ALT
    by_category: tuple[CategoryFigures, ...] | None = None
    """``--by category``: the figures of each category; None when not asked."""
    categorical: ClassAgreement | None = None
    """Agreement on the items labelled with a declared class (``--label-classes``)."""
    scale: Scale = DEFAULT_SCALE
    """The scale the judge's pointwise scores are on, and its pass mark."""
    label_warning: str = ""
    """Said when the label range was not declared and the integer labels do not reach
    one of its ends: a range that is too wide changes the weighted kappa silently."""
    annotator_position: tuple[AnnotatorPosition, ...] = ()
    """Each annotator's own position bias on the pairs whose order shown a labels file
    recorded; flagged beside the judge's, never a reason the judge may not gate."""
    counts: ItemCounts = ItemCounts()
    """The measured items: labelled, unlabelled, probes."""
    measured: MeasuredSet | None = None
    """Which set was measured (golden, held-out, all) and the held-out read; None for
    an audit run without the command (a library caller's items, as given)."""
    open: OpenDecision | None = None
    """The gated measures these labels cannot decide yet, and what could settle them;
    None when every interval lies on one side of its bar."""

    def said(self) -> str:
        """The verdict as the reports head it: ``inconclusive: about N more labelled
        items`` for an inconclusive one."""
        if self.verdict is AuditVerdict.INCONCLUSIVE and self.open is not None:
            return f"{self.verdict.value}: {more_said(self.open.more)}"
        return self.verdict.value


def label_scale(judge: Scale, labels: tuple[int, int] | None = None,
                pass_at: int | None = None) -> Scale:
    """People's label scale: ``labels`` (LOW, HIGH; 1-5 unless declared) with its pass
    mark ``pass_at``; by default the judge's ``pass_at`` when the judge answers on
    the same range, else the range's top quarter (``default_pass_at``)."""
    low, high = labels if labels is not None else (DEFAULT_SCALE.low, DEFAULT_SCALE.high)
    if pass_at is None:
        same = (low, high) == (judge.low, judge.high)
        pass_at = judge.pass_at if same else default_pass_at(low, high)
    return Scale(low, high, pass_at)


def label_range_warning(items: JudgeItems, labels: Scale) -> str:
    """A warning when the items' integer labels stay inside the (undeclared, default)
    label range without reaching one of its ends: labels on 1-4 read on 1-5 give
    another weighted kappa, and nothing else would say so. "" when they reach both
    ends or there is no integer label."""
    scores = [i.score for i in items.pointwise if i.score is not None]
    if not scores or (min(scores) == labels.low and max(scores) == labels.high):
        return ""
    seen = f"{min(scores)}-{max(scores)}"
    unreached = "; ".join(part for part in (
        f"no label reaches {labels.high}" if max(scores) < labels.high else "",
        f"none is as low as {labels.low}" if min(scores) > labels.low else "") if part)
    return (f"{unreached} (integer labels seen: {seen}; read on {labels.low}-{labels.high}, "
            "the default): the weighted kappa depends on the range; declare it with "
            f"--label-scale LOW-HIGH (or label_scale), e.g. --label-scale {seen}, or "
            f"--label-scale {labels.low}-{labels.high} if the labels are on that range")


def run_probes(items: JudgeItems, table: VerdictTable, scale: Scale, bars: Bars,
               judge: JudgeIdentity | None = None) -> Probes:
    """Every registered probe on ``table`` (``judge``: the audited judge; None for a
    control)."""
    on = ProbeRun(items, table, scale, bars, judge)
    return Probes({name: unit.run(on) for name, unit in PROBES.items()})


def by_origin(items: JudgeItems) -> list[tuple[str, JudgeItems]]:
    """The items with the probes of each origin (files, generated) in turn."""
    origins = list(dict.fromkeys(p.origin for p in items.probes)) or [FILES]
    return [(origin, items.with_probes(p for p in items.probes if p.origin == origin))
            for origin in origins]


def run_controls(items: JudgeItems, bars: Bars, judge: JudgeIdentity | None = None) -> Controls:
    """Every probe on the planted controls, over the same probe items; the probes of
    each origin are checked on their own (a generated probe's check names its origin).
    A probe with a control of its own (``ProbeUnit.control``) runs it instead, planted
    and not, for ``judge``."""
    probe_items = JudgeItems(pairwise=items.pairwise, length=items.length,
                             injection=items.injection, pair_length=items.pair_length,
                             pair_injection=items.pair_injection)
    checks: list[ControlCheck] = []
    for control, expected in ((BiasedJudge(), ProbeStatus.FOUND),
                              (SteadyJudge(), ProbeStatus.CLEAN)):
        table = ask_judge(control, probe_items)
        if isinstance(control, BiasedJudge) and items.pairwise:
            # Its planted pairwise length bias (the longer of two very unequal responses
            # wins in both orders) hid its position bias on real pairs of unequal length
            # (AlpacaEval's), voiding audits: the position check asks it without it.
            shown = ask_judge(replace(control, pair_length=False),
                              JudgeItems(pairwise=items.pairwise))
            table = replace(table, decisions={**table.decisions, **shown.decisions})
        for n, (origin, subset) in enumerate(by_origin(probe_items)):
            probes = run_probes(subset, table, control.scale, bars)
            headlines = probes.headlines()
            for name, status in probes.statuses().items():
                unit = PROBES[name]
                if unit.control is not None or (not unit.on_probes and n):
                    continue  # it reads the labelled items: checked once, not per origin
                headline, checked = headlines[name], name
                if unit.on_probes and origin != FILES:
                    if status is ProbeStatus.NOT_RUN:
                        continue
                    checked = f"{name} ({origin})"
                elif unit.required is not Required.ALWAYS and status is ProbeStatus.NOT_RUN:
                    continue  # nothing to run it on: said once, by the report
                checks.append(ControlCheck(control.identity.name, checked, expected, status,
                                           headline))
    on = ProbeRun(probe_items, VerdictTable(), DEFAULT_SCALE, bars, judge)
    for name, unit in PROBES.items():
        for planted, expected, control_name in ((True, ProbeStatus.FOUND, "biased"),
                                                (False, ProbeStatus.CLEAN, "steady")):
            if unit.control is None:
                continue
            result = unit.control(on, planted)
            if result.status is ProbeStatus.NOT_RUN and unit.required is not Required.ALWAYS:
                continue
            checks.append(ControlCheck(control_name, name, expected, result.status,
                                       result.headline()))
    return Controls(tuple(checks))


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


@dataclass(frozen=True, slots=True)
class AuditSettings:
    """How an audit measures and decides, apart from the judge and its verdicts.
    ``labels``: the scale of people's integer labels (None: the judge's own when both
    are 1-5, see ``label_scale``). ``generated``: probes were generated for this run,
    so a pairwise judge needs its pairwise length and injection probes run to gate.
    ``alt``: the alternative annotator test's epsilon and whether the judge must pass
    it to gate. ``by``: ``"category"`` breaks the figures down by the items' category
    too (see ``metaeval.audit.breakdown``). ``classes``: the declared classes of
    categorical items."""

    bars: Bars = DEFAULT_BARS
    labels: Scale | None = None
    generated: bool = False
    alt: AltSettings = DEFAULT_ALT
    by: str | None = None
    classes: tuple[str, ...] = ()


DEFAULT_SETTINGS = AuditSettings()


def audit_judge(identity: JudgeIdentity, scale: Scale, items: JudgeItems,
                table: VerdictTable, *, source: AuditSource,
                modes: frozenset[Mode] | None = None, controls: Controls | None = None,
                settings: AuditSettings = DEFAULT_SETTINGS) -> JudgeAudit:
    """Measure and decide. ``modes``: what the judge is audited for (default: what the
    verdicts cover); each needs its probes run. Audited from recorded verdicts,
    items with none are left out (counted in ``not_recorded``); the controls
    always run on every probe (``controls``: already run). ``settings``: the bars,
    the label scale and the rest (see ``AuditSettings``)."""
    bars, alt, by, classes = settings.bars, settings.alt, settings.by, settings.classes
    labels = settings.labels
    labels = labels if labels is not None else label_scale(scale)
    controls = controls if controls is not None else run_controls(items, bars, identity)
    measured, missing = items, 0
    if source is AuditSource.RECORDED:
        recorded = {slot.item for slot in table.decisions}
        measured = JudgeItems(
            tuple(i for i in items.pointwise if i.id in recorded),
            tuple(i for i in items.pairwise if i.id in recorded),
            tuple(i for i in items.length if i.id in recorded),
            tuple(i for i in items.injection if i.id in recorded),
            pair_length=tuple(i for i in items.pair_length if i.id in recorded),
            pair_injection=tuple(i for i in items.pair_injection if i.id in recorded))
        missing = items.count - measured.count
    if modes is None:
        pointwise = measured.pointwise or measured.length or measured.injection
        pairwise = measured.pairwise or measured.pair_length or measured.pair_injection
        modes = frozenset(({Mode.POINTWISE} if pointwise else set())
                          | ({Mode.PAIRWISE} if pairwise else set()))
    labelled = {i.id for i in measured.pointwise} | {p.id for p in measured.pairwise}
    # Every measure below reads the decisions made once here, not the table slot by slot.
    decided = decide(table.decisions)
    readings = read_points(decided, scale, labels)
    unscored, verdicts = unscored_verdicts(decided, measured)
    # Agreement is with people: an unlabelled item ("label": null, a log as published)
    # still has its verdicts read by the probes, never compared with a label it lacks.
    point = point_agreement(tuple(i for i in measured.pointwise if i.labelled), readings, scale,
                            labels)
    pair = pair_agreement(tuple(p for p in measured.pairwise if p.label is not None), decided)
    probes = run_probes(measured, table, scale, bars, identity)
    panels = panel_reports(measured.pointwise, measured.pairwise, decided, readings, labels,
                           alt, classes)
    categorical = class_agreement(measured.pointwise, decided, classes)
    unreached = failed_calls(table.calls) if source is AuditSource.LIVE else None
    reasons = tuple(([unreached] if unreached else [])
                    + _reasons(point, pair, probes, controls, modes, unscored, verdicts, bars,
                               settings.generated, categorical is not None or bool(panels))
                    + class_reasons(categorical, bars)
                    + alt_reasons(panels, alt))
    # An open measure is a reason too, but a void or a clear miss wins over it.
    undecided, tests = open_measures(point, bars, pair), open_tests(panels, alt)
    verdict = (AuditVerdict.VOID if not controls.ok or unreached else
               AuditVerdict.REPORT_ONLY if reasons else
               AuditVerdict.INCONCLUSIVE if undecided or tests else AuditVerdict.MAY_GATE)
    reasons += tuple(u.said() for u in undecided) + tuple(t.said() for t in tests)
    return JudgeAudit(verdict, reasons, identity, source, measured.count, missing, point, pair,
                      self_consistency(table, labelled), probes, controls, table.calls,
                      unscored, verdicts, bars, modes, labels=labels,
                      samples=samples_of(table, labelled),
                      strength=strengths(measured.pairwise, table, decided),
                      annotators=panels, alt=alt,
                      by_category=None if by is None else by_category(
                          measured, table, decided, readings, scale, labels, bars, alt,
                          classes),
                      categorical=categorical, scale=scale,
                      # Every loaded pair, judged or not: the bias is the annotator's.
                      annotator_position=item_positions(items.pairwise, alpha=bars.alpha),
                      counts=item_counts(measured),
                      open=open_decision(undecided, tests, measured, table, scale, labels))
