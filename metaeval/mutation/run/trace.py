"""The baseline alone: the warm runner traces the suite and runs no mutant.

``metaeval mutate --trace-only`` uses it to write a coverage file for shards
(``coverage_file``); an executor that hands mutants to other machines uses it to
trace once, on its own. Like a run, it writes nothing in the source tree.
"""

from __future__ import annotations

from metaeval.mutation.fork.parent import WarmStart, run_forked
from metaeval.mutation.isolation.options import RunOptions
from metaeval.mutation.isolation.ran import ForkStats
from metaeval.mutation.model import MutantResult


def _unused(index: int, result: MutantResult) -> None:
    raise AssertionError(f"a baseline alone ran mutant {index}: {result.mutant.id}")


def trace_baseline(options: RunOptions, warm: WarmStart) -> ForkStats:
    """Trace the baseline ``warm`` was started for (reusing what ``options`` says may
    be reused) and stop: the stats of the warm runner, its map among them. ``warm``
    is stopped in any case. ``VoidRun`` when the suite fails unmutated or the
    plugin is not wired."""
    ran = run_forked([], options, _unused, warm)
    assert ran.fork is not None and ran.fork.coverage_map is not None  # a baseline reported
    return ran.fork

