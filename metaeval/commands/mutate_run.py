"""The second phase of ``metaeval mutate``: a ``MutatePlan``'s mutants run into a ``Ran``.

A plan that stops (nothing to mutate) runs nothing and ends here with its exit
code, as does a run that proved nothing (``VoidRun``, or tests that wrote into
the source tree). A run that finished leaves its data: the caches
(``mutate_caches``), the shard's manifest and the ``--write-timings`` file; one
that cannot be written never loses the run, it is a warning (a cache) or a
write error of the ``Ran`` (exit 2). This module never prints, never renders and
never reads the findings file (``mutate_conclude`` does).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from metaeval.commands.mutate_caches import open_caches, save_caches
from metaeval.commands.mutate_values import Message, MutatePlan, MutateResult, Ran
from metaeval.errors import ExitCode, OutputError
from metaeval.mutation.model import MutantResult
from metaeval.mutation.run.options import VoidRun
from metaeval.mutation.run.runner import MutationRun, Progress, run_mutants
from metaeval.mutation.run.shard_manifest import write_manifest, write_timings
from metaeval.mutation.run.source_tree import tree_written


def run_planned(plan: MutatePlan, progress: Progress | None = None) -> Ran | MutateResult:
    """Run ``plan``'s mutants: the ``Ran`` to conclude, or the result of a run that
    stopped before it finished (nothing to run, a shard manifest that cannot be
    written, a void run)."""
    failed = _write_shard(plan, (), finished=plan.stop is ExitCode.OK)
    if plan.stop is not None or failed:  # a shard that cannot leave its manifest runs for nothing
        if plan.warm is not None:
            plan.warm.stop()
        code = ExitCode.BAD_INPUT if failed or plan.stop is None else plan.stop
        return MutateResult(code, plan.root, plan.notes, write_errors=failed)
    caches = open_caches(plan)
    try:
        run = run_mutants(plan.mutants, plan.options, progress, caches.result, plan.warm,
                          execute=plan.execute)
    except VoidRun as e:
        why = str(e)
    else:
        # No report, no cache: results of a tree that moved under the tests.
        why = tree_written(plan.tree) if plan.tree is not None else ""
        if not why:
            # Like the report: the caches and the manifest are written only by a run that
            # finished.
            return Ran(plan, run, save_caches(caches, run), _write_outputs(plan, run))
    return MutateResult(ExitCode.VOID, plan.root, plan.notes,
                        after=(Message(f"error: {why}", stderr=True),))


def _write_outputs(plan: MutatePlan, run: MutationRun) -> tuple[OutputError, ...]:
    """The finished shard's manifest and the ``--write-timings`` file; the errors of
    those that cannot be written."""
    written = _write_shard(plan, run.results, finished=True, baseline=run.baseline_duration,
                           timeout=run.timeout)
    if plan.request.write_timings is not None:
        try:
            write_timings(Path.cwd() / plan.request.write_timings, run.results)
        except OutputError as e:
            written += (e,)
    return written


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
