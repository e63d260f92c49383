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
from metaeval.audit.collect import Progress, VerdictTable, recorded_table
from metaeval.audit.held_out import record_read, verdicts_digest
from metaeval.audit.judge_decision import (
    AuditSettings,
    AuditSource,
    JudgeAudit,
    audit_judge,
    label_range_warning,
)
from metaeval.audit.live import ProbeSettings, ask_live
from metaeval.audit.measured_set import MeasuredSet, SetChoice
from metaeval.audit.probe_budget import probe_plan
from metaeval.commands.judge_audit_plan import load_items, plan_judge_audit, resolve_judge
from metaeval.commands.judge_audit_values import (
    VERDICT_CODES,
    JudgeAuditPlan,
    JudgeAuditRequest,
    JudgeAuditResult,
    RecordedJudge,
)
from metaeval.config import Config
from metaeval.judges.scales import ProbeSource
from metaeval.loaders.judge_items import JudgeItems
from metaeval.untrusted_json import LoadError

__all__ = ["VERDICT_CODES", "JudgeAuditPlan", "JudgeAuditRequest", "JudgeAuditResult",
           "Measured", "ProbeSettings", "judge_audit", "load_items", "plan_judge_audit",
           "record_calibration", "resolve_judge", "run_judge_audit", "run_measured"]


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
    # One way through: the verdicts are read from the log or asked of the judge, then
    # both are measured and decided by the same call.
    bad: tuple[LoadError, ...] = ()
    log: MeasuredSet | None = None
    if isinstance(judged, RecordedJudge):
        identity, scale, modes, source = judged.identity, judged.scale, None, AuditSource.RECORDED
        items, table = plan.items, recorded_table(judged.records)
        probes = probe_plan(ProbeSource.FILES, items, plan.probes.seed)
        generated, classes, bad = False, plan.classes, judged.bad
        # Known by its name alone, a recorded judge is also its log: another log on the
        # held-out set under the same name is another judge (see audit.held_out).
        log = None if judged.built else MeasuredSet(SetChoice.ALL, "", log=verdicts_digest(
            judged.records, None if plan.chosen is None else plan.chosen.keep))
    else:
        judge = judged.judge
        identity, scale, modes, source = judge.identity, judge.scale, judge.modes, AuditSource.LIVE
        asked = ask_live(judge, judged.items, judged.source, plan.probes, plan.samples or 1,
                         plan.cache, progress, notify)
        items, table, probes = asked.items, asked.table, asked.plan
        # A live judge answers with a score or pass/fail, never a class (check_plan
        # refuses class-labelled items for it), so no declared class reaches its audit.
        generated, classes = asked.generated, ()
    settings = AuditSettings(plan.bars, judged.people, generated, plan.alt, plan.by, classes)
    audit = audit_judge(identity, scale, items, table, source=source, modes=modes,
                        settings=settings)
    # Which set was measured is the plan's; a recorded judge's log digest goes with it.
    measured = None if plan.chosen is None else replace(plan.chosen.measured,
                                                        log=log.log if log else "")
    return Measured(replace(
        audit, errors=plan.items.errors + audit.errors + bad, probe_plan=probes,
        temperature_known=not isinstance(judged, RecordedJudge) or judged.built,
        label_warning=(label_range_warning(plan.items, audit.labels)
                       if plan.labels is None else ""),
        measured=measured), table, items, settings)


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
