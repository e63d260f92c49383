"""How long a run's mutants have left, from what their tests cost in the baseline.

Counting mutants is far off: the run starts with the mutants whose tests take
longest, so the first ones set a pace the rest never keep (on inspect_ai's
scorers and on metaeval itself, 12x to 37x over). Each mutant left is weighed
instead by its selected tests' baseline seconds: a mutant that is killed stops at
its first (fastest) test, one that survives runs them all, so it is expected to
cost its fastest test plus the run's survivor share of the others. What a child
costs beyond that (a test that is not the fastest kills it, a cold first test,
fixtures the baseline shared between tests, its time outside tests) comes from
the mutants that finished last: as a share of their tests' baseline seconds
(the median), plus their mean time outside tests. The last ones, not all: the
run goes longest first, so those are the nearest in kind to the ones left.
On inspect_ai's scorers (offline) a live run
showed 1m55s with 120 s left and stayed within 1.6x; on metaeval itself, 3m15s
with 46 s left while the module bodies (which every test reaches) ran first,
then 17s with 15 s left.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from metaeval.mutation.coverage import Coverage
from metaeval.mutation.model import Mutant, MutantResult, Status

AFTER = 3
"""Mutants that ran before the time left is estimated."""
RECENT = 25
"""How many of the last mutants to finish tell what a child costs beyond its tests."""


@dataclass(frozen=True, slots=True)
class Expected:
    """What one mutant's selected tests took in the baseline, in seconds."""

    first: float
    """The fastest of them: where a mutant that is killed stops, as they run fastest first."""
    rest: float
    """The others together: what a mutant that survives runs too."""


def expected_costs(mutants: Iterable[Mutant], coverage: Coverage,
                   durations: Mapping[str, float]) -> dict[str, Expected]:
    """Each mutant's ``Expected``, by id, from the baseline's record and test times;
    a mutant no test reaches costs nothing."""
    every = sorted(durations.values())
    costs = {}
    for mutant in mutants:
        selection = coverage.select(mutant)
        if not selection.reached:
            seconds = []
        elif selection.tests is None:
            seconds = every
        else:
            seconds = sorted(durations.get(test, 0.0) for test in selection.tests)
        costs[mutant.id] = Expected(seconds[0], sum(seconds[1:])) if seconds else Expected(0, 0)
    return costs


class TimeLeft:
    """The estimate, updated as each result comes (``finished``)."""

    def __init__(self, expected: Mapping[str, Expected], jobs: int) -> None:
        self.expected = dict(expected)
        self.jobs = max(1, jobs)
        self.left = set(self.expected)
        costly = [e for e in self.expected.values() if e.first or e.rest]
        self.costly_left = len(costly)
        """Mutants left whose tests take any time (a mutant no test reaches costs nothing)."""
        self.first_left = sum(e.first for e in costly)
        self.rest_left = sum(e.rest for e in costly)
        self.ran = 0
        self.survived = 0
        self.recent: deque[tuple[float, float]] = deque(maxlen=RECENT)
        """Of the last mutants that ran to an answer: what they cost beyond their
        expected tests, as a share of all their tests' baseline seconds; and their
        seconds outside tests."""

    def finished(self, result: MutantResult) -> None:
        expected = self.expected.get(result.mutant.id)
        if expected is None or result.mutant.id not in self.left:
            return
        self.left.discard(result.mutant.id)
        if expected.first or expected.rest:
            self.costly_left -= 1
            self.first_left -= expected.first
            self.rest_left -= expected.rest
        if result.cached or result.status not in (Status.KILLED, Status.SURVIVED):
            return  # a time limit says nothing about what its tests cost
        self.ran += 1
        survived = result.status is Status.SURVIVED
        self.survived += survived
        tests = expected.first + expected.rest
        beyond = result.in_tests - expected.first - (expected.rest if survived else 0.0)
        self.recent.append((max(0.0, beyond) / tests if tests > 0 else 0.0,
                            max(0.0, result.duration - result.in_tests)))

    def seconds(self) -> float | None:
        """The wall seconds left; None until ``AFTER`` mutants ran to an answer."""
        if self.ran < AFTER:
            return None
        share = self.survived / self.ran
        beyond = statistics.median(b for b, _ in self.recent)
        outside = statistics.fmean(o for _, o in self.recent)
        first, rest = max(0.0, self.first_left), max(0.0, self.rest_left)
        work = (self.costly_left * outside + beyond * (first + rest) + first + share * rest)
        return work / self.jobs
