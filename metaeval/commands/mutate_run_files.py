"""The files one ``metaeval mutate`` run writes before its first mutant and leaves
after its last, besides its report: the caches, the shard's manifest and the
``--write-timings`` file, written in one place.

Three caches make a rerun fast: the result cache (a mutant's earlier status,
while nothing it depends on changed, read by the plan), the scan cache (a
file's mutants, filled while the plan parses the targets) and the coverage map
(which test ran which line, loaded when the warm runner starts, from
``RunOptions.coverage_cache``). A shard writes its manifest unfinished before
it runs (one that cannot leave it would run for nothing) and finished after.
``open_run_files`` does what comes before the run; ``leave`` what comes after a
run that finished, and only then, as the report is. A cache that cannot be
written is a warning: it costs the next run its speed, never this run its
result; a manifest or timings file that cannot be written is a write error
(exit 2). This module never runs a mutant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from metaeval.commands.mutate_values import Message, MutatePlan
from metaeval.errors import ExitCode, OutputError
from metaeval.mutation.model import MutantResult
from metaeval.mutation.run.runner import MutationRun
from metaeval.mutation.run.shard_manifest import write_manifest
from metaeval.mutation.run.timings import write_timings


def open_run_files(plan: MutatePlan) -> tuple[OutputError, ...]:
    """A shard's manifest written unfinished (finished, with no result, when the
    plan stops with nothing to run); the error when it cannot be written, on which
    the run must not start."""
    return _write_shard(plan, (), finished=plan.stop is ExitCode.OK)


def leave(plan: MutatePlan, run: MutationRun
          ) -> tuple[tuple[Message, ...], tuple[OutputError, ...]]:
    """After ``run`` finished: the result cache, the scan cache and the coverage map
    saved (a warning each that cannot be), the shard's manifest finished and the
    ``--write-timings`` file written (the errors of those that cannot be)."""
    result, scan, kept = plan.results, plan.scan, plan.options.coverage_cache
    coverage = run.fork.coverage_map if run.fork else None
    warnings = [_save(lambda: result.save(run.baseline_duration, run.timeout))
                if result is not None else None,
                _save(scan.save) if scan is not None else None,
                _save(lambda: coverage.save(kept, plan.root)) if coverage and kept else None]
    written = _write_shard(plan, run.results, finished=True, baseline=run.baseline_duration,
                           timeout=run.timeout)
    if plan.request.write_timings is not None:
        try:
            write_timings(Path.cwd() / plan.request.write_timings, run.results)
        except OutputError as e:
            written += (e,)
    return tuple(w for w in warnings if w is not None), written


def _save(save: Callable[[], None]) -> Message | None:
    try:
        save()
    except OutputError as e:
        return Message(f"warning: {e}; the next run starts without it", stderr=True)
    return None


def _write_shard(plan: MutatePlan, results: Sequence[MutantResult], *, finished: bool,
                 baseline: float = 0.0, timeout: float = 0.0) -> tuple[OutputError, ...]:
    """Write a shard's manifest (nothing without ``--shard``); the error when it
    cannot be written."""
    if plan.shard is None:
        return ()
    try:
        write_manifest(plan.shard, results, finished=finished, baseline=baseline,
                       timeout=timeout)
    except OutputError as e:
        return (e,)
    return ()
