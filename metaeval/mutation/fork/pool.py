"""The warm process's pool: a forked child per job, ``jobs`` at a time, each
killed at its limit, every one reaped.

A job is planned before the first fork (planning between forks would copy
every page it writes into the children that share them). A child leads its
own process group, dies with the warm process, has its address space capped,
does its ``work`` and writes one ``ChildReport`` line to its pipe, then ends
with ``os._exit``; before each test it writes one ``TICK`` byte, so the pool
knows which test runs. The pool reads the pipes, kills a child's whole group at
its deadline (or once it has answered: whatever its tests started goes with it),
and turns each into a ``WarmOutcome``. A child's deadline is its job's limit
and, once its tests run, the running test's own limit (PIT's way): a mutant that
loops in a quick test is stopped seconds in, not after what all its tests took.
At a test's own limit the child is stopped only if it has also used more CPU
than its tests so far may: on a loaded machine a test starved of CPU runs past
its limit without looping, and must not turn a survivor into a Timeout.
It knows nothing of pytest beyond the items it hands on.
"""

from __future__ import annotations

import os
import select
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import pytest

from metaeval.mutation.fork.planner import How
from metaeval.mutation.fork.protocol import ChildReport, ChildTimes, WarmMutant, WarmOutcome
from metaeval.mutation.fork.reload import ReloadPlan
from metaeval.mutation.processes import (
    cap_address_space,
    cpu_seconds,
    die_with_parent,
    kill_group,
    look_up_prctl,
    process_size,
)

_READ_SIZE = 65536
TICK = b"\x01"
"""Written by a child before each test; never in a ``ChildReport`` line (JSON escapes
control characters)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """A job's time limits, from what its selected tests took in the baseline."""

    whole: float
    """Seconds its child may take, from the fork."""
    tests: tuple[float, ...] = ()
    """Seconds each selected test may take, from its start; () when only ``whole`` holds."""
    cpu: tuple[float, ...] = ()
    """CPU seconds the child may have used by the end of each selected test (its own
    and the earlier tests' baseline times x the factor, plus the constant)."""


def job_limits(durations: Sequence[float], setup: float, factor: float, constant: float
               ) -> Limits:
    """The limits of a child whose tests took ``durations`` in the baseline and that
    spends ``setup`` before them (importing and collecting again, in a child that
    executes modules again; 0 otherwise): each scaled by the factor, plus the
    constant. A test's own limit counts the setup too (such a child collects test
    modules between tests); the CPU allowances count it once, and the whole
    limit is the last of them (not the whole suite's: a looping mutant would hold
    a worker for minutes)."""
    used = setup
    cpu = []
    for seconds in durations:
        used += seconds
        cpu.append(used * factor + constant)
    tests = tuple((seconds + setup) * factor + constant for seconds in durations)
    return Limits(used * factor + constant, tests, tuple(cpu))


@dataclass(frozen=True, slots=True)
class Job:
    """A mutant for a child, planned before the first fork."""

    mutant: WarmMutant
    selected: tuple[pytest.Item, ...]
    how: How
    planning: float = 0.0
    """Seconds its plan took: counted in the mutant's time outside its tests."""
    limits: Limits = field(default_factory=lambda: Limits(60.0))
    probe: bool = False
    """The forced-fail check: the child makes its test fail instead of applying a mutant."""
    nodeids: tuple[str, ...] = field(init=False)
    """The selected tests' ids, read here and not between forks (for the same reason)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodeids", tuple(item.nodeid for item in self.selected))


@dataclass(slots=True)
class Running:
    """A running child, seen from the warm process."""

    pid: int
    fd: int
    job: Job
    started: float
    forking: float
    """Seconds ``os.fork`` took in the warm process."""
    resident: int
    """Bytes of the warm process resident when it forked this one."""
    data: bytearray = field(default_factory=bytearray)
    eof: bool = False
    ticks: int = 0
    """Tests it has started."""
    test_deadline: float = float("inf")
    """When the running test passes its own limit."""

    @property
    def deadline(self) -> float:
        return min(self.started + self.job.limits.whole, self.test_deadline)

    @property
    def running_test(self) -> str:
        """The test it was running (empty before the first)."""
        return self.job.nodeids[self.ticks - 1] if 0 < self.ticks <= len(self.job.nodeids) \
            else ""

    def starved(self, now: float) -> bool:
        """At its running test's own limit, whether the child has used less CPU than
        its tests so far may (then the limit moves on by what it has left, and the
        job's limit still holds); at the job's limit, never."""
        if now >= self.started + self.job.limits.whole or not 0 < self.ticks <= len(
                self.job.limits.cpu):
            return False
        used = cpu_seconds(self.pid)
        if used is None:  # no /proc: the job's limit alone decides
            self.test_deadline = float("inf")
            return True
        allowed = self.job.limits.cpu[self.ticks - 1]
        if used >= allowed:
            return False
        self.test_deadline = now + max(0.1, allowed - used)
        return True

    def read(self, chunk: bytes, now: float) -> None:
        """Take what the child wrote: ticks start its tests' clocks, the rest is its report."""
        ticks = chunk.count(TICK)
        if ticks:
            self.ticks += ticks
            limits = self.job.limits.tests
            if self.ticks <= len(limits):
                self.test_deadline = now + limits[self.ticks - 1]
            chunk = chunk.replace(TICK, b"")
        self.data += chunk

    @property
    def plan(self) -> ReloadPlan | None:
        """How it executes modules again, if it does."""
        return self.job.how if isinstance(self.job.how, ReloadPlan) else None


Tick = Callable[[], None]
"""Called by a child's work before each test it runs."""

Work = Callable[[Job, float, Tick], ChildReport]
"""What a child does with its job (given the time it started): runs in the child."""

Deferred = Callable[[Running, ChildReport], WarmOutcome]
"""What a child that could not put its mutant in place means (the warm session decides)."""


class Pool:
    """Forks children for jobs, at most ``jobs`` at once."""

    def __init__(self, jobs: int, memory_limit: int, work: Work, deferred: Deferred) -> None:
        self.jobs = max(1, jobs)
        self.memory_limit = memory_limit
        self.work = work
        self.deferred = deferred
        self.parent = os.getpid()
        self.memory_cap = 0
        """A child's address-space limit: this process's size when a run starts (a
        child starts as a copy of it) plus ``memory_limit``; 0 for none."""
        self.running: dict[int, Running] = {}
        """The children running now, by the read end of their pipe."""
        self.exiting: list[int] = []
        """Children that answered and were sent on their way, not yet reaped."""
        self.pending: deque[Job] = deque()
        """Jobs not yet forked in the current ``run``."""

    def run(self, work: list[Job], emit: Callable[[WarmOutcome], None] | None = None
            ) -> list[WarmOutcome]:
        """Fork, read and reap until every job is done; each outcome is handed to
        ``emit`` as it arrives, and all are returned in the order they arrived."""
        pending = self.pending = deque(work)
        running = self.running = {}
        done: list[WarmOutcome] = []
        size = process_size(0) if self.memory_limit else 0
        self.memory_cap = size + self.memory_limit if size else 0
        look_up_prctl()  # looked up here, once, not in every child
        while pending or running:
            while pending and len(running) < self.jobs:
                job = pending.popleft()
                child = self._fork(job, time.monotonic() - job.planning)
                running[child.fd] = child
            now = time.monotonic()
            wait = max(0.0, min(c.deadline for c in running.values()) - now)
            ready, _, _ = select.select(list(running), [], [], wait)
            now = time.monotonic()
            for fd in ready:
                chunk = os.read(fd, _READ_SIZE)
                if chunk:
                    running[fd].read(chunk, now)
                else:
                    running[fd].eof = True
            for fd, child in list(running.items()):
                # A child is done when its one line arrives: its exit (tearing down a
                # copy of this process) need not hold up the next fork.
                if child.eof or child.data.endswith(b"\n"):
                    outcome = self._reap(child, timed_out=False)
                elif now >= child.deadline and not child.starved(now):
                    outcome = self._reap(child, timed_out=True)
                else:
                    continue
                del running[fd]
                done.append(outcome)
                if emit is not None:
                    emit(outcome)
            self._wait_exiting(block=False)
        self._wait_exiting(block=True)
        return done

    def cancel(self) -> None:
        """Fork no more jobs, and stop the children running now; ``run`` still reaps
        them and hands on their (meaningless) outcomes."""
        self.pending.clear()
        for child in self.running.values():
            kill_group(child.pid)

    def kill_all(self) -> None:
        """Every child this pool started, and what their tests started (each child
        leads a process group of its own, which no one else can see)."""
        for pid in [*(c.pid for c in self.running.values()), *self.exiting]:
            kill_group(pid)

    def _wait_exiting(self, block: bool) -> None:
        """Reap the children that answered and are on their way out."""
        for pid in list(self.exiting):
            try:
                finished, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
            except ChildProcessError:
                finished = pid
            if finished:
                self.exiting.remove(pid)

    def _fork(self, job: Job, started: float) -> Running:
        inherited = [c.fd for c in self.running.values()]
        read, write = os.pipe()
        resident = process_size(1)
        before = time.monotonic()
        pid = os.fork()
        if pid == 0:
            self._child(job, write, [read, *inherited])
        forking = time.monotonic() - before
        os.close(write)
        try:
            os.setpgid(pid, pid)  # also done by the child: whichever runs first wins the race
        except OSError:
            pass
        return Running(pid, read, job, started, forking, resident)

    def _child(self, job: Job, write: int, inherited: list[int]) -> None:
        began = time.monotonic()
        try:
            for fd in inherited:  # the other children's pipes, and this one's read end
                os.close(fd)
            os.setpgid(0, 0)
            die_with_parent(self.parent)
            cap_address_space(self.memory_cap)
            os.write(write, self.work(job, began, lambda: _tick(write)).line())
        finally:
            os._exit(0)

    def _reap(self, child: Running, timed_out: bool) -> WarmOutcome:
        outcome = self._outcome(child, timed_out)
        times = replace(outcome.times, forking=child.forking, resident=child.resident,
                        limit=child.job.limits.whole)
        return replace(outcome, times=times)

    def _outcome(self, child: Running, timed_out: bool) -> WarmOutcome:
        wall = time.monotonic() - child.started
        index, selected = child.job.mutant.index, child.job.nodeids
        # The child and whatever its tests started: one that answered has nothing left
        # to do but exit, and one that ended without an answer may have left some.
        kill_group(child.pid)
        status = 0
        if not timed_out and not child.eof:
            self.exiting.append(child.pid)
        else:
            _, status = os.waitpid(child.pid, 0)
        os.close(child.fd)
        if timed_out:
            test = child.running_test
            own = child.test_deadline < child.started + child.job.limits.whole
            why = (f"{test} ran past its own {child.job.limits.tests[child.ticks - 1]:.1f}s "
                   "limit" if test and own else "")
            return WarmOutcome(index, selected, timed_out=True, exit_status=status,
                               error=why, times=ChildTimes(wall=wall))
        try:
            report = ChildReport.parse(bytes(child.data))
        except ValueError:
            # A child that died while executing modules again gets a fresh process.
            return WarmOutcome(index, selected, exit_status=status, reported=False,
                               deferred=child.plan is not None,
                               error=f"its child ended (status {status}) with no answer while "
                                     "executing modules again" if child.plan else "",
                               times=ChildTimes(wall=wall))
        if report.deferred:
            return self.deferred(child, report)
        return WarmOutcome(index, selected, failed=report.failed, error_kind=report.error_kind,
                           error=report.error, exit_status=status, reloaded=report.reloaded,
                           times=ChildTimes(wall=wall, in_tests=report.in_tests,
                                            placing=report.placing))


def _tick(write: int) -> None:
    os.write(write, TICK)
