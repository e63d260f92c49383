"""The second phase of ``metaeval mutate``: a ``MutatePlan``'s mutants run into a ``Ran``.

A plan that stops (nothing to mutate) runs nothing and ends here with its exit
code, as does a shard that cannot write its manifest and a run that proved
nothing (``VoidRun``, or tests that wrote into the source tree). What a run
reads before and leaves after (caches, shard manifest, timings) is
``mutate_run_files``'s. This module never prints, never renders and never reads
the findings file (``mutate_conclude`` does).
"""

from __future__ import annotations

from metaeval.commands.mutate_run_files import leave, open_run_files
from metaeval.commands.mutate_values import MutatePlan, MutateResult, Ran
from metaeval.errors import ExitCode
from metaeval.mutation.isolation.options import VoidRun
from metaeval.mutation.run.runner import Progress, run_mutants
from metaeval.mutation.run.source_tree import tree_written


def run_planned(plan: MutatePlan, progress: Progress | None = None) -> Ran | MutateResult:
    """Run ``plan``'s mutants: the ``Ran`` to conclude, or the result of a run that
    stopped before it finished (nothing to run, a shard manifest that cannot be
    written, a void run)."""
    write_errors = open_run_files(plan)
    if plan.stop is not None or write_errors or plan.void:
        if plan.warm is not None:
            plan.warm.stop()
        if not write_errors and plan.stop is None:
            return MutateResult.void(plan, plan.void)
        code = ExitCode.BAD_INPUT if write_errors or plan.stop is None else plan.stop
        return MutateResult(code, plan.root, plan.notes, write_errors=write_errors)
    try:
        run = run_mutants(plan.mutants, plan.options, progress, plan.results, plan.warm,
                          execute=plan.execute)
    except VoidRun as e:
        return MutateResult.void(plan, str(e))
    # No report, no cache: results of a tree that moved under the tests.
    why = tree_written(plan.tree) if plan.tree is not None else ""
    if why:
        return MutateResult.void(plan, why)
    # Like the report: the caches and the manifest are written only by a run that finished.
    return Ran(plan, run, *leave(plan, run))

