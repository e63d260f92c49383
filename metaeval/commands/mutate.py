"""``metaeval mutate``: one request, from the options a user gave to a result.

The command is three phases, each in a module of its own that takes the value
the one before gives and returns the next, never calling back up here:

1. ``mutate_plan.plan_mutate``: ``MutateRequest`` -> ``MutatePlan`` (the config
   read, the flags handed to ``metaeval.mutation.plan``: targets, patch mutants,
   ``--since``, the shard's share; nothing runs yet);
2. ``mutate_run.run_planned``: ``MutatePlan`` -> ``Ran`` (the mutants run, the
   caches, shard manifest and timings written), or the ``MutateResult`` of a
   plan that stopped or a run that proved nothing;
3. ``mutate_conclude.conclude``: ``Ran`` -> ``MutateResult`` (the exit code,
   the survivors against the findings file).

``plan_mutate`` and ``run_plan`` are apart so that a command line can show the
plan's notes (the ``--since`` count) before the progress of the run, as they
happen; ``plan_and_run`` is both, for a caller with nothing to show in between,
and sends a ``--trace-only`` plan to ``mutate_trace`` (that mode runs no mutant).
This module never prints, never renders and never exits: every line for the
user is a ``Message`` in the value it returns, and the report and SARIF files
are the rendering layer's to write (``metaeval.report.mutate_outcome.finish``).
"""

from __future__ import annotations

from metaeval.commands.mutate_conclude import conclude
from metaeval.commands.mutate_plan import plan_mutate
from metaeval.commands.mutate_run import run_planned
from metaeval.commands.mutate_trace import trace_plan
from metaeval.commands.mutate_values import MutatePlan, MutateRequest, MutateResult
from metaeval.mutation.run.runner import Progress

__all__ = ["plan_and_run", "plan_mutate", "run_plan"]


def run_plan(plan: MutatePlan, progress: Progress | None = None) -> MutateResult:
    """Run a plan's mutants and conclude the run: its exit code, its survivors
    tracked when the request asks to.

    A plan that stops runs nothing and returns its exit code. A ``VoidRun`` is a
    result (exit 3 with its message), not an exception. A file that cannot be
    written never loses the run: a cache is a warning in ``after``; the findings
    file, a shard manifest or a timings file is in ``write_errors``, with exit code 2.
    A ``--trace-only`` plan runs no mutant: ``mutate_trace.trace_plan`` takes it.
    """
    if plan.request.trace_only:
        raise ValueError("a --trace-only plan runs no mutant: mutate_trace.trace_plan traces it")
    ran = run_planned(plan, progress)
    return ran if isinstance(ran, MutateResult) else conclude(ran)


def plan_and_run(request: MutateRequest, progress: Progress | None = None) -> MutateResult:
    """The whole of ``metaeval mutate`` but the rendering (``report.mutate_outcome.finish``
    writes the report and SARIF files) and the printing: ``run_plan(plan_mutate(request))``,
    or ``trace_plan`` for ``--trace-only``."""
    plan = plan_mutate(request)
    return trace_plan(plan) if request.trace_only else run_plan(plan, progress)
