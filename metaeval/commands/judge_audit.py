"""``metaeval judge-audit``: one request, from the flags a user gave to a result.

The command is three phases, as ``metaeval mutate`` is, each taking the value the
one before gives:

1. ``judge_audit_plan.plan_judge_audit``: ``JudgeAuditRequest`` -> ``JudgeAuditPlan``
   (the config read, the items loaded and the labels files joined, every flag
   checked; nothing asked);
2. ``run_judge_audit``: ``JudgeAuditPlan`` -> ``JudgeAudit``: the judge asked
   (through the reply cache, its probes generated and kept within the budget) or
   its recorded verdicts read, then measured and decided (``audit_judge``);
3. ``JudgeAuditResult``: the audit and the exit code it earns, which the report
   layer renders.

Bad input raises InputError naming every bad line; it never reaches the
measurement as a half-loaded set. Nothing here prints; ``record_calibration``
adds the entry ``--write`` asks for, after the audit is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path

from metaeval.audit.calibration import DEFAULT_PATH as DEFAULT_CALIBRATION
from metaeval.audit.calibration import write_calibration
from metaeval.audit.collect import Progress, VerdictTable, ask_judge, recorded_table
from metaeval.audit.generate import family, generate, probe_record
from metaeval.audit.held_out import record_read, verdicts_digest
from metaeval.audit.judge_decision import (
    AuditSettings,
    AuditSource,
    JudgeAudit,
    audit_judge,
    label_range_warning,
)
from metaeval.audit.measured_set import MeasuredSet, SetChoice
from metaeval.audit.probe_budget import cost_note, probe_plan, within_budget_of
from metaeval.commands.judge_audit_plan import load_items, plan_judge_audit, resolve_judge
from metaeval.commands.judge_audit_values import (
    VERDICT_CODES,
    JudgeAuditPlan,
    JudgeAuditRequest,
    JudgeAuditResult,
    LiveJudge,
    ProbeSettings,
    RecordedJudge,
)
from metaeval.config import Config
from metaeval.errors import InputError
from metaeval.files import write_ndjson
from metaeval.judges.base import Judge, Mode, Scale
from metaeval.judges.cache import CachedJudge, ReplyCache
from metaeval.judges.fakes import AlwaysPassJudge, BiasedJudge, SteadyJudge
from metaeval.judges.scales import ProbeSource
from metaeval.judges.spec import concurrency_of
from metaeval.loaders.judge_items import GENERATED, JudgeItems

__all__ = ["VERDICT_CODES", "JudgeAuditPlan", "JudgeAuditRequest", "JudgeAuditResult",
           "Measured", "ProbeSettings", "judge_audit", "load_items", "plan_judge_audit",
           "record_calibration", "resolve_judge", "run_judge_audit", "run_measured"]

OFFLINE = (AlwaysPassJudge, BiasedJudge, SteadyJudge)
"""The built-in fakes: no call leaves the process, so no cost is announced for them."""


def judge_audit(request: JudgeAuditRequest, config: Config,
                progress: Progress | None = None,
                notify: Callable[[str], None] | None = None) -> JudgeAuditResult:
    """Audit the judge of ``request`` in the project of ``config``:
    ``run_judge_audit(plan_judge_audit(request, config))`` and its exit code."""
    plan = plan_judge_audit(request, config)
    audit = run_judge_audit(plan, progress, notify)
    if plan.chosen is not None:  # a held-out read is checked against the ledger, and kept
        audit = replace(audit, measured=record_read(plan.chosen, audit, datetime.now(UTC)))
    return JudgeAuditResult(audit, config.root)


def run_judge_audit(plan: JudgeAuditPlan, progress: Progress | None = None,
                    notify: Callable[[str], None] | None = None) -> JudgeAudit:
    """Run ``plan`` (made by ``plan_judge_audit``, or by hand and then
    ``resolve_judge``): its judge asked live (through the reply cache at ``plan.cache``
    unless None), or its recorded verdicts, read by the plan, measured with no call
    made. Bad item lines (``plan.items.errors``) and bad recorded lines end in the
    audit's ``errors``: named, left out. ``notify`` is told, before a live judge is
    asked, what the probes will cost; ``progress``, how many replies have arrived."""
    return run_measured(plan, progress, notify).audit


@dataclass(frozen=True, slots=True)
class Measured:
    """One judge's audit with what it was measured on: its verdict table, the items
    as audited (a live judge's generated probes among them) and the settings, so that
    a panel of judges can be audited on the same (``judge_audit_many``)."""

    audit: JudgeAudit
    table: VerdictTable
    items: JudgeItems
    settings: AuditSettings


def run_measured(plan: JudgeAuditPlan, progress: Progress | None = None,
                 notify: Callable[[str], None] | None = None) -> Measured:
    """``run_judge_audit``, keeping the verdict table and the items it measured."""
    judged = plan.judge
    if judged is None:
        raise ValueError("run_judge_audit: the plan's judge is not resolved; make the plan "
                         "with plan_judge_audit, or pass it through resolve_judge")
    ran = (_recorded(plan, judged) if isinstance(judged, RecordedJudge)
           else _live(plan, judged, progress, notify))
    audit = ran.audit
    warning = label_range_warning(plan.items, audit.labels) if plan.labels is None else ""
    measured = None if plan.chosen is None else replace(plan.chosen.measured,
                                                        log=audit.measured.log
                                                        if audit.measured else "")
    return replace(ran, audit=replace(audit, errors=plan.items.errors + audit.errors,
                                      label_warning=warning, measured=measured))


def _settings(plan: JudgeAuditPlan, people: Scale, *, live: bool = False,
              generated: bool = False) -> AuditSettings:
    # A live judge answers with a score or pass/fail, never a class (check_plan refuses
    # class-labelled items for it), so no declared class reaches its audit.
    return AuditSettings(plan.bars, people, generated, plan.alt, plan.by,
                         () if live else plan.classes)


def _recorded(plan: JudgeAuditPlan, judged: RecordedJudge) -> Measured:
    items = plan.items
    table, settings = recorded_table(judged.records), _settings(plan, judged.people)
    audit = audit_judge(judged.identity, judged.scale, items, table,
                        source=AuditSource.RECORDED, settings=settings)
    # Known by its name alone, a recorded judge is also its log: another log on the
    # held-out set under the same name is another judge (see audit.held_out).
    log = MeasuredSet(SetChoice.ALL, "", log=verdicts_digest(
        judged.records, None if plan.chosen is None else plan.chosen.keep)
    ) if not judged.built else None
    return Measured(replace(audit, errors=audit.errors + judged.bad,
                            temperature_known=judged.built,
                            probe_plan=probe_plan(ProbeSource.FILES, items, plan.probes.seed),
                            measured=log),
                    table, items, settings)


def _live(plan: JudgeAuditPlan, judged: LiveJudge, progress: Progress | None,
          notify: Callable[[str], None] | None) -> Measured:
    judge, people = judged.judge, judged.people
    probes, items = plan.probes, plan.items
    source = probes.source or (ProbeSource.FILES if items.probes else ProbeSource.GENERATED)
    if source is not ProbeSource.FILES:
        # Only the questions the judge answers: a pairwise-only judge is not asked
        # to score, nor a pointwise-only one to compare.
        made = tuple(p for p in generate(items, people, probes.seed)
                     if (Mode.PAIRWISE if family(p).startswith("pairwise") else Mode.POINTWISE)
                     in judge.modes)
        items = (items.labelled() if source is ProbeSource.GENERATED else items
                 ).with_probes((*(() if source is ProbeSource.GENERATED else items.probes),
                                *made))
    samples = plan.samples or 1
    store = ReplyCache(plan.cache) if plan.cache is not None else None
    try:
        asked: Judge = (CachedJudge(judge, store, concurrency_of(judge)) if store is not None
                        else judge)
        items, chosen = within_budget_of(asked, items, source, probes.budget, probes.seed,
                                         samples)
        if probes.write is not None:
            generated = [p for p in items.probes if p.origin == GENERATED]
            if source is ProbeSource.FILES:
                raise InputError("--write-probes: no probe was generated (--probes files); "
                                 "use --probes generated or both")
            write_ndjson(probes.write, tuple(probe_record(p) for p in generated))
            chosen = replace(chosen, written=str(probes.write))
        if notify is not None and not isinstance(judge, OFFLINE):
            notify(cost_note(chosen))  # the fakes cost nothing and call nothing
        table = ask_judge(asked, items, samples, progress)
    finally:
        if store is not None:
            store.close()
    settings = _settings(plan, people, live=True, generated=source is not ProbeSource.FILES)
    audit = audit_judge(judge.identity, judge.scale, items, table, source=AuditSource.LIVE,
                        modes=judge.modes, settings=settings)
    return Measured(replace(audit, probe_plan=chosen), table, items, settings)


def record_calibration(result: JudgeAuditResult, path: Path | None, today: date
                       ) -> tuple[Path, bool]:
    """Add the audit's calibration entry to ``path`` (default: the project's
    calibration file) when it may gate and no input line was left out; returns the
    file and whether it was written. Never for a judge tuned after a held-out read."""
    target = path or result.root / DEFAULT_CALIBRATION
    measured = result.audit.measured
    if result.audit.errors or (measured is not None and measured.tuned_after_read):
        return target, False
    return target, write_calibration(target, result.audit, today)
