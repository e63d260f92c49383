"""Run the project's pytest suite once per mutant and say what happened to each.

The order is fixed: a baseline run (it must pass, or nothing a mutant run says
means anything), a forced-fail check (a mutant that must be killed, proving
the plugin is wired), then every mutant in its own pytest child, ``--jobs`` at
a time. ``run_mutant`` runs one mutant and returns one ``MutantResult``; it
never raises for anything a mutant does (a crash, an endless loop, a syntax
error are statuses, not exceptions).

The user's source tree is never written: the mutant lives in the child's
memory, specs and results live in a scratch directory outside the tree,
children write no bytecode and no pytest cache, and a child dies with the
runner (``kill -9`` included) through the parent-death signal.

This module orders the run and keeps its results; each isolation has a home of
its own, entered by its parent side: ``mutation.subprocess.parent`` (a pytest
process per mutant) and ``mutation.fork.parent`` (one warm process forking a
child per mutant). ``options`` holds what both are given.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from metaeval.errors import ExitCode
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.fork.parent import WarmStart, run_forked
from metaeval.mutation.isolation.options import Isolation, RunOptions, scratch_writes
from metaeval.mutation.isolation.ran import Expect, ForkStats, Phase, Ran, Record, Step
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.mutation.run.time_left import TimeLeft, expected_costs
from metaeval.mutation.subprocess.parent import run_fresh, settle


@dataclass(frozen=True, slots=True)
class MutationRun:
    """Everything one ``metaeval mutate`` run found, in the order of its mutants."""

    results: tuple[MutantResult, ...]
    baseline_duration: float
    timeout: float
    """The per-mutant limit in seconds: baseline * factor + constant; in fork
    isolation, where each mutant has its own, the largest of them."""
    isolation: Isolation = Isolation.SUBPROCESS
    wall: float = 0.0
    """Seconds the whole run took, baseline included."""
    fork: ForkStats | None = None
    """Fork isolation: how the mutants were put in place and where the time went."""

    @property
    def ran(self) -> tuple[MutantResult, ...]:
        """Results this run produced by running tests (not cached, not settled up front)."""
        return tuple(r for r in self.results if not r.cached and r.duration > 0)

    @property
    def cached(self) -> int:
        return sum(1 for r in self.results if r.cached)

    @property
    def in_tests(self) -> float:
        """Seconds this run's mutants spent inside their tests."""
        return sum(r.in_tests for r in self.ran)

    @property
    def elsewhere(self) -> float:
        """Seconds this run's mutants spent outside their tests: start or fork, apply, reap."""
        return sum(max(0.0, r.duration - r.in_tests) for r in self.ran)

    @property
    def executed(self) -> int:
        """Mutants whose tests actually ran to an answer (killed, survived, timed out)."""
        ran = (Status.KILLED, Status.SURVIVED, Status.TIMEOUT)
        return sum(1 for r in self.results if r.status in ran)



Progress = Callable[[int, int, MutantResult], None]


@runtime_checkable
class Paced(Protocol):
    """A progress that shows the time left: given the run's estimate once the baseline
    is in (fork isolation, which knows each test's seconds), kept up to date by the
    runner as results come; without it, it goes by the count."""

    def pace(self, left: TimeLeft) -> None: ...


@runtime_checkable
class Phased(Protocol):
    """A progress that also shows what the run does before its first mutant (``Phase``)."""

    def phase(self, step: str, done: int, total: int) -> None: ...


Execute = Callable[[list[tuple[int, Mutant]], RunOptions, Path, tuple[str, ...], Record,
                    WarmStart | None], Ran]
"""Runs the mutants the cache and ``settle`` left (index, mutant), handing each result
to ``record`` as it comes, on something other than this machine's own runners
(``ray_executor``): the jobs, the options, a scratch directory, the packages, the
record, the plan's warm runner, if any (its to use or stop)."""


class Cache(Protocol):
    """Where results of earlier runs are kept (``caches.result_cache.ResultCache``)."""

    def lookup(self, mutant: Mutant) -> MutantResult | None: ...

    def store(self, result: MutantResult, coverage: Coverage | None) -> None: ...

    def last_limits(self) -> tuple[float, float]: ...

    def killers(self, mutant: Mutant) -> tuple[str, ...]: ...



def run_mutants(mutants: Sequence[Mutant], options: RunOptions,
                progress: Progress | None = None, cache: Cache | None = None,
                warm: WarmStart | None = None, execute: Execute | None = None
                ) -> MutationRun:
    """Baseline, forced-fail check, then every mutant that is neither settled up
    front nor in ``cache``; VoidRun if nothing can be trusted. When every result
    comes from the cache, nothing runs, not even the baseline. ``warm``: the warm
    runner for the mutants' packages (fork isolation), stopped in any case.
    ``execute`` runs the mutants instead of this machine's isolation (``--executor
    ray``); results reach ``progress`` and ``cache`` the same way."""
    started = time.monotonic()
    results: dict[int, MutantResult] = {}
    lock = threading.Lock()
    left: TimeLeft | None = None
    """The time left, once the baseline is in (for a ``Paced`` progress)."""

    def record(index: int, result: MutantResult) -> None:
        with lock:
            results[index] = result
            if left is not None:
                left.finished(result)
            if progress is not None:
                progress(len(results), len(mutants), result)

    def expect(coverage: Coverage, durations: Mapping[str, float],
               always: tuple[str, ...]) -> None:
        nonlocal left
        if isinstance(progress, Paced):
            estimate = TimeLeft(expected_costs((mutants[i] for i in todo), coverage, durations,
                                               always), options.workers)
            with lock:
                left = estimate
                progress.pace(estimate)

    todo, killers = _answered(mutants, cache, record)
    ran = Ran(0.0, 0.0, None)
    try:
        if todo:
            packages = tuple(sorted({m.module.partition(".")[0] for m in mutants}))
            phase = progress.phase if isinstance(progress, Phased) else None
            ran = _dispatch([(i, mutants[i]) for i in todo], options, packages, record, warm,
                            expect, execute, killers, phase)
    finally:
        if warm is not None:  # not needed after all, or already done: stopping is idempotent
            warm.stop()
    if not todo and cache is not None:
        ran = Ran(*cache.last_limits(), None)
    ordered = tuple(results[i] for i in range(len(mutants)))
    if cache is not None:  # saved by the caller, who says what a failed write means
        for index in todo:
            cache.store(ordered[index], ran.coverage)
    return MutationRun(ordered, ran.baseline_duration, ran.timeout, options.isolation,
                       time.monotonic() - started, ran.fork)



def _answered(mutants: Sequence[Mutant], cache: Cache | None, record: Record
              ) -> tuple[list[int], dict[int, tuple[str, ...]]]:
    """Each mutant the cache or ``settle`` answers, recorded; the indices of the others,
    and the tests that killed each of them in an earlier run (run first)."""
    todo: list[int] = []
    killers: dict[int, tuple[str, ...]] = {}
    for index, mutant in enumerate(mutants):
        # The cache first: a hit needs no compile (CompileErrors are never cached).
        known = None if mutant.ignored_reason or cache is None else cache.lookup(mutant)
        known = known or settle(mutant)
        if known is None:
            todo.append(index)
            if cache is not None and (killed_by := cache.killers(mutant)):
                killers[index] = killed_by  # it likely kills again
        else:
            record(index, known)
    return todo, killers


def _dispatch(jobs: list[tuple[int, Mutant]], options: RunOptions, packages: tuple[str, ...],
              record: Record, warm: WarmStart | None, expect: Expect,
              execute: Execute | None, killers: Mapping[int, tuple[str, ...]],
              phase: Phase | None = None) -> Ran:
    """The mutants left to run, handed to the executor or else to the isolation's
    parent side: in the warm runner's scratch directory (fork), else in one of
    their own."""
    if execute is None and options.isolation is Isolation.FORK:
        if warm is None:
            raise ValueError("fork isolation runs the mutants in a warm runner started "
                             "for their packages (fork.parent.start_warm): none given")
        return run_forked(jobs, options, record, warm, expect, killers, phase)
    with scratch_writes(tempfile.gettempdir()):
        scratch = tempfile.TemporaryDirectory(prefix="metaeval-mutate-")
    with scratch as tmp:
        if execute is not None:
            return execute(jobs, options, Path(tmp), packages, record, warm)
        if phase is not None:
            phase(Step.BASELINE, 0, 0)
        return run_fresh(jobs, options, Path(tmp), packages, record)


def exit_code(run: MutationRun) -> ExitCode:
    """VOID when no mutant ran (a run that tested nothing must not pass); FINDINGS
    for a survivor, a mutant no test reaches, or one that could not be applied
    (a patch mutant whose target was renamed is stale, and must be looked at);
    else OK. A CompileError is the operator's fault, not the tests': it is shown
    and kept out of the score's numerator, but does not fail the run."""
    if run.executed == 0:
        return ExitCode.VOID
    undetected = (Status.SURVIVED, Status.NO_COVERAGE, Status.RUNTIME_ERROR)
    if any(r.status in undetected for r in run.results):
        return ExitCode.FINDINGS
    return ExitCode.OK
