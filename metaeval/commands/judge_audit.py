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
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

from metaeval.audit.calibration import DEFAULT_PATH as DEFAULT_CALIBRATION
from metaeval.audit.calibration import write_calibration
from metaeval.audit.collect import Progress, ask_judge, item_ids, recorded_table, reread
from metaeval.audit.generate import family, generate, probe_record
from metaeval.audit.held_out import record_read, verdicts_digest
from metaeval.audit.judge_decision import (
    AuditSettings,
    AuditSource,
    JudgeAudit,
    audit_judge,
    label_range_warning,
    label_scale,
)
from metaeval.audit.measured_set import MeasuredSet, SetChoice
from metaeval.audit.probe_budget import cost_note, probe_plan, within_budget_of
from metaeval.commands.judge_audit_plan import check_plan, load_items, plan_judge_audit
from metaeval.commands.judge_audit_values import (
    VERDICT_CODES,
    JudgeAuditPlan,
    JudgeAuditRequest,
    JudgeAuditResult,
    ProbeSettings,
)
from metaeval.config import Config
from metaeval.errors import InputError, shown
from metaeval.files import write_ndjson
from metaeval.judges.base import DEFAULT_SCALE, Judge, JudgeIdentity, Mode, Scale
from metaeval.judges.cache import CachedJudge, ReplyCache
from metaeval.judges.fakes import AlwaysPassJudge, BiasedJudge, SteadyJudge
from metaeval.judges.reply import NO_TEMPLATES, custom_hash
from metaeval.judges.scales import ProbeSource, describe
from metaeval.judges.spec import build_judge, concurrency_of
from metaeval.loaders.judge_items import GENERATED, Recorded, item_kinds, load_recorded
from metaeval.untrusted_json import LoadError

__all__ = ["VERDICT_CODES", "JudgeAuditPlan", "JudgeAuditRequest", "JudgeAuditResult",
           "ProbeSettings", "judge_audit", "load_items", "plan_judge_audit",
           "record_calibration", "run_judge_audit"]

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
    """Run ``plan``: its judge asked live (through the reply cache at ``plan.cache``
    unless None), or its recorded verdicts read with no call made. Bad item lines
    (``plan.items.errors``) and bad recorded lines end in the audit's ``errors``:
    named, left out. ``notify`` is told, before a live judge is asked, what the
    probes will cost; ``progress``, how many replies have arrived."""
    check_plan(plan)
    audit = _recorded(plan) if plan.recorded else _live(plan, progress, notify)
    warning = label_range_warning(plan.items, audit.labels) if plan.labels is None else ""
    measured = None if plan.chosen is None else replace(plan.chosen.measured,
                                                        log=audit.measured.log
                                                        if audit.measured else "")
    return replace(audit, errors=plan.items.errors + audit.errors, label_warning=warning,
                   measured=measured)


def _settings(plan: JudgeAuditPlan, people: Scale, *, live: bool = False,
              generated: bool = False) -> AuditSettings:
    # A live judge answers with a score or pass/fail, never a class (check_plan refuses
    # class-labelled items for it), so no declared class reaches its audit.
    return AuditSettings(plan.bars, people, generated, plan.alt, plan.by,
                         () if live else plan.classes)


def _recorded(plan: JudgeAuditPlan) -> JudgeAudit:
    spec, declared, reply = plan.spec, plan.scale, plan.reply
    scale = declared or DEFAULT_SCALE
    # A name only: its verdicts mean what the declared scale says, so that scale is
    # part of who it is (--pass-at 0 and --pass-at 1 are two judges); so is the rule
    # that reads the log's text (as a live judge's reply rule is): re-read with
    # another rule, it is another judge.
    identity = JudgeIdentity(spec, model="recorded", prompt_hash="" if reply is None else
                             custom_hash(NO_TEMPLATES, reply, "recorded"),
                             scale="" if scale == DEFAULT_SCALE
                             else f"{scale.low}-{scale.high} pass>={scale.pass_at}")
    built = False
    try:  # a judge we can build lends its identity, so its calibration applies to it
        named = build_judge(spec, allowed=plan.allowed, judges=plan.judges)
    except InputError:
        pass  # a name only: the logs' judge is not one metaeval can build
    else:
        if reply is not None:
            raise InputError(f"--reply: judge {spec!r} is one metaeval builds, and its own "
                             "reply rule is part of its identity; name the log's judge "
                             "another way to re-read its replies by another rule")
        if declared is not None and declared != named.scale:
            raise InputError(f"{plan.scale_from}: got {describe(declared)}; judge {spec!r} "
                             f"answers on {describe(named.scale)} (its own config); declare "
                             "no scale for it")
        identity, scale, built = named.identity, named.scale, True
    items = plan.items
    kinds = item_kinds(items)
    records, errors = load_recorded(plan.recorded, scale, kinds, plan.classes)
    if reply is not None:
        records = reread(records, reply, scale, kinds)
    if not records and errors:
        raise InputError("\n".join(str(e) for e in errors))
    known = item_ids(items)
    bad = list(errors) + [_unknown_id(r) for r in records
                          if r.id not in known and r.id not in plan.set_aside]
    records = tuple(r for r in records if r.id in known)
    people = label_scale(scale, plan.labels, plan.label_pass_at)
    audit = audit_judge(identity, scale, items, recorded_table(records),
                        source=AuditSource.RECORDED,
                        settings=_settings(plan, people))
    # Known by its name alone, a recorded judge is also its log: another log on the
    # held-out set under the same name is another judge (see audit.held_out).
    log = MeasuredSet(SetChoice.ALL, "", log=verdicts_digest(
        records, None if plan.chosen is None else plan.chosen.keep)) if not built else None
    return replace(audit, errors=audit.errors + tuple(bad), temperature_known=built,
                   probe_plan=probe_plan(ProbeSource.FILES, items, plan.probes.seed),
                   measured=log)


def _unknown_id(record: Recorded) -> LoadError:
    path, _, line = record.source.rpartition(":")
    return LoadError(path, int(line) if line.isdigit() else 0, "id",
                     f"got {shown(record.id)}; expected the id of a loaded judge item")


def _live(plan: JudgeAuditPlan, progress: Progress | None,
          notify: Callable[[str], None] | None) -> JudgeAudit:
    judge = build_judge(plan.spec, allowed=plan.allowed, judges=plan.judges)
    people = label_scale(judge.scale, plan.labels, plan.label_pass_at)
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
    audit = audit_judge(judge.identity, judge.scale, items, table, source=AuditSource.LIVE,
                        modes=judge.modes,
                        settings=_settings(plan, people, live=True,
                                           generated=source is not ProbeSource.FILES))
    return replace(audit, probe_plan=chosen)


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
