"""``metaeval judge-audit``: load the items, ask the judge (or read recorded
verdicts), and audit it. Bad input raises InputError naming every bad line; it
never reaches the measurement as a half-loaded set.

``judge_audit`` takes a ``JudgeAuditRequest`` (the flags) and the project's
config and returns a ``JudgeAuditResult``: the audit and its exit code. It
never prints; ``record_calibration`` adds the entry ``--write`` asks for, after
the audit is shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from metaeval.audit.bars import DEFAULT_ALT, DEFAULT_BARS, AltSettings, Bars, alt_settings
from metaeval.audit.breakdown import BY
from metaeval.audit.calibration import DEFAULT_PATH as DEFAULT_CALIBRATION
from metaeval.audit.calibration import write_calibration
from metaeval.audit.collect import (
    Progress,
    ask_judge,
    item_ids,
    probe_costs,
    recorded_table,
    reread,
)
from metaeval.audit.generate import SEED, family, generate, probe_record, within_budget
from metaeval.audit.judge_decision import (
    AuditSource,
    AuditVerdict,
    JudgeAudit,
    ProbePlan,
    audit_judge,
    label_range_warning,
    label_scale,
)
from metaeval.config import NO_JUDGES, Config, JudgesSection
from metaeval.errors import ExitCode, InputError, shown
from metaeval.files import write_ndjson
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.judges.base import DEFAULT_SCALE, Judge, JudgeIdentity, Mode, Scale
from metaeval.judges.cache import DEFAULT_PATH as DEFAULT_CACHE
from metaeval.judges.cache import CachedJudge, ReplyCache
from metaeval.judges.fakes import AlwaysPassJudge, BiasedJudge, SteadyJudge
from metaeval.judges.reply import NO_TEMPLATES, ReplyRule, custom_hash, reply_rule
from metaeval.judges.scales import (
    JudgeAuditSettings,
    ProbeSource,
    alt_epsilon,
    configured_audit,
    declared_classes,
    declared_scale,
    describe,
)
from metaeval.judges.spec import build_judge, concurrency_of
from metaeval.loaders.item_labels import join_item_labels, read_item_labels
from metaeval.loaders.judge_items import (
    GENERATED,
    JudgeItems,
    Recorded,
    item_kinds,
    load_judge_items,
    load_recorded,
)
from metaeval.untrusted_json import LoadError

OFFLINE = (AlwaysPassJudge, BiasedJudge, SteadyJudge)
"""The built-in fakes: no call leaves the process, so no cost is announced for them."""


def _fail(errors: Sequence[LoadError]) -> InputError:
    return InputError("\n".join(str(e) for e in errors))


@dataclass(frozen=True, slots=True)
class ProbeSettings:
    """``--probes``, ``--write-probes``, ``--probe-budget`` (None: not given)."""

    source: ProbeSource | None = None
    source_from: str = "--probes"
    write: Path | None = None
    budget: int | None = None
    seed: int = SEED


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


def _recorded_audit(spec: str, items: JudgeItems, recorded: Path, bars: Bars,
                    declared: Scale | None, scale_from: str,
                    allowed: AllowedModules, judges: JudgesSection,
                    labels: tuple[int, int] | None, label_pass_at: int | None,
                    reply: ReplyRule | None = None, alt: AltSettings = DEFAULT_ALT,
                    by: str | None = None, classes: tuple[str, ...] = ()) -> JudgeAudit:
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
        named = build_judge(spec, allowed=allowed, judges=judges)
    except InputError:
        pass  # a name only: the logs' judge is not one metaeval can build
    else:
        if reply is not None:
            raise InputError(f"--reply: judge {spec!r} is one metaeval builds, and its own "
                             "reply rule is part of its identity; name the log's judge "
                             "another way to re-read its replies by another rule")
        if declared is not None and declared != named.scale:
            raise InputError(f"{scale_from}: got {describe(declared)}; judge {spec!r} answers "
                             f"on {describe(named.scale)} (its own config); declare no scale "
                             "for it")
        identity, scale, built = named.identity, named.scale, True
    kinds = item_kinds(items)
    records, errors = load_recorded(recorded, scale, kinds, classes)
    if reply is not None:
        records = reread(records, reply, scale, kinds)
    if not records and errors:
        raise _fail(errors)
    known = item_ids(items)
    bad = list(errors) + [_unknown_id(r) for r in records if r.id not in known]
    records = tuple(r for r in records if r.id in known)
    audit = audit_judge(identity, scale, items, recorded_table(records),
                        source=AuditSource.RECORDED, bars=bars,
                        labels=label_scale(scale, labels, label_pass_at), alt=alt, by=by,
                        classes=classes)
    return replace(audit, errors=audit.errors + tuple(bad), temperature_known=built)


def _unknown_id(record: Recorded) -> LoadError:
    path, _, line = record.source.rpartition(":")
    return LoadError(path, int(line) if line.isdigit() else 0, "id",
                     f"got {shown(record.id)}; expected the id of a loaded judge item")


def run_judge_audit(spec: str, items: JudgeItems, *, recorded: Path | None = None,
                    samples: int | None = None, cache: Path | None = None,
                    bars: Bars = DEFAULT_BARS, progress: Progress | None = None,
                    scale: Scale | None = None, scale_from: str = "--scale",
                    allowed: AllowedModules = BUILTINS_ONLY,
                    judges: JudgesSection = NO_JUDGES, labels: tuple[int, int] | None = None,
                    label_pass_at: int | None = None,
                    probes: ProbeSettings = ProbeSettings(),
                    notify: Callable[[str], None] | None = None,
                    reply: ReplyRule | None = None, alt: AltSettings = DEFAULT_ALT,
                    by: str | None = None, classes: tuple[str, ...] = ()) -> JudgeAudit:
    """Audit ``spec`` on ``items``: asked live (through the reply cache at ``cache``
    unless None), or read from ``recorded`` with no call made. ``scale`` declares
    the recorded judge's scale (``scale_from`` says where it was declared); a
    live judge answers on its own. A judge named by import path must be in
    ``allowed`` (``[tool.metaeval] allowed_modules``); a configured name, in ``judges``
    (``[tool.metaeval.judges]``). ``labels`` and ``label_pass_at``: people's integer
    label range and pass mark (see ``label_scale``). Bad item lines (``items.errors``)
    and bad recorded lines end in the audit's ``errors``: named, left out. ``probes``:
    which length and injection probes to run (see ``ProbeSettings``); ``notify`` is
    told, before a live judge is asked, what the probes will cost. ``reply``
    (``--reply``): read each recorded ``raw`` text again by this rule. ``alt``: the
    alternative annotator test's epsilon and whether it is required to gate; ``by``:
    ``"category"`` adds the figures of each category; ``classes``: the declared classes
    of categorical labels (recorded verdicts only)."""
    if reply is not None and recorded is None:
        raise InputError("--reply: applies to --recorded only; a live judge's replies are "
                         "read by its own rule ('reply' under [tool.metaeval.judges.NAME])")
    if by is not None and by not in BY:
        raise InputError(f"--by: got {by!r}; expected one of {', '.join(map(repr, BY))}")
    audit = _audit(spec, items, recorded, samples, cache, bars, progress, scale, scale_from,
                   allowed, judges, labels, label_pass_at, probes, notify, reply, alt, by,
                   classes)
    warning = label_range_warning(items, audit.labels) if labels is None else ""
    return replace(audit, errors=items.errors + audit.errors, label_warning=warning)


def _audit(spec: str, items: JudgeItems, recorded: Path | None, samples: int | None,
           cache: Path | None, bars: Bars, progress: Progress | None, scale: Scale | None,
           scale_from: str, allowed: AllowedModules, judges: JudgesSection,
           labels: tuple[int, int] | None, label_pass_at: int | None,
           probes: ProbeSettings = ProbeSettings(),
           notify: Callable[[str], None] | None = None,
           reply: ReplyRule | None = None, alt: AltSettings = DEFAULT_ALT,
           by: str | None = None, classes: tuple[str, ...] = ()) -> JudgeAudit:
    if samples is not None and samples < 1:
        raise InputError(f"--samples: got {samples!r}; expected an integer >= 1")
    if recorded is not None:
        if samples is not None:
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
        audit = _recorded_audit(spec, items, recorded, bars, scale, scale_from, allowed,
                                judges, labels, label_pass_at, reply, alt, by, classes)
        return replace(audit, probe_plan=plan_of(ProbeSource.FILES, items, probes.seed))
    if scale is not None:
        raise InputError(f"{scale_from}: applies to --recorded only; a live judge answers "
                         "on the scale of its own config")
    if any(i.label_class is not None for i in items.pointwise):
        raise InputError("categorical labels (--label-classes): audit them from recorded "
                         "verdicts (--recorded); a live judge answers with a score or "
                         "pass/fail, not a class")
    judge = build_judge(spec, allowed=allowed, judges=judges)
    people = label_scale(judge.scale, labels, label_pass_at)
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
    store = ReplyCache(cache) if cache is not None else None
    try:
        asked: Judge = (CachedJudge(judge, store, concurrency_of(judge)) if store is not None
                        else judge)
        items, plan = _budget(asked, items, source, probes, samples or 1)
        if probes.write is not None:
            generated = [p for p in items.probes if p.origin == GENERATED]
            if source is ProbeSource.FILES:
                raise InputError("--write-probes: no probe was generated (--probes files); "
                                 "use --probes generated or both")
            write_ndjson(probes.write, tuple(probe_record(p) for p in generated))
            plan = replace(plan, written=str(probes.write))
        if notify is not None and not isinstance(judge, OFFLINE):
            notify(_cost_note(plan))  # the fakes cost nothing and call nothing
        table = ask_judge(asked, items, samples or 1, progress)
    finally:
        if store is not None:
            store.close()
    audit = audit_judge(judge.identity, judge.scale, items, table, source=AuditSource.LIVE,
                        modes=judge.modes, bars=bars, labels=people,
                        generated=source is not ProbeSource.FILES, alt=alt, by=by)
    return replace(audit, probe_plan=plan)


def plan_of(source: ProbeSource, items: JudgeItems, seed: int) -> ProbePlan:
    counts = Counter((p.origin, family(p)) for p in items.probes)
    return ProbePlan(source, tuple((o, f, n) for (o, f), n in counts.items()), seed)


def _budget(judge: Judge, items: JudgeItems, source: ProbeSource, probes: ProbeSettings,
            samples: int) -> tuple[JudgeItems, ProbePlan]:
    """The probes kept within ``probes.budget`` calls (all without one), and their plan."""
    costs = probe_costs(judge, items, samples)
    kept = items.probes
    if probes.budget is not None:
        kept = within_budget(items.probes, {k: c.calls for k, c in costs.items()},
                             probes.budget, probes.seed)
    chosen = items.with_probes(kept)
    plan = plan_of(source, chosen, probes.seed)
    return chosen, replace(plan, questions=sum(costs[p.id].questions for p in kept),
                           cached=sum(costs[p.id].cached for p in kept),
                           budget=probes.budget, dropped=len(items.probes) - len(kept))


def _cost_note(plan: ProbePlan) -> str:
    note = (f"probes: {plan.questions} question(s) to the judge, {plan.cached} cached, "
            f"{plan.calls} call(s) to make")
    if plan.budget is not None:
        note += (f" (--probe-budget {plan.budget}: {plan.dropped} probe(s) left out, "
                 f"sampled with seed {plan.seed})")
    return note


@dataclass(frozen=True, slots=True)
class JudgeAuditRequest:
    """What the user asked of ``metaeval judge-audit``; ``None`` means the default."""

    spec: str
    """The judge: a built-in name, an import path, or a name under
    ``[tool.metaeval.judges]``; with ``recorded`` it only names the judge."""
    items: tuple[Path, ...] = ()
    """Judge-item files or folders; empty: ``<meta_sets>/judge/``."""
    recorded: Path | None = None
    samples: int | None = None
    """``--samples``; None: 1 for a live judge, what the log holds for a recorded one."""
    scale_text: str | None = None
    """``--scale``: the recorded scores' scale (``LOW-HIGH``)."""
    pass_at: int | None = None
    cache_path: Path | None = None
    """The reply cache; None: ``.metaeval/judge-cache.sqlite`` under the project root."""
    no_cache: bool = False
    bars: Mapping[str, float] = field(default_factory=dict)
    """The bar flags given (``kappa_bar``, ``tpr_bar``, ``tnr_bar``, ``unscored_bar``,
    ``alpha``); each wins over its ``[tool.metaeval.judge_audit]`` key, which wins
    over ``DEFAULT_BARS``."""
    label_scale_text: str | None = None
    """``--label-scale``: the range of the items' integer labels (``LOW-HIGH``)."""
    label_pass_at: int | None = None
    probes: ProbeSource | None = None
    """``--probes``; None: the config's ``probes``, else ``FILES`` when the item files
    hold probes, else ``GENERATED``."""
    write_probes: Path | None = None
    """``--write-probes``: write the generated probes here (the probe file format)."""
    probe_budget: int | None = None
    """``--probe-budget``: the most calls the probes may make to a live judge."""
    reply: str | None = None
    """``--reply``: re-read the recorded replies' ``raw`` text by this rule (a preset
    or a pattern); None: the recorded verdicts as they are."""
    alt_epsilon: float | None = None
    """``--alt-epsilon``: the alternative annotator test's epsilon; None: the config's
    ``alt_epsilon``, else by its ``annotators`` kind (see ``alt_settings``)."""
    by: str | None = None
    """``--by``: ``category`` breaks the figures down by the items' category."""
    label_classes: str | None = None
    """``--label-classes``: categorical label classes, ``a,b,c``; None: the config's."""
    label_files: tuple[Path, ...] = ()
    """``--labels``: labels files whose item rows join the items as annotators
    (``metaeval.loaders.item_labels``; what ``metaeval label`` writes)."""


VERDICT_CODES = {AuditVerdict.MAY_GATE: ExitCode.OK, AuditVerdict.REPORT_ONLY: ExitCode.FINDINGS,
                 AuditVerdict.VOID: ExitCode.VOID}
"""May gate 0, report only 1, void (a control failed, or most calls to the judge) 3."""


@dataclass(frozen=True, slots=True)
class JudgeAuditResult:
    """One audit and the exit code it earns."""

    audit: JudgeAudit
    root: Path
    """The project root, where the calibration file lives unless named."""

    @property
    def code(self) -> ExitCode:
        """The verdict's code; 2 when bad input lines were left out (the rest was
        audited and shown, and the input still needs fixing)."""
        if self.audit.errors:
            return ExitCode.BAD_INPUT
        return VERDICT_CODES[self.audit.verdict]


def judge_audit(request: JudgeAuditRequest, config: Config,
                progress: Progress | None = None,
                notify: Callable[[str], None] | None = None) -> JudgeAuditResult:
    """Audit the judge of ``request`` in the project of ``config``. The flags win over
    the config, whose declared scale is for recorded verdicts only: a live judge
    answers on the scale of its own config."""
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
    audit = run_judge_audit(request.spec, items,
                            recorded=recorded, samples=request.samples, cache=cache, bars=bars,
                            progress=progress, scale=scale, scale_from=scale_from,
                            allowed=config.allowed_modules, judges=config.judges,
                            labels=labels, label_pass_at=label_pass, probes=probes,
                            notify=notify,
                            reply=None if request.reply is None else
                            reply_rule(request.reply, where="--reply"),
                            alt=alt_settings(
                                None if request.alt_epsilon is None
                                else alt_epsilon(request.alt_epsilon, "--alt-epsilon"),
                                settings.alt_epsilon, settings.annotators,
                                settings.require_alt_test), by=request.by,
                            classes=classes)
    return JudgeAuditResult(audit, config.root)


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


def record_calibration(result: JudgeAuditResult, path: Path | None, today: date
                       ) -> tuple[Path, bool]:
    """Add the audit's calibration entry to ``path`` (default: the project's
    calibration file) when it may gate and no input line was left out; returns the
    file and whether it was written."""
    target = path or result.root / DEFAULT_CALIBRATION
    if result.audit.errors:
        return target, False
    return target, write_calibration(target, result.audit, today)
