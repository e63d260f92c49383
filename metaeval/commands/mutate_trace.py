"""``metaeval mutate --trace-only --write-coverage FILE``: one baseline for every shard.

Plans as a run does (so the file carries the plan's hash), traces the baseline
in the warm runner, runs no mutant, and writes the coverage file
(``caches.coverage_file``) that shards read with ``--coverage``. Never prints: the
line for the user is a ``Message`` of the result.
"""

from __future__ import annotations

from pathlib import Path

from metaeval.commands.mutate_values import Message, MutatePlan, MutateResult
from metaeval.errors import ExitCode, OutputError
from metaeval.mutation.caches.coverage_cache import CoverageMap
from metaeval.mutation.caches.coverage_file import write_coverage_file
from metaeval.mutation.isolation.options import VoidRun
from metaeval.mutation.run.trace import trace_baseline


def trace_plan(plan: MutatePlan) -> MutateResult:
    """Trace the baseline of ``plan`` and write its coverage file: exit 0, or 3 when
    no mutant was found or the suite fails unmutated. ``OutputError`` when the
    file cannot be written."""
    request, root = plan.request, plan.root
    assert request.write_coverage is not None
    where = request.write_coverage
    if (plan.stop is not None or not plan.packages) and plan.warm is not None:
        plan.warm.stop()  # no mutant left: no test to trace
    if plan.stop is ExitCode.VOID or not plan.packages:  # no mutant found at all
        return MutateResult(ExitCode.VOID, root, plan.notes)
    try:
        if plan.stop is ExitCode.OK:  # --since left no mutant: no shard runs one either
            stats = None
        elif plan.warm is None:  # its scratch directory could not be written
            raise VoidRun(plan.void)
        else:
            stats = trace_baseline(plan.options, plan.warm)
    except VoidRun as e:
        return MutateResult.void(plan, str(e))
    cmap = (CoverageMap(plan.packages, plan.options.pytest_args, (), {}, ()) if stats is None
            else stats.coverage_map)
    assert cmap is not None  # a traced baseline's stats carry its map
    # One file, whichever map it holds: the shards read it with --coverage.
    write_coverage_file(Path.cwd() / where, cmap, plan.plan_hash, root)
    if stats is None:
        return MutateResult(ExitCode.OK, root, plan.notes, after=(Message(
            f"--trace-only: nothing to mutate, no test traced; an empty coverage map for "
            f"the plan is in {where}", stderr=True),))
    after = [Message(f"--trace-only: {stats.traced_tests} tests traced, {stats.reused_tests} "
                     f"reused; the coverage map for the plan of {len(plan.mutants)} mutants "
                     f"is in {where}", stderr=True)]
    if plan.options.coverage_cache is not None and stats.coverage_map is not None:
        try:
            stats.coverage_map.save(plan.options.coverage_cache, root)
        except OutputError as e:
            after.append(Message(f"warning: {e}; the next run starts without it", stderr=True))
    return MutateResult(ExitCode.OK, root, plan.notes, after=tuple(after))
