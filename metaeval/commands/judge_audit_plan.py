"""``metaeval judge-audit``, phase one: a ``JudgeAuditRequest`` and the project's
config -> a ``JudgeAuditPlan``. The flags win over the config; the items are loaded,
the labels files joined, and every choice the flags allow checked, so that a run
starts only on a plan that can run. The judge is resolved here too, once: built
from its spec, or, audited from its logs, named and its recorded verdicts read.
Nothing is asked of a judge here, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from metaeval.audit.bars import DEFAULT_BARS, Bars, alt_settings
from metaeval.audit.breakdown import BY
from metaeval.audit.collect import item_ids, reread
from metaeval.audit.held_out import item_sets, keep_items
from metaeval.audit.judge_decision import label_scale
from metaeval.audit.live import probe_items
from metaeval.audit.measured_set import SetChoice, choose_set
from metaeval.commands.judge_audit_values import (
    JudgeAuditPlan,
    JudgeAuditRequest,
    LiveJudge,
    ProbeSettings,
    RecordedJudge,
)
from metaeval.config import Config
from metaeval.errors import InputError, shown
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity
from metaeval.judges.cache import DEFAULT_PATH as DEFAULT_CACHE
from metaeval.judges.reply import NO_TEMPLATES, custom_hash, reply_rule
from metaeval.judges.scales import (
    JudgeAuditSettings,
    ProbeSource,
    alt_epsilon,
    configured_audit,
    declared_classes,
    declared_scale,
    describe,
)
from metaeval.judges.spec import build_judge
from metaeval.loaders.item_labels import join_item_labels, read_item_labels
from metaeval.loaders.judge_items import JudgeItems, load_judge_items
from metaeval.loaders.ledger import ledger_path, read_ledger
from metaeval.loaders.recorded_judges import select_judge
from metaeval.loaders.recorded_verdicts import Recorded, item_kinds, load_recorded
from metaeval.untrusted_json import LoadError

__all__ = ["load_items", "plan_judge_audit", "plan_unresolved", "resolve_judge"]


def _fail(errors: Sequence[LoadError]) -> InputError:
    return InputError("\n".join(str(e) for e in errors))


def load_items(paths: Sequence[Path], labels: tuple[int, int] = (1, 5),
               classes: tuple[str, ...] = ()) -> JudgeItems:
    """The items of ``paths``. Bad lines are kept in ``errors`` and left out, as
    meta-eval does: the rest is audited and the run ends with exit 2. Only when
    no item loads at all is it an InputError (every bad line named)."""
    items = load_judge_items(paths, labels, classes)
    if not items.count:
        if items.errors:
            raise _fail(items.errors)
        raise InputError(f"no judge items in {', '.join(map(str, paths))}; expected "
                         "*.ndjson files of judge items")
    return items


def plan_judge_audit(request: JudgeAuditRequest, config: Config) -> JudgeAuditPlan:
    """The plan of ``request`` in the project of ``config``, its judge resolved."""
    return resolve_judge(plan_unresolved(request, config))


def plan_unresolved(request: JudgeAuditRequest, config: Config) -> JudgeAuditPlan:
    """The plan of ``request`` in the project of ``config``, every flag checked but the
    judge not yet resolved (several judges share it: ``judge_audit_many``). The
    config's declared scale is for recorded verdicts only: a live judge answers on the
    scale of its own config."""
    settings = configured_audit(config.judge_audit)
    configured = settings.scale
    recorded = request.recorded
    scale, scale_from = (configured if recorded else None), "tool.metaeval.judge_audit.scale"
    scale_text = request.scale_text
    if scale_text is not None or request.pass_at is not None:
        if scale_text is None and configured is not None and recorded:
            scale_text = f"{configured.low}-{configured.high}"
        scale = declared_scale(scale_text, request.pass_at, scale_where="--scale",
                               pass_where="--pass-at")
        scale_from = "--scale"
    paths = list(request.items) or [p / "judge" for p in config.paths(config.meta_sets)]
    cache = None if request.no_cache or recorded else (
        request.cache_path or config.root / DEFAULT_CACHE)
    labels, label_pass = _labels(request, settings)
    chosen = {**settings.bars, **request.bars}
    bars = Bars(*(chosen.get(key, getattr(DEFAULT_BARS, key.removesuffix("_bar")))
                  for key in ("kappa_bar", "tpr_bar", "tnr_bar", "unscored_bar", "alpha")))
    source, source_from = settings.probes, "tool.metaeval.judge_audit.probes"
    if request.probes is not None:
        source, source_from = request.probes, "--probes"
    if request.probe_budget is not None and request.probe_budget < 0:
        raise InputError(f"--probe-budget: got {request.probe_budget!r}; expected an integer "
                         ">= 0, the most calls the probes may make")
    probes = ProbeSettings(source, source_from, request.write_probes, request.probe_budget)
    classes = (declared_classes(request.label_classes, "--label-classes")
               if request.label_classes is not None else settings.label_classes)
    items = load_items(paths, labels or (1, 5), classes)
    if request.label_files:
        rows, errors = read_item_labels(request.label_files)
        items, join_errors = join_item_labels(items, rows, labels or (1, 5))
        items = replace(items, errors=(*items.errors, *sorted(
            (*errors, *join_errors), key=lambda e: (e.path, e.line))))
    every, labelled = item_sets(items)
    measured = choose_set(request.set_choice, paths, every, labelled)
    kept = keep_items(items, measured.keep)
    set_aside = frozenset(every - item_sets(kept)[0])
    items = kept
    if request.alt_epsilon is not None and not _panelled(items):
        raise InputError(
            f"--alt-epsilon: got {request.alt_epsilon!r}; the alternative annotator test "
            "needs items labelled by several annotators ('labels' on an item, or --labels "
            f"files), and none of the {items.count} item(s) has two; drop the flag or add "
            "the annotators' labels")
    plan = JudgeAuditPlan(
        request.spec, items, recorded=recorded, samples=request.samples, cache=cache,
        bars=bars, scale=scale, scale_from=scale_from, allowed=config.allowed_modules,
        judges=config.judges, labels=labels, label_pass_at=label_pass, probes=probes,
        reply=None if request.reply is None else reply_rule(request.reply, where="--reply"),
        alt=alt_settings(None if request.alt_epsilon is None
                         else alt_epsilon(request.alt_epsilon, "--alt-epsilon"),
                         settings.alt_epsilon, settings.annotators, settings.require_alt_test),
        by=request.by, classes=classes, chosen=measured, set_aside=set_aside)
    check_plan(plan)
    if measured.path is not None and measured.measured.name is SetChoice.HELD_OUT:
        read_ledger(ledger_path(measured.path))  # a bad line stops it before any call
    return plan


def resolve_judge(plan: JudgeAuditPlan) -> JudgeAuditPlan:
    """``plan`` checked (``check_plan``) with its judge resolved: built from its spec
    for a live audit, with the items it is to be asked (its probes made); for a
    recorded one, named (by the judge metaeval can build from the spec, else by the
    spec, the declared scale and ``--reply``) and its verdicts read, those on no loaded
    item left out as errors."""
    check_plan(plan)
    if not plan.recorded:
        judge = build_judge(plan.spec, allowed=plan.allowed, judges=plan.judges)
        people = label_scale(judge.scale, plan.labels, plan.label_pass_at)
        return replace(plan, judge=LiveJudge(judge, people, *probe_items(
            judge, people, plan.items, plan.probes)))
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
    kinds = item_kinds(plan.items)
    records, errors = load_recorded(plan.recorded, scale, kinds, plan.classes)
    if records:  # a log of several judges: this one's verdicts (recorded_judges)
        records, others = select_judge(records, spec)
        errors = (*errors, *others)
    if reply is not None:
        records = reread(records, reply, scale, kinds)
    if not records and errors:
        raise _fail(errors)
    known = item_ids(plan.items)
    bad = (*errors, *(_unknown_id(r) for r in records
                      if r.id not in known and r.id not in plan.set_aside))
    return replace(plan, judge=RecordedJudge(
        identity, scale, built, tuple(r for r in records if r.id in known), bad,
        label_scale(scale, plan.labels, plan.label_pass_at)))


def _unknown_id(record: Recorded) -> LoadError:
    path, _, line = record.source.rpartition(":")
    return LoadError(path, int(line) if line.isdigit() else 0, "id",
                     f"got {shown(record.id)}; expected the id of a loaded judge item")


def _panelled(items: JudgeItems) -> bool:
    """Whether any item carries two or more annotators' labels: only then can the
    alternative annotator test run."""
    annotated = [i.annotations for i in items.pointwise] + [p.annotations for p in items.pairwise]
    return any(len({a.annotator for a in given}) >= 2 for given in annotated)


def check_plan(plan: JudgeAuditPlan) -> None:
    """Refuse a plan whose flags cannot all be used: each error names the flag."""
    if plan.reply is not None and not plan.recorded:
        raise InputError("--reply: applies to --recorded only; a live judge's replies are "
                         "read by its own rule ('reply' under [tool.metaeval.judges.NAME])")
    if plan.by is not None and plan.by not in BY:
        raise InputError(f"--by: got {plan.by!r}; expected one of {', '.join(map(repr, BY))}")
    if plan.samples is not None and plan.samples < 1:
        raise InputError(f"--samples: got {plan.samples!r}; expected an integer >= 1")
    probes = plan.probes
    if plan.recorded:
        if plan.samples is not None:
            raise InputError("--samples: applies to a live judge only; with --recorded the "
                             "number of samples is what the log holds (its 'sample' field)")
        if probes.source not in (None, ProbeSource.FILES):
            raise InputError(f"{probes.source_from}: got {probes.source.value!r}; with "
                             "--recorded only the probes of the item files can be audited "
                             "(generate them with --write-probes, record the judge's "
                             "verdicts on them, then audit with --probes files)")
        if probes.budget is not None:
            raise InputError("--probe-budget: applies to a live judge only; with --recorded "
                             "no call is made")
        return
    if plan.scale is not None:
        raise InputError(f"{plan.scale_from}: applies to --recorded only; a live judge answers "
                         "on the scale of its own config")
    if any(i.label_class is not None for i in plan.items.pointwise):
        raise InputError("categorical labels (--label-classes): audit them from recorded "
                         "verdicts (--recorded); a live judge answers with a score or "
                         "pass/fail, not a class")


def _labels(request: JudgeAuditRequest, settings: JudgeAuditSettings
            ) -> tuple[tuple[int, int] | None, int | None]:
    """People's label range and pass mark: the flags over the config; a pass mark is
    checked against the range it ends up on."""
    labels, label_pass = settings.label_scale, settings.label_pass_at
    if request.label_scale_text is not None:
        declared = declared_scale(request.label_scale_text, None, scale_where="--label-scale",
                                  pass_where="--label-pass-at")
        labels = (declared.low, declared.high)
    if request.label_pass_at is not None:
        label_pass = request.label_pass_at
    if label_pass is not None:
        low, high = labels or (1, 5)
        declared_scale(f"{low}-{high}", label_pass, scale_where="--label-scale",
                       pass_where="--label-pass-at" if request.label_pass_at is not None
                       else "tool.metaeval.judge_audit.label_pass_at")
    return labels, label_pass
