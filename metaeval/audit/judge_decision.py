"""``metaeval judge-audit``: may this judge gate a release?

``audit_judge`` measures one judge's verdict table, in the order a reader meets it:
the items it is audited on, every probe on its verdicts and on the planted controls
(``audit.controls``), the decisions made once from the table (``audit.decided``),
its agreement with itself and with people (``audit.judge_agreement``), what the
labels leave open (``audit.undecided``), then the verdict and every reason for it
(``audit.verdict``). ``JudgeAudit`` holds all of it for the reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from metaeval.audit.alt_test import PanelReport
from metaeval.audit.annotator_position import AnnotatorPosition, item_positions
from metaeval.audit.bars import DEFAULT_ALT, DEFAULT_SETTINGS, AltSettings, AuditSettings, Bars
from metaeval.audit.breakdown import CategoryFigures, by_category
from metaeval.audit.class_agreement import ClassAgreement
from metaeval.audit.collect import Calls, VerdictTable
from metaeval.audit.controls import Controls, Probes, run_controls, run_probes
from metaeval.audit.decided import decide, read_points, unscored_verdicts
from metaeval.audit.judge_agreement import (
    PairAgreement,
    PointAgreement,
    Samples,
    SelfConsistency,
    human_agreement,
    samples_of,
    self_consistency,
)
from metaeval.audit.measured_set import MeasuredSet
from metaeval.audit.power import more_said
from metaeval.audit.probe_budget import ProbePlan
from metaeval.audit.strength import Strengths, strengths
from metaeval.audit.undecided import OpenDecision, open_decision
from metaeval.audit.verdict import AuditVerdict, verdict_of
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity, Mode, Scale
from metaeval.judges.scales import default_pass_at
from metaeval.loaders.judge_items import JudgeItems
from metaeval.untrusted_json import LoadError

__all__ = ["AuditSettings", "AuditSource", "AuditVerdict", "ItemCounts", "JudgeAudit",
           "audit_judge", "item_counts", "label_range_warning", "label_scale"]


class AuditSource(Enum):
    """Where the verdicts an audit measures came from."""

    LIVE = "live"
    """The judge was asked (through the reply cache when there is one)."""
    RECORDED = "recorded"
    """Read from logged verdicts; no call made."""



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
    counts = item_counts(measured)
    # Every probe on the judge's verdicts, then on the planted controls' over the same
    # probe items.
    probes = run_probes(measured, table, scale, bars, identity)
    controls = controls if controls is not None else run_controls(items, bars, identity)
    # Every measure below reads the decisions made once here, not the table slot by slot.
    decided = decide(table.decisions)
    readings = read_points(decided, scale, labels)
    unscored, verdicts = unscored_verdicts(decided, measured)
    consistency, samples = self_consistency(table, labelled), samples_of(table, labelled)
    # Agreement is with people: an unlabelled item ("label": null, a log as published)
    # still has its verdicts read by the probes, never compared with a label it lacks.
    agreement = human_agreement(measured.pointwise, measured.pairwise, decided, readings,
                                scale, labels, alt, classes)
    open_ = open_decision(agreement, bars, alt, measured, table, scale, labels)
    verdict, reasons = verdict_of(agreement, probes, controls, modes, unscored, verdicts,
                                  settings,
                                  table.calls if source is AuditSource.LIVE else None, open_)
    return JudgeAudit(verdict, reasons, identity, source, measured.count, missing,
                      agreement.point, agreement.pair, consistency, probes, controls,
                      table.calls, unscored, verdicts, bars, modes, labels=labels,
                      samples=samples, strength=strengths(measured.pairwise, table, decided),
                      annotators=agreement.panels, alt=alt,
                      by_category=None if by is None else by_category(
                          measured, table, decided, readings, scale, labels, bars, alt,
                          classes),
                      categorical=agreement.categorical, scale=scale,
                      # Every loaded pair, judged or not: the bias is the annotator's.
                      annotator_position=item_positions(items.pairwise, alpha=bars.alpha),
                      counts=counts, open=open_)
