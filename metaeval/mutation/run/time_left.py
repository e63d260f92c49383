"""How long a run's mutants have left, from what their tests cost in the baseline.

Counting mutants is far off: the run starts with the mutants whose tests take
longest, so the first ones set a pace the rest never keep (on inspect_ai's
scorers and on metaeval itself, 12x to 37x over). Each mutant left is weighed
instead by its own selection (``Expected``): its first test's baseline seconds
(the fastest, or the fastest of the tests that ran its code when every test is
chosen), how many tests it has, and all their seconds.

A killed mutant and a survivor cost apart, and each is measured on its own
(``_Kind.costs``), from the last ``RECENT`` of its kind to run, the nearest in
kind to the ones left as the run goes longest first. A killed one costs its first
test's seconds and what the last killed children cost beyond theirs (start, first
use, the tests before the killer, reaping): grown with its tests after the first
where the last killed show it (on metaeval itself, the killer of a 300-test
selection runs after a hundred others, 2 s to 8 s in), flat where they do not (on
jsonschema a child of 3,000 tests is killed as fast as one of 50): whichever of
the two fits the last killed closer (``_by_tests``). A survivor runs every test:
what a killed child costs beyond its first test, and its tests' seconds as the
last survivors' were stretched (a ratio of sums, as the time left is a sum). The
share killed is by count, of all of its kind that ran; the survivors' share of
the tests' seconds from the last to run (survivors run more tests than the
others: on inspect_ai's scorers 25% of the mutants left at halfway, 45% of
their seconds). One ratio of sums for both, as before, let the survivors'
seconds drown the killed ones': inspect_ai's killed children spent 0.3 s in
tests that took 1 ms in the baseline, and the estimate was 41% short from
halfway.

Kinds cost apart: module and class bodies, which every test may reach and
which run the suite until a test fails, against mutants with a selection; patch
mutants against rewrite mutants (on metaeval itself, a patch mutant's child
spent 3 s to 4 s outside its tests where a rewrite mutant's spent 0.2 s). The
estimate is not shown until a mutant of each kind left ran: the module bodies
that run first on metaeval itself (0.2 s to 136 s each) said 2x to 5x the time
left of the quick mutants behind them.

Work is in a child's seconds; how many children run at once is measured, not
taken from ``--jobs`` (``workers``): the child seconds of the last ``RECENT``
mutants to finish, the oldest of them left out, over the wall seconds since the
oldest finished (Little's law: counted from a finish, the children still running
do not bias it). Between two children the parent classifies, records and forks,
which no child's seconds hold: beside quick children it is a large share, and a
machine shared with other work stretches it. A mutant deferred to a pytest
process of its own runs beside the pool.

Replayed over seven recorded runs (``benchmarks/time_left_replay.py``, 2 cores at
load 5.7 to 19.4), the median error from halfway on is 15%, 12% and 12% on
inspect_ai's scorers, 17% on jsonschema and 30%, 19% and 40% on metaeval itself
(41%, 36%, 43%, 426%, 113%, 685% and 291% before): issue 51's 25% is not met on
metaeval itself, whose killed children cost by the function mutated.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from metaeval.mutation.coverage import Coverage
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Status

AFTER = 3
"""Mutants that ran before the time left is estimated."""
MIN_WORKERS = 0.25
"""The fewest children at work at once the estimate assumes (a stalled start is no pace)."""
RECENT = 25
"""How many of the last of a kind to run tell what one of them costs, and how many of
the last mutants to finish how many children are at work at once."""


@dataclass(frozen=True, slots=True)
class Expected:
    """What one mutant's selected tests took in the baseline, in seconds."""

    first: float
    """The one a child runs first (the fastest, or the fastest of ``Selection.first``):
    where a mutant that is killed at once stops."""
    rest: float
    """The others together: what a mutant that survives runs too."""
    every: bool = False
    """Every test may reach it (a module or class body): it runs the whole suite,
    fastest first, until a test fails, which tells nothing of a selected mutant."""
    tests: int = 1
    """How many they are."""
    patch: bool = False
    """A patch mutant: put in place by a process of its own or by its declared
    patch, not by swapping a function's code, which costs apart."""

    @property
    def kind(self) -> tuple[bool, bool]:
        return self.every, self.patch

    @property
    def others(self) -> int:
        """How many tests it has after its first (at least one when ``rest`` has seconds)."""
        return max(self.tests - 1, int(self.rest > 0))


def expected_costs(mutants: Iterable[Mutant], coverage: Coverage,
                   durations: Mapping[str, float], always: Iterable[str] = ()
                   ) -> dict[str, Expected]:
    """Each mutant's ``Expected``, by id, from the baseline's record and test times;
    ``always``: the tests every mutant runs too, as the warm runner selects them
    (those the record did not see through, ``WarmBaseline.untraced``); a mutant no
    test reaches costs nothing."""
    every = sorted(durations.values())
    always = set(always)
    costs = {}
    for mutant in mutants:
        selection = coverage.select(mutant)
        if selection.tests is None and selection.reached:
            seconds = every
        elif not selection.reached and not always:
            seconds = []
        else:
            seconds = sorted(durations.get(test, 0.0)
                             for test in always.union(selection.tests or ()))
        # A child runs the tests that ran the mutant's own code first (``Selection.first``).
        head = min((durations.get(test, 0.0) for test in selection.first), default=None)
        if head is None or selection.tests is not None or not seconds:
            head = seconds[0] if seconds else 0.0
        costs[mutant.id] = (Expected(head, sum(seconds) - head, selection.tests is None,
                                     len(seconds), mutant.kind is MutantKind.PATCH)
                            if seconds else Expected(0.0, 0.0))
    return costs


def _by_tests(killed: Sequence[tuple[int, float]], mean: float) -> tuple[float, float]:
    """What a killed child costs beyond its first test, as ``at`` plus ``each`` for
    each of its tests after the first: the cheapest of ``killed`` (start, first use,
    reaping), then the rest of their seconds spread over their tests after the first.
    When that line fits them no closer than their ``mean`` (children killed as fast
    with 3,000 tests as with 50, as on jsonschema), the mean for each: ``(mean, 0)``."""
    others = sum(n for n, _ in killed)
    if not killed or not others:
        return mean, 0.0
    at = min(y for _, y in killed)
    each = sum(y - at for _, y in killed) / others
    by_tests = sum((y - at - each * n) ** 2 for n, y in killed)
    flat = sum((y - mean) ** 2 for _, y in killed)
    return (at, each) if by_tests < flat else (mean, 0.0)


@dataclass(slots=True)
class _Kind:
    """What the last mutants of one kind (``Expected.kind``) to run cost: the killed
    ones beyond their first test's baseline seconds, the survivors against all their
    tests' baseline seconds."""

    runs: int = 0
    kills: int = 0
    ran: deque[tuple[bool, float]] = field(default_factory=lambda: deque(maxlen=RECENT))
    """The last to run: whether each survived, and its tests' baseline seconds."""
    killed: deque[tuple[int, float]] = field(default_factory=lambda: deque(maxlen=RECENT))
    """The last killed ones: how many tests they have after their first, and their
    seconds beyond their first test's baseline seconds."""
    survived: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=RECENT))
    """The last survivors: their tests' baseline seconds, and their seconds."""

    def took(self, expected: Expected, result: MutantResult) -> None:
        survived = result.status is Status.SURVIVED
        every = expected.first + expected.rest
        self.ran.append((survived, every))
        self.runs += 1
        self.kills += not survived
        if survived:
            self.survived.append((every, result.duration))
        else:
            self.killed.append((expected.others, max(0.0, result.duration - expected.first)))

    def costs(self) -> _Costs:
        """What a mutant of this kind left is expected to cost, from the last to run."""
        seconds = sum(every for _, every in self.ran)
        kept = sum(every for survived, every in self.ran if survived)
        killed = self.kills / self.runs if self.runs else 1.0
        expected = sum(every for every, _ in self.survived)
        beyond = statistics.fmean(y for _, y in self.killed) if self.killed else 0.0
        at, each = _by_tests(self.killed, beyond)
        per = (max(0.0, sum(took - beyond for _, took in self.survived) / expected)
               if expected > 0 else 1.0)
        return _Costs(killed, kept / seconds if seconds > 0 else 1.0 - killed, beyond, per,
                      at, each)


@dataclass(frozen=True, slots=True)
class _Costs:
    """What a mutant of one kind left is expected to cost, in a child's seconds."""

    killed: float
    """The share of them killed, by count (of all of the kind that ran)."""
    kept: float
    """The survivors' share of the last to run's tests' baseline seconds."""
    beyond: float
    """What a killed child costs beyond its first test's baseline seconds (start, first
    use, the tests before its killer, reaping): the mean of the last killed, as the
    time left is a sum."""
    per: float
    """What a survivor costs beyond ``beyond`` for each baseline second of its tests:
    the last survivors' seconds over theirs (a ratio of sums); 1 before one survived."""
    at: float
    each: float
    """A killed child's seconds beyond its first test: ``at`` plus ``each`` for each
    of its tests after the first (``_by_tests``)."""

    def work(self, expected: Expected) -> float:
        """The seconds one mutant is expected to cost: killed or survived, as the shares
        say; a survivor's tests by the survivors' share of the tests' seconds."""
        killed = expected.first + self.at + self.each * expected.others
        survived = self.beyond
        tests = self.per * (expected.first + expected.rest)
        return self.killed * killed + (1.0 - self.killed) * survived + self.kept * tests


class TimeLeft:
    """The estimate, updated as each result comes (``finished``)."""

    def __init__(self, expected: Mapping[str, Expected], jobs: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.expected = dict(expected)
        self.clock = clock
        self.jobs = max(1, jobs)
        self.left = {name for name, cost in self.expected.items() if cost.first or cost.rest}
        """The mutants left whose tests take any time (one no test reaches costs nothing)."""
        self.kinds: dict[tuple[bool, bool], _Kind] = {}
        self.ran = 0
        self.finishes = 0
        """Mutants that ran (any status) since the estimate began."""
        self.recent: deque[tuple[float, float]] = deque(maxlen=RECENT)
        """The last of them to finish: when (by ``clock``) and their child seconds."""

    def finished(self, result: MutantResult) -> None:
        expected = self.expected.get(result.mutant.id)
        if expected is None or result.mutant.id not in self.left:
            return
        self.left.discard(result.mutant.id)
        if not result.cached and result.duration > 0:
            self.recent.append((self.clock(), result.duration))
            self.finishes += 1
        if result.cached or result.status not in (Status.KILLED, Status.SURVIVED):
            return  # a time limit or an error says nothing of what its tests cost
        self.ran += 1
        self.kinds.setdefault(expected.kind, _Kind()).took(expected, result)

    def workers(self) -> float:
        """Children at work at once, lately: the seconds of the last to finish but the
        oldest of them, over the wall's since it finished; at most the pool's jobs and
        the thread that runs deferred mutants in processes of their own."""
        if len(self.recent) < 2:
            return float(self.jobs)
        wall = self.clock() - self.recent[0][0]
        busy = sum(seconds for _, seconds in list(self.recent)[1:])
        if wall <= 0:
            return float(self.jobs)
        return min(max(busy / wall, MIN_WORKERS), self.jobs + 1.0)

    def grounded(self) -> bool:
        """Whether enough ran to say: ``AFTER`` answers, more children finished than
        there are workers (so the pace counted from a finish saw each at work), and
        a mutant of each kind left ran (kinds cost apart: one none of whose own ran
        would be a guess)."""
        return (self.ran >= AFTER and self.finishes > self.jobs
                and all(self.expected[name].kind in self.kinds for name in self.left))

    def seconds(self) -> float | None:
        """The wall seconds left; None until the estimate is ``grounded``."""
        if not self.grounded():
            return None
        costs = {kind: stats.costs() for kind, stats in self.kinds.items()}
        work = sum(costs[self.expected[name].kind].work(self.expected[name])
                   for name in self.left)
        return work / self.workers()
