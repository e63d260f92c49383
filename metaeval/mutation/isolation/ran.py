"""What one isolation's run of the mutants leaves besides their results."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from metaeval.mutation.caches.coverage_cache import CoverageMap
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.model import MutantResult

Record = Callable[[int, MutantResult], None]
"""Where an isolation hands each result as it comes: the mutant's index, its result."""
Expect = Callable[[Coverage, Mapping[str, float], tuple[str, ...]], None]
"""Where an isolation hands the baseline as soon as it has it, before the mutants'
results: its record, each test's seconds (what the time left is weighed by) and
the tests every mutant runs (those the record did not see through)."""
Phase = Callable[[str, int, int], None]
"""Where a run says what it does before its first mutant, and how far along: what
(``Step``), how many done of how many (0 and 0 when it cannot count)."""


class Step:
    """The steps before the first mutant, as ``Phase`` names them."""

    PLANNING = "finding mutants, reading the caches"
    COLLECTING = "collecting tests"
    TRACING = "tracing the baseline"
    """Its counts: tests traced of tests collected."""
    BASELINE = "running the baseline"
    """Subprocess isolation: one pytest process, which cannot be counted."""
    PREPARING = "preparing the mutants"


@dataclass(frozen=True, slots=True)
class ForkStats:
    """What a fork-isolation run adds to its results."""

    deferred: int = 0
    """Mutants that ran in a pytest process of their own anyway."""
    reloaded: int = 0
    """Mutants put in place by executing their module again in the child."""
    deferred_elsewhere: float = 0.0
    """Of ``elsewhere``, the seconds the deferred mutants' own processes spent outside tests."""
    forking: float = 0.0
    """Of ``elsewhere``, the seconds the warm process spent forking."""
    placing: float = 0.0
    """Of ``elsewhere``, the seconds children spent putting their mutants in place
    before their first test."""
    resident: int = 0
    """The largest the warm process was (resident bytes) when it forked."""
    traced_tests: int = 0
    """Tests the baseline traced in this run."""
    reused_tests: int = 0
    """Tests whose records came from a coverage map: the last run's, or ``--coverage``."""
    traced_beside: bool = False
    """The traced tests ran beside the mutants (a few stale tests), not before them."""
    collected: float = 0.0
    """Seconds the warm process took to start, import and collect the tests."""
    baseline_ready: float = 0.0
    """Seconds from the warm process's start until its baseline was ready (collection,
    the trace, the forced-fail check): what the run paid before its first mutant.
    0 when the baseline was traced beside the mutants."""
    coverage_map: CoverageMap | None = None
    """The whole baseline's map (traced and reused), for the next run."""



@dataclass(frozen=True, slots=True)
class Ran:
    """What one isolation's run of the mutants left besides their results."""

    baseline_duration: float
    timeout: float
    coverage: Coverage | None
    fork: ForkStats | None = None


