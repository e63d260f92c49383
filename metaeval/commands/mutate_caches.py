"""The caches of one ``metaeval mutate`` run, opened and saved in one place.

Three caches make a rerun fast: the result cache (a mutant's earlier status,
while nothing it depends on changed), the scan cache (a file's mutants, filled
while the plan parses the targets) and the coverage map (which test ran which
line, loaded by the warm runner from ``RunOptions.coverage_cache``). ``open_caches``
reads the result cache before a run; ``save_caches`` writes all three after a
run that finished, and only then, as the report is. A cache that cannot be
written is a warning: it costs the next run its speed, never this run its
result. This module never runs a mutant and writes nothing but the caches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from metaeval.commands.mutate_values import Message, MutatePlan
from metaeval.errors import OutputError
from metaeval.mutation.run.result_cache import ResultCache
from metaeval.mutation.run.runner import MutationRun


@dataclass(frozen=True, slots=True)
class Caches:
    """What a run reads before its first mutant and leaves when it finished."""

    plan: MutatePlan
    result: ResultCache | None
    """None with ``--no-cache``."""


def open_caches(plan: MutatePlan) -> Caches:
    """The plan's caches, the result cache read (none with ``--no-cache``); a cache
    that is not one is read as empty, with a warning."""
    if plan.request.no_cache:
        return Caches(plan, None)
    options = plan.options
    # What an entry was run with, besides the mutant and its files.
    settings = (*options.pytest_args, str(options.timeout_factor), str(options.timeout_constant))
    return Caches(plan, ResultCache(plan.root, settings, plan.cache_file))


def save_caches(caches: Caches, run: MutationRun) -> tuple[Message, ...]:
    """Write the result cache, the scan cache and the coverage map of a finished
    ``run``; a warning for each that cannot be written."""
    result, scan, kept = caches.result, caches.plan.scan, caches.plan.options.coverage_cache
    coverage = run.fork.coverage_map if run.fork else None
    warnings = [_save(lambda: result.save(run.baseline_duration, run.timeout))
                if result is not None else None,
                _save(scan.save) if scan is not None else None,
                _save(lambda: coverage.save(kept, caches.plan.root))
                if coverage and kept else None]
    return tuple(w for w in warnings if w is not None)


def _save(save: Callable[[], None]) -> Message | None:
    try:
        save()
    except OutputError as e:
        return Message(f"warning: {e}; the next run starts without it", stderr=True)
    return None
