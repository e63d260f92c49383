"""Measure every check against people: the *measure* phase of ``metaeval meta-eval``.

Takes the cases that ``grading.grade_runs`` recorded and turns them into
numbers per check (confusion counts, rates with Wilson intervals, kappa with a
seeded bootstrap interval, weighted kappa for ordinal graders), a per-category
breakdown, tautology flags, bars and regressions against a baseline. It reads
no file and renders nothing; the same input always gives the same result.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from metaeval.audit import metrics
from metaeval.audit.ablation import Sensitivity
from metaeval.audit.grading import EVALUATOR, Case, CheckRuns, Grading, grade_runs
from metaeval.audit.label_agreement import Agreement
from metaeval.audit.measured_set import MeasuredSet
from metaeval.audit.metrics import Interval, Value
from metaeval.audit.tautology import (
    CASE_ONLY,
    SELF_COMPARISON,
    StaticReport,
    independence,
    sensitivity,
    static_flags,
)
from metaeval.config import NO_JUDGES, UNTESTED_CHOICES, Bars, JudgesSection
from metaeval.contract import Outcome
from metaeval.errors import InputError
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.keys import cut, did_you_mean
from metaeval.loaders.meta_set import MetaRun
from metaeval.state import dotted_keys, lookup

BY_CATEGORY = "category"
BY_TASK = "task"
BY_METADATA = "metadata."
MISSING_GROUP = "(missing)"
WILSON = "Wilson"
BOOTSTRAP = "bootstrap"
CLUSTER_BOOTSTRAP = "cluster bootstrap"
"""The interval methods a page names (``Measured.tpr_method`` and the others)."""
"""The group of a run whose metadata has no value at the key ``--by`` names."""


class Flag(Enum):
    """Why a check's numbers cannot be trusted, or why it misses what it promised."""

    TAUTOLOGY = "TAUTOLOGY"
    """No ablation moved its verdict although the set shows it could have (a swap with a
    trajectory it decides otherwise, or a source that reads only the task): it does not
    depend on what the agent did."""
    UNTESTED = "UNTESTED"
    """No run in the set makes it fail: a gap in the meta-set, not a fault of the check.
    A warning unless ``[tool.metaeval.meta_eval] untested = "fail"``."""
    CASE_ONLY = CASE_ONLY
    """Its source reads only the task (the case file), never the trajectory or final state."""
    SELF_COMPARISON = SELF_COMPARISON
    """Its source compares two things that come from the same place (the task)."""
    CONSTANT = "CONSTANT"
    """One verdict on every run."""
    NO_SIGNAL = "NO-SIGNAL"
    """The interval of Youden's J (TPR + TNR - 1) contains 0."""
    BELOW_TPR = "BELOW-MIN-TPR"
    """TPR is under its bar."""
    BELOW_TNR = "BELOW-MIN-TNR"
    """TNR is under its bar."""
    BELOW_KAPPA = "BELOW-MIN-KAPPA"
    """Kappa is under its bar."""
    REGRESSION = "REGRESSION"
    """TPR, TNR or kappa dropped since the baseline, or a failing flag appeared."""

    @property
    def fails(self) -> bool:
        """Whether this flag makes the command exit 1 (CONSTANT and NO-SIGNAL only warn:
        a bar on kappa or on the rates is how a project says how much signal it needs)."""
        return self not in {Flag.CONSTANT, Flag.NO_SIGNAL, Flag.UNTESTED}




@dataclass(frozen=True, slots=True)
class Settings:
    """How to measure: bars (global and per check), and the bootstrap's seed and size."""

    bars: Bars = field(default_factory=Bars)
    check_bars: Mapping[str, Bars] = field(default_factory=dict)
    seed: int = metrics.SEED
    resamples: int = metrics.RESAMPLES
    untested: str = "warn"
    """``warn`` or ``fail``: whether an UNTESTED check fails the run (``UNTESTED_CHOICES``)."""
    by: str = BY_CATEGORY
    """The breakdown besides the categories: ``category``, ``task`` or ``metadata.KEY``."""
    cluster: str = "auto"
    """What the bootstrap resamples: ``task`` (a cluster bootstrap over tasks), ``run``
    (each run on its own), or ``auto``: tasks when runs share one and there are at
    least ``metrics.MIN_CLUSTERS`` tasks, else runs."""

    def __post_init__(self) -> None:
        if self.untested not in UNTESTED_CHOICES:
            raise ValueError(f"untested: got {self.untested!r}; expected one of "
                             f"{', '.join(UNTESTED_CHOICES)}")

    def fails(self, flag: Flag) -> bool:
        """Whether ``flag`` fails the run under these settings."""
        return flag.fails or (flag is Flag.UNTESTED and self.untested == "fail")


@dataclass(frozen=True, slots=True)
class Measured:
    """Every number of one check (or the evaluator) against the human labels."""

    n: int
    confusion: metrics.Confusion
    tpr: Value
    tnr: Value
    precision: Value
    balanced_accuracy: Value
    kappa: Value
    scored_tpr: Value
    scored_tnr: Value
    tpr_ci: Interval
    tnr_ci: Interval
    kappa_ci: Interval
    youden_ci: Interval
    weighted_kappa: tuple[Value, Value] | None = None
    """(linear, quadratic) over scored cases, when the grader gives a 1-5 score."""
    ordinal_unscored: int = 0
    clusters: int = 0
    """Tasks the intervals resampled (a cluster bootstrap); 0 when cases were
    resampled one by one (and TPR, TNR carry Wilson intervals)."""
    shared_tasks: int = 0
    """Tasks with two or more of these runs: when nonzero and ``clusters`` is 0, the
    intervals treat trials of one task as independent (too few tasks, or asked to)."""
    tpr_method: str = WILSON
    """How ``tpr_ci`` was computed: ``Wilson``, ``cluster bootstrap``, or Wilson where
    the cluster bootstrap collapsed to a point on a boundary (``rate_interval``)."""
    tnr_method: str = WILSON
    kappa_method: str = BOOTSTRAP


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    measured: Measured
    flags: tuple[Flag, ...]
    notes: tuple[str, ...]
    sensitivity: Sensitivity | None = None
    static: tuple[StaticReport, ...] = ()
    failing: tuple[Flag, ...] | None = None
    """The flags that fail the run under its settings; None: those whose ``fails`` says so."""
    sources: LabelSources | None = None
    """Which labels measured a check; None for the evaluator (the overall verdicts)."""

    def fails(self, flag: Flag) -> bool:
        """Whether ``flag`` of this check fails the run (UNTESTED does when configured)."""
        return flag in self.failing if self.failing is not None else flag.fails


@dataclass(frozen=True, slots=True)
class Cell:
    """One check on the runs of one category: counts, and which runs it caught or let through.

    ``caught``: human fail, graded fail. ``let_through``: human fail, graded pass.
    ``wrongly_failed``: human pass, graded fail. ``unscored``: the check could not decide.
    """

    agree: int
    n: int
    human_fail: int
    caught: tuple[str, ...]
    let_through: tuple[str, ...]
    wrongly_failed: tuple[str, ...]
    unscored: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Category:
    n: int
    cells: tuple[tuple[str, Cell], ...]
    """(check name, cell) in check-name order, the evaluator last."""


@dataclass(frozen=True, slots=True)
class LabelSources:
    """Which human labels a check was measured on: its own (a per-check label), an
    overall pass (a run people passed should pass every check), and the runs it was
    not measured on (an overall fail with no label of the check: which check failed is
    not said; or no label, or annotators who tied)."""

    own: int
    overall_pass: int
    not_measured: int


@dataclass(frozen=True, slots=True)
class MetaEvalResult:
    checks: tuple[CheckResult, ...]
    evaluator: CheckResult
    categories: tuple[tuple[str, Category], ...]
    settings: Settings
    baseline_missing: tuple[str, ...] = ()
    """Checks in the baseline that this run did not measure."""
    groups: tuple[tuple[str, Category], ...] = ()
    """The breakdown ``settings.by`` asks for, when it is not by category."""
    unlabelled: int = 0
    """Runs graded but left out of the evaluator's numbers: no overall human verdict."""
    annotators: tuple[Agreement, ...] = ()
    """How the annotators of the labels files agree, per check; empty without them."""
    tied: int = 0
    """(run, check) pairs whose annotators tied: no gold label, left unlabelled."""
    unmeasured: str = ""
    """Why nothing was measured (no check has a labelled case), e.g. ``0 of 20 runs
    labelled: give --labels or label them``; empty when something was."""
    measured: MeasuredSet | None = None
    """Which set of runs was measured (``--set``); None when not said (a library call)."""

    @property
    def failed(self) -> bool:
        """A bar missed, a regression, a tautology, or a check gone since the baseline."""
        every = (*self.checks, self.evaluator)
        return bool(self.baseline_missing) or any(c.fails(f) for c in every for f in c.flags)

    @property
    def measured_any(self) -> bool:
        """Whether any check (or the evaluator) has a human-labelled case."""
        return any(c.measured.n for c in (*self.checks, self.evaluator))


@dataclass(frozen=True, slots=True)
class BaselineCheck:
    """What a previous result said about one check."""

    tpr: float
    tnr: float
    kappa: float
    flags: tuple[str, ...] = ()


def clustered(cases: Sequence[Case], cluster: str) -> tuple[bool, int]:
    """Whether the intervals of ``cases`` resample tasks (``cluster``: auto, task or
    run), and how many tasks hold two or more of them. ``auto`` counts only those: a
    task of one run is no cluster (runs with no task of their own, OTel traces, each
    get their id as a task), so singletons never switch the cluster bootstrap on."""
    per_task = Counter(case.task for case in cases)
    shared = sum(n > 1 for n in per_task.values())
    if cluster == "task":
        return True, shared
    if cluster == "run":
        return False, shared
    return shared >= metrics.MIN_CLUSTERS, shared


def rate_interval(bootstrap: Interval, successes: int, n: int) -> tuple[Interval, str]:
    """A rate's cluster-bootstrap interval and its method; Wilson's, said so, when the
    bootstrap collapsed to a point on a boundary (9 of 9 in every resample): a point
    claims a certainty the data does not hold, and Wilson covers the boundary."""
    if bootstrap.low == bootstrap.high and bootstrap.low in (0.0, 1.0) and not bootstrap.reason:
        return (metrics.wilson_interval(successes, n),
                f"{WILSON} (the cluster bootstrap collapsed to {bootstrap.low:.2f})")
    return bootstrap, CLUSTER_BOOTSTRAP


def kappa_interval(bootstrap: Interval, c: metrics.Confusion, method: str
                   ) -> tuple[Interval, str]:
    """Kappa's bootstrap interval and its method; when every resample agreed on every
    case it collapses to [1, 1], claiming a certainty the data does not hold: then
    Wilson's interval of the observed agreement (every case agreed), mapped to kappa
    with chance agreement held at its observed value, and said so."""
    if not (bootstrap.low == bootstrap.high == 1.0) or bootstrap.reason or c.unscored:
        return bootstrap, method
    chance = (c.positives / c.n) ** 2 + (c.negatives / c.n) ** 2
    if chance >= 1.0:
        return bootstrap, method  # one label only: kappa is a fallback with its reason
    low = (metrics.wilson_interval(c.n, c.n).low - chance) / (1.0 - chance)
    return (Interval(max(low, -1.0), 1.0, bootstrap.level),
            f"{WILSON} on the observed agreement, chance agreement as observed (the "
            f"{method} collapsed to 1.00)")


def measure(cases: Sequence[Case], *, seed: int = metrics.SEED,
            resamples: int = metrics.RESAMPLES, cluster: str = "run") -> Measured:
    human = [c.human for c in cases]
    graded = [c.graded for c in cases]
    c = metrics.confusion(human, graded)
    use_clusters, shared = clustered(cases, cluster)
    methods = (WILSON, WILSON, BOOTSTRAP)
    if use_clusters:
        by_task = metrics.cluster_intervals(human, graded, [case.task for case in cases],
                                            seed=seed, resamples=resamples)
        tpr_ci, tpr_method = rate_interval(by_task.tpr, c.tp, c.positives)
        tnr_ci, tnr_method = rate_interval(by_task.tnr, c.tn, c.negatives)
        intervals = (tpr_ci, tnr_ci, by_task.kappa, by_task.youden)
        methods = (tpr_method, tnr_method, CLUSTER_BOOTSTRAP)
    else:
        intervals = (metrics.wilson_interval(c.tp, c.positives),
                     metrics.wilson_interval(c.tn, c.negatives),
                     metrics.kappa_interval(human, graded, seed=seed, resamples=resamples),
                     metrics.youden_interval(human, graded, seed=seed, resamples=resamples))
    kappa_ci, kappa_method = kappa_interval(intervals[2], c, methods[2])
    intervals = (intervals[0], intervals[1], kappa_ci, intervals[3])
    methods = (methods[0], methods[1], kappa_method)
    weighted = None
    ordinal_unscored = 0
    pairs = [(case.human_score, case.graded_score) for case in cases
             if case.human_score is not None]
    if any(case.graded_score is not None for case in cases):
        hs = [h for h, _ in pairs if h is not None]
        gs = [g for _, g in pairs]
        ordinal_unscored = sum(g is None for g in gs)
        weighted = (metrics.scored_weighted_kappa(hs, gs, "linear"),
                    metrics.scored_weighted_kappa(hs, gs, "quadratic"))
    return Measured(
        n=c.n, confusion=c, tpr=metrics.tpr(c), tnr=metrics.tnr(c),
        precision=metrics.precision(c), balanced_accuracy=metrics.balanced_accuracy(c),
        kappa=metrics.kappa(human, graded), scored_tpr=metrics.scored_tpr(c),
        scored_tnr=metrics.scored_tnr(c),
        tpr_ci=intervals[0], tnr_ci=intervals[1], kappa_ci=intervals[2], youden_ci=intervals[3],
        weighted_kappa=weighted, ordinal_unscored=ordinal_unscored,
        clusters=by_task.clusters if use_clusters else 0, shared_tasks=shared,
        tpr_method=methods[0], tnr_method=methods[1], kappa_method=methods[2])


def _signal_flags(cases: Sequence[Case], m: Measured) -> tuple[list[Flag], list[str]]:
    flags: list[Flag] = []
    notes: list[str] = []
    verdicts = {c.graded for c in cases}
    if len(cases) > 1 and len(verdicts) == 1:
        flags.append(Flag.CONSTANT)
        reasons = {c.reason for c in cases if c.reason}
        # Unscored everywhere for one reason (no state recorded, no criterion): that
        # reason, not only the count, is what a reader must fix.
        why = (f": {next(iter(reasons))}" if len(reasons) == 1
               and Outcome.UNSCORED in verdicts else "")
        notes.append(f"{next(iter(verdicts)).value} on every one of {len(cases)} runs{why}")
    if m.youden_ci.contains(0.0):
        flags.append(Flag.NO_SIGNAL)
        why = f" ({m.youden_ci.reason})" if m.youden_ci.reason else ""
        notes.append(f"Youden's J interval [{m.youden_ci.low:.2f}, {m.youden_ci.high:.2f}] "
                     f"contains 0{why}")
    return flags, notes


def _bar_flags(m: Measured, bars: Bars) -> tuple[list[Flag], list[str]]:
    flags: list[Flag] = []
    notes: list[str] = []
    for flag, label, value, bar in ((Flag.BELOW_TPR, "TPR", m.tpr, bars.min_tpr),
                                    (Flag.BELOW_TNR, "TNR", m.tnr, bars.min_tnr),
                                    (Flag.BELOW_KAPPA, "kappa", m.kappa, bars.min_kappa)):
        if bar is None:
            continue
        if value.reason and label != "kappa":
            # A rate with no case to measure it (no human-fail case for TNR) is not
            # below its bar: it is not measured. The check's measured figures still
            # meet their bars or not; UNTESTED and the note say what the set lacks.
            notes.append(f"{label} bar {bar:.3f} not checked: {value.reason}")
        elif value.value < bar:
            flags.append(flag)
            notes.append(f"{label} {value.value:.3f} < bar {bar:.3f}")
    return flags, notes


def _regression(m: Measured, flags: Sequence[Flag], before: BaselineCheck | None,
                settings: Settings) -> tuple[list[Flag], list[str]]:
    if before is None:
        return [], []
    notes = []
    # Compare at the precision the JSON report keeps, so re-reading our own output is stable.
    for label, now, then in (("TPR", m.tpr.value, before.tpr), ("TNR", m.tnr.value, before.tnr),
                             ("kappa", m.kappa.value, before.kappa)):
        if round(now, 4) < round(then, 4):
            notes.append(f"{label} {then:.4f} -> {now:.4f} since the baseline")
    new = sorted({f.value for f in flags if settings.fails(f)} - set(before.flags))
    if new:
        notes.append(f"new since the baseline: {', '.join(new)}")
    return ([Flag.REGRESSION], notes) if notes else ([], [])


def _check_result(name: str, cases: Sequence[Case], settings: Settings,
                  baseline: Mapping[str, BaselineCheck], check: CheckRuns | None,
                  bars: Bars | None) -> CheckResult:
    m = measure(cases, seed=settings.seed, resamples=settings.resamples,
                cluster=settings.cluster)
    flags: list[Flag] = []
    notes: list[str] = []
    sens = None
    static: tuple[StaticReport, ...] = ()
    if check is not None:
        sens = check.sensitivity if check.sensitivity is not None else sensitivity(check)
        static = static_flags(check.graders)
        why = independence(sens, static)
        if why is not None:
            flags.append(Flag.TAUTOLOGY)
            notes.append(why)
        for report in static:
            for text in report.flags:
                flag = Flag(text)
                if flag not in flags:
                    flags.append(flag)
            notes.extend(f"{report.function}: {d}" for d in report.details)
        if why is None and not any(c.graded is Outcome.FAIL for c in cases):
            flags.append(Flag.UNTESTED)
            notes.append(_untested_note(cases, sens))
    for more, more_notes in (_signal_flags(cases, m), _bar_flags(m, bars or Bars())):
        flags.extend(more)
        notes.extend(more_notes)
    regressed, regress_notes = _regression(m, flags, baseline.get(name), settings)
    every = (*flags, *regressed)
    sources = None if check is None else LabelSources(
        sum(not c.from_overall for c in cases), sum(c.from_overall for c in cases),
        check.unlabelled)
    return CheckResult(name, m, every, (*notes, *regress_notes), sens, static,
                       tuple(f for f in every if settings.fails(f)), sources)


def _untested_note(cases: Sequence[Case], sens: Sensitivity) -> str:
    """What an UNTESTED flag means for this check, and what to do about it."""
    note = "UNTESTED: no run in the set makes it fail; add a near-miss that does"
    human_fail = sum(c.human is Outcome.FAIL for c in cases)
    if human_fail:
        note += (f" (people failed {human_fail} of its runs and it failed none of them: "
                 "see its TNR)")
    if sens.unmoved:
        # Say why this is no TAUTOLOGY: ablations only take things away, and no run
        # holds a trajectory it would fail to swap in.
        note += ("; no ablation moved its verdict either, which with no failing run to "
                 "swap from shows a gap in the set, not a tautology")
    return note


def check_by(by: str) -> str:
    """``by`` when it names a breakdown (``category``, ``task``, ``metadata.KEY``); else
    an InputError saying what was expected."""
    if by in (BY_CATEGORY, BY_TASK) or (by.startswith(BY_METADATA) and by != BY_METADATA
                                        and "" not in by[len(BY_METADATA):].split(".")):
        return by
    raise InputError(f"--by: got {cut(by)!r}; expected 'category', 'task' or 'metadata.KEY' "
                     "(a dotted key of the runs' metadata)")


def _held(grading: Grading, by: str) -> str:
    """``by`` (see ``check_by``) when some run holds it: a ``metadata.KEY`` no run holds
    would make one ``(missing)`` group of every run, so it is an InputError naming the
    keys the runs hold instead."""
    by = check_by(by)
    if not by.startswith(BY_METADATA):
        return by
    key = by[len(BY_METADATA):]
    cases = [*grading.evaluator, *(case for c in grading.checks for case in c.cases)]
    if not cases or any(lookup(case.metadata, key)[0] for case in cases):
        return by  # no labelled case: nothing measured, which the result says instead
    held: set[str] = set()
    for case in cases:
        if len(held) < 500:  # enough for a "did you mean", bounded
            held.update(dotted_keys(case.metadata))
    listed = ", ".join(map(repr, sorted(held)[:10])) or "none"
    raise InputError(f"--by: got {cut(by)!r}; no run's metadata holds {cut(key)!r} (they "
                     f"hold {listed}){did_you_mean(key, held)}")


def group_of(by: str) -> Callable[[Case], str]:
    """The group a case falls in for ``by`` (checked by ``check_by``): its category, its
    task id, or the value at ``KEY`` of its run's metadata (JSON text unless a string;
    ``(missing)`` when absent)."""
    if by == BY_CATEGORY:
        return lambda case: case.category
    if by == BY_TASK:
        return lambda case: case.task
    key = by[len(BY_METADATA):]

    def value(case: Case) -> str:
        found, v = lookup(case.metadata, key)
        if not found:
            return MISSING_GROUP
        return v if isinstance(v, str) else json.dumps(v, sort_keys=True)

    return value


def _categories(grading: Grading, by: str = BY_CATEGORY) -> tuple[tuple[str, Category], ...]:
    columns = [(c.name, c.cases) for c in grading.checks] + [(EVALUATOR, grading.evaluator)]
    group = group_of(by)
    runs_per_category: dict[str, set[str]] = {}
    for case in grading.evaluator:
        runs_per_category.setdefault(group(case), set()).add(case.run_id)
    for _, cases in columns:  # a run with no overall verdict still has its checks' groups
        for case in cases:
            runs_per_category.setdefault(group(case), set()).add(case.run_id)
    result = []
    for category in sorted(runs_per_category):
        cells = []
        for name, cases in columns:
            mine = [c for c in cases if group(c) == category]
            if not mine:
                continue

            def ids(human: Outcome, graded: Outcome, rows: list[Case] = mine) -> tuple[str, ...]:
                return tuple(c.run_id for c in rows if c.human is human and c.graded is graded)

            unscored = tuple(c.run_id for c in mine if c.graded is Outcome.UNSCORED)
            cells.append((name, Cell(
                agree=sum(c.human is c.graded for c in mine), n=len(mine),
                human_fail=sum(c.human is Outcome.FAIL for c in mine),
                caught=ids(Outcome.FAIL, Outcome.FAIL),
                let_through=ids(Outcome.FAIL, Outcome.PASS),
                wrongly_failed=ids(Outcome.PASS, Outcome.FAIL), unscored=unscored)))
        result.append((category, Category(len(runs_per_category[category]), tuple(cells))))
    return tuple(result)


def meta_eval(runs: Sequence[MetaRun], settings: Settings | None = None,
              baseline: Mapping[str, BaselineCheck] | None = None, *,
              allowed: AllowedModules = BUILTINS_ONLY,
              judges: JudgesSection = NO_JUDGES) -> MetaEvalResult:
    """Grade every run with every check and the evaluator, then measure and flag each.
    ``allowed``: the modules checks may name graders and judges from, ``judges`` the
    judge names they may use (the config's)."""
    return measure_grading(grade_runs(runs, allowed, judges), settings, baseline)


def measure_grading(grading: Grading, settings: Settings | None = None,
                    baseline: Mapping[str, BaselineCheck] | None = None) -> MetaEvalResult:
    settings = settings or Settings()
    before = baseline or {}
    checks = tuple(
        _check_result(c.name, c.cases, settings, before, c,
                      settings.check_bars.get(c.name, Bars()).over(settings.bars))
        for c in grading.checks)
    evaluator = _check_result(EVALUATOR, grading.evaluator, settings, before, None, None)
    measured = {c.name for c in checks} | {EVALUATOR}
    missing = tuple(sorted(set(before) - measured))
    groups = () if settings.by == BY_CATEGORY else _categories(grading, _held(grading,
                                                                               settings.by))
    return MetaEvalResult(checks, evaluator, _categories(grading), settings, missing, groups,
                          grading.unlabelled)
