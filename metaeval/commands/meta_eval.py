"""``metaeval meta-eval``: every check over the meta-sets, measured against the
human labels.

``meta_eval`` loads the meta-sets (the configured ones unless paths are given),
merges the flag bars over the config's (a flag overrides the config for that
metric, per-check bars included), reads the baseline, and measures. It returns
a ``MetaEvalOutcome`` and never prints.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from metaeval.audit.baseline import load_baseline
from metaeval.audit.check_measures import MetaEvalResult, Settings, check_by, measure_grading
from metaeval.audit.label_agreement import annotator_agreement
from metaeval.audit.measured_set import SetChoice, measure_set, open_set
from metaeval.audit.stream import Stream
from metaeval.commands.import_runs import imported_runs, where
from metaeval.config import Bars, Config, unknown_check_bars
from metaeval.errors import ExitCode, InputError, shown
from metaeval.loaders.labels_files import Annotation, Joiner, configured, read_labels
from metaeval.loaders.meta_set import MetaRun, MetaSet, data_files, iter_meta_runs
from metaeval.loaders.suites import Applier, suite_names
from metaeval.untrusted_json import LoadError


@dataclass(frozen=True, slots=True)
class MetaEvalRequest:
    """What the user asked of ``metaeval meta-eval``; ``None`` means the configured value."""

    paths: tuple[Path, ...] = ()
    """Meta-set files or folders; empty: ``[tool.metaeval] meta_sets``."""
    min_tpr: float | None = None
    min_tnr: float | None = None
    min_kappa: float | None = None
    baseline: Path | None = None
    """A previous ``--format json`` result, for regressions."""
    seed: int | None = None
    resamples: int | None = None
    by: str = "category"
    """The breakdown besides the categories: ``category``, ``task`` or ``metadata.KEY``."""
    labels: tuple[Path, ...] = ()
    """Labels files; empty: ``[tool.metaeval.meta_eval] labels``."""
    cluster: str | None = None
    """``auto``, ``task`` or ``run``: what the bootstrap resamples."""
    runs: tuple[tuple[str, Path], ...] = ()
    """``--runs FORMAT:PATH``: a harness's files read through the importer of FORMAT
    (as ``metaeval import`` reads them), measured beside ``paths``."""
    set_choice: SetChoice | None = None
    """``--set``; None: golden when a split lies beside the meta-sets, else all."""


@dataclass(frozen=True, slots=True)
class MetaEvalOutcome:
    """The meta-sets loaded and, when there was a run to measure, the result."""

    targets: tuple[Path, ...]
    loaded: MetaSet
    """The files read and every error; its ``runs`` is empty: each run was graded as it
    was read, and let go."""
    result: MetaEvalResult | None
    """None when no run loaded: nothing was measured."""

    @property
    def code(self) -> ExitCode:
        """2 for bad input (the good lines are still measured), 3 for nothing to
        measure, 1 when a check misses a bar, regresses or is a tautology, else 0."""
        if self.result is None:
            return ExitCode.BAD_INPUT if self.loaded.errors else ExitCode.VOID
        if self.result.unmeasured:
            return ExitCode.VOID  # bad input or not, nothing was measured
        if self.loaded.errors:
            return ExitCode.BAD_INPUT
        return ExitCode.FINDINGS if self.result.failed else ExitCode.OK


def _settings(request: MetaEvalRequest, config: Config) -> Settings:
    bars, check_bars = config.meta_eval.with_flags(
        Bars(request.min_tpr, request.min_tnr, request.min_kappa))
    return Settings(
        bars=bars, check_bars=check_bars,
        seed=config.meta_eval.seed if request.seed is None else request.seed,
        resamples=(config.meta_eval.resamples if request.resamples is None
                   else request.resamples),
        untested=config.meta_eval.untested, by=check_by(request.by),
        cluster=config.meta_eval.cluster if request.cluster is None else request.cluster)


def meta_eval(request: MetaEvalRequest, config: Config) -> MetaEvalOutcome:
    """Measure every check of the meta-sets of ``request`` in the project of ``config``.
    Raises InputError for a bar that names no check of the configured meta-sets, or a
    baseline that cannot be read.

    Each run is graded as it is read, with the suite's checks added and the labels
    files' labels joined, and then let go: memory holds the verdicts, not the runs.
    """
    targets = list(request.paths) or ([] if request.runs else config.paths(config.meta_sets))
    settings = _settings(request, config)
    before = load_baseline(request.baseline) if request.baseline is not None else None
    suite = config.meta_eval.suite
    files, errors = data_files(targets)
    labels = list(request.labels) or [configured(config.root, name)
                                      for name in config.meta_eval.labels]
    warnings: list[LoadError] = []
    annotations, label_errors = read_labels(labels, warnings) if labels else ([], [])
    joiner = Joiner(annotations) if labels else None
    applier = Applier(suite, config.allowed_modules, config.judges)
    stream = Stream(config.allowed_modules, config.judges)
    names: set[str] = set()
    runs: Iterable[MetaRun] = itertools.chain(
        iter_meta_runs(files, errors, config.allowed_modules, config.judges,
                       suite_names(suite), warnings),
        *(imported_runs(fmt, path, errors, config.allowed_modules, config.judges,
                        suite_names(suite), warnings, config.meta_eval.run_map)
          for fmt, path in request.runs))
    first_at: dict[str, str] = {}
    refused = Refused()
    opened = open_set(request.set_choice, targets)
    keep = opened.keep
    seen: list[str] = []
    for run in runs:
        # Meta-set files refuse a repeated id among themselves; this also catches one
        # repeated within a --runs log or between a log and a meta-set.
        if run.id in first_at:
            at, line, record = where(run.source)
            errors.append(LoadError(at, line, ".".join(x for x in (record, "id") if x),
                                    f"got {shown(run.id)}; expected an id not already "
                                    f"used (first at {first_at[run.id]})"))
            continue
        first_at[run.id] = run.source
        seen.append(run.id)
        if keep is not None and run.id not in keep:
            continue  # outside the set measured: said by measure_set, never graded
        done = applier.apply(run)
        if isinstance(done, LoadError):
            refused.add(run.id, done, errors)
            continue
        if joiner is not None:
            done = joiner.join(done)
        names.update(c.label for c in done.input.task.checks)
        stream.add(done)
    errors[:] = refused.counted(errors)
    errors += applier.seen.unused(suite)
    joined: tuple[Annotation, ...] = ()
    tied = 0
    if joiner is not None:
        # A file that did not load (line 0) hides which ids it held: with one, every
        # row naming no loaded run is put down to it.
        whole = any(e.line == 0 for e in errors) or (bool(errors) and not stream.runs)
        joined, join_errors, tied = joiner.finish(
            lambda run_id: whole or run_id in refused.ids)
        # Rows are read, then joined: their errors are put back in line order.
        errors += sorted((*label_errors, *join_errors), key=lambda e: (e.path, e.line))
    read = (*map(str, files), *(str(path) for _, path in request.runs), *map(str, labels))
    loaded = MetaSet((), tuple(errors), read, tuple(warnings))
    # Bars name checks of the configured meta-sets: a run on one file of them need
    # not hold every check they name, but the run on all of them (CI's) must.
    unknown_bar = None if request.paths or request.runs else unknown_check_bars(
        config, names, ", ".join(map(str, targets)))
    if unknown_bar is not None and stream.runs:
        raise InputError("\n".join([*map(str, loaded.errors), unknown_bar]))
    if not stream.runs:
        return MetaEvalOutcome((*targets, *(path for _, path in request.runs)), loaded, None)
    chosen = measure_set(opened, seen, seen)
    result = replace(measure_grading(stream.finish(), settings, before),
                     measured=chosen.measured)
    if joiner is not None:
        result = replace(result, annotators=annotator_agreement(joined), tied=tied)
    if not result.measured_any:
        result = replace(result, unmeasured=_unmeasured(stream.runs, labels, loaded.errors))
    return MetaEvalOutcome(tuple(targets), loaded, result)


class Refused:
    """Runs the suite refused: their ids (their label rows fail only because of them),
    and each distinct error once, with how many runs it stopped. A grader's bad import
    path stops every run it applies to; said once, it is not lost in a hundred lines."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.more: dict[tuple[str, str], int] = {}

    def add(self, run_id: str, error: LoadError, errors: list[LoadError]) -> None:
        self.ids.add(run_id)
        key = (error.field, error.message)
        if key in self.more:
            self.more[key] += 1
        else:
            self.more[key] = 0
            errors.append(error)

    def counted(self, errors: list[LoadError]) -> list[LoadError]:
        """``errors`` with each refusal said once saying how many more runs it stopped."""
        out = []
        for e in errors:
            n = self.more.get((e.field, e.message), 0)
            out.append(e if not n else LoadError(e.path, e.line, e.field, (
                f"{e.message} (and {n} more runs: the same error)")))
        return out


def _unmeasured(runs: int, labels: list[Path], errors: tuple[LoadError, ...]) -> str:
    """Why no check has a labelled case: the reason a void result gives."""
    if not labels:
        return f"0 of {runs} runs labelled: give --labels or label them"
    why = "; see the errors" if errors else ""
    return (f"0 of {runs} runs labelled: no row of {', '.join(map(str, labels))} gave one "
            f"a label{why}")
