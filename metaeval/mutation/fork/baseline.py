"""The warm process's baseline: the unmutated suite run under the call and line
recorder, in forked children, one per part of the suite at once.

Each child runs its part in collection order (a test may lean on one before
it), records which tests ran which functions and lines of the mutated
packages and which data files they read (``child.reads``), and writes a
``BaselinePart`` file; the parts merge into one record, their seconds added up
as if they had run in order. The children are forked, so the warm process stays
as collection left it.
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.ctrace import OWN_FILES, LineRecorder, c_tracer
from metaeval.mutation.child.line_probes import ProbeRecorder, Share
from metaeval.mutation.child.reads import FileReads
from metaeval.mutation.fork.child import Watch
from metaeval.mutation.fork.protocol import BaselinePart
from metaeval.mutation.processes import die_with_parent


def baseline_recorder(recorder: CallRecorder, share: Share | None = None
                      ) -> CallRecorder | LineRecorder | ProbeRecorder:
    """What a traced baseline child records with. On Python before 3.12: probes
    (``line_probes``) when every loaded module of the packages can be probed, else
    coverage.py's C tracer when installed; ``METAEVAL_RECORDER`` = ``ctrace`` or
    ``settrace`` chooses the tracer or ``recorder``'s trace function. On 3.12 and
    later, ``recorder`` itself (``sys.monitoring``). ``share``: this child's part
    of compiling the probes."""
    chosen = os.environ.get("METAEVAL_RECORDER", "")
    if sys.version_info >= (3, 12) or type(recorder) is not CallRecorder or chosen == "settrace":
        return recorder
    if chosen != "ctrace":
        probes = ProbeRecorder(recorder, OWN_FILES, share.n << 24 if share else 0)
        if not probes.prepare(share):
            return probes
    make = c_tracer()
    return recorder if make is None else LineRecorder(recorder, make)


Traced = Callable[[int], None]
"""Told the number of tests traced so far, while the children run (``Tracing.wait``)."""
REPORT_EVERY = 1.0
"""Seconds between two counts ``Tracing.wait`` hands on."""


def trace_parts(session: pytest.Session, parts: list[list[pytest.Item]], jobs: int,
                recorder: CallRecorder, watch: Watch, scratch: Path, name: str,
                reads: FileReads, traced: Traced | None = None) -> tuple[BaselinePart, str]:
    """The parts traced by ``jobs`` children at once; their records merged, and what
    went wrong with a child, if anything. ``name`` keeps this call's files apart;
    ``reads`` records the data files the tests read; ``traced`` is told how many
    tests are done as they go."""
    tracing = start_trace(session, parts, jobs, recorder, watch, scratch, name, reads)
    if traced is not None:
        tracing.wait(traced)
    return tracing.finish()


@dataclass(slots=True)
class Tracing:
    """Traced children started and not yet waited for (``start_trace``)."""

    children: list[tuple[int, Path]]
    statuses: dict[int, int] = field(default_factory=dict)
    """The exit status of each child reaped so far, by pid."""
    ticks: int = -1
    """The read end of the pipe the children write a byte to per test; -1: closed."""

    def wait(self, traced: Traced) -> None:
        """Until every child has ended, the tests they ran counted from their bytes
        and handed to ``traced`` once a ``REPORT_EVERY`` at most."""
        done, told, last = 0, -1, 0.0
        while not self.poll():
            if self.ticks < 0:
                time.sleep(0.2)
            elif select.select([self.ticks], [], [], 0.2)[0]:
                with contextlib.suppress(BlockingIOError):
                    read = os.read(self.ticks, 65536)
                    if not read:  # every writer gone: the children are ending
                        os.close(self.ticks)
                        self.ticks = -1
                    done += len(read)
            now = time.monotonic()
            if done != told and now - last >= REPORT_EVERY:
                traced(done)
                told, last = done, now

    def poll(self) -> bool:
        """Whether every child has ended (reaping those that have), without waiting."""
        for pid, _ in self.children:
            if pid not in self.statuses:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    self.statuses[pid] = status
        return len(self.statuses) == len(self.children)

    def finish(self) -> tuple[BaselinePart, str]:
        """Wait for every child: their records merged, and what went wrong, if anything."""
        if self.ticks >= 0:
            os.close(self.ticks)
            self.ticks = -1
        merged = BaselinePart()
        problem = ""
        for pid, result in self.children:
            if pid not in self.statuses:
                self.statuses[pid] = os.waitpid(pid, 0)[1]
            if not result.exists():
                problem = problem or (f"<the baseline child ended with status "
                                      f"{self.statuses[pid]}>")
                continue
            merged += BaselinePart.read(result)
        return merged, problem


def start_trace(session: pytest.Session, parts: list[list[pytest.Item]], jobs: int,
                recorder: CallRecorder, watch: Watch, scratch: Path, name: str,
                reads: FileReads) -> Tracing:
    """Fork ``jobs`` traced children and return at once. Each takes the next part
    not yet taken whenever it finishes one, so the children end together however
    the parts' times differ; each runs its parts in collection order. ``reads``:
    the warm process's record of data files read, from its start (collection)."""
    parent = os.getpid()
    jobs = max(1, min(jobs, len(parts)))
    taking = None
    if jobs > 1:
        # Every part's number written before any child reads: a read of 4 bytes
        # from a pipe takes them whole, so no part goes to two children.
        taking, queue = os.pipe()
        os.write(queue, b"".join(struct.pack("=I", n) for n in range(len(parts))))
        os.close(queue)
    ticks, tick = _tick_pipe()
    children = []
    for n in range(jobs):
        result = scratch / f"warm-baseline-{name}-{n}.json"
        pid = os.fork()
        if pid == 0:
            os.close(ticks)
            share = Share(n, jobs, str(scratch / f"warm-probes-{name}"))
            _child(session, _taken(parts, taking), recorder, watch, result, parent, share,
                   tick, reads)
        children.append((pid, result))
    if taking is not None:
        os.close(taking)
    os.close(tick)
    reads.pause()  # each child records its own from here
    return Tracing(children, ticks=ticks)


def _tick_pipe() -> tuple[int, int]:
    """A pipe whose write end never blocks: a child that finds it full (no one reads
    it beside the mutants' children) drops its byte, only a count is lost."""
    ticks, tick = os.pipe()
    os.set_blocking(tick, False)
    os.set_blocking(ticks, False)
    return ticks, tick


def _ticked(tick: int) -> None:
    with contextlib.suppress(OSError):  # full, or no one reading: only progress
        os.write(tick, b".")


def _taken(parts: list[list[pytest.Item]], taking: int | None) -> Iterator[pytest.Item]:
    """The items of the parts this child takes from ``taking``; of all, without one."""
    if taking is None:
        for part in parts:
            yield from part
        return
    while len(number := os.read(taking, 4)) == 4:
        yield from parts[struct.unpack("=I", number)[0]]


def _child(session: pytest.Session, items: Iterator[pytest.Item], recorder: CallRecorder,
           watch: Watch, result: Path, parent: int, share: Share, tick: int,
           reads: FileReads) -> None:
    try:
        die_with_parent(parent)
        started = time.monotonic()
        failed: list[str] = []
        tests_run = 0
        untraced: list[str] = []
        tracing = baseline_recorder(recorder, share)
        reads.end()  # recording again, every test's until a test's call
        session.config.pluginmanager.register(reads, "metaeval-file-reads")
        tracing.start()
        before = set(sys.modules)
        item = next(items, None)
        while item is not None:
            watch.first_failed = ""
            # The next test this child runs (its fixtures' teardown depends on it):
            # at a part's end, that takes the next part.
            nextitem = next(items, None)
            tracing.begin(item.nodeid)
            reads.begin(item.nodeid)
            item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            reads.end()
            tracing.end()
            tests_run += 1
            _ticked(tick)
            if not tracing.intact():
                # A test replaced the tracer (a coverage tool does) or CPython dropped
                # it (a RecursionError inside it): what that test ran after went unseen.
                untraced.append(item.nodeid)
                tracing.start()
            if watch.first_failed:
                failed.append(watch.first_failed)
            if session.shouldstop or session.shouldfail:
                break
            item = nextitem
        imported = tuple(name for name in list(sys.modules) if name not in before)
        tracing.stop()
        BaselinePart(tuple(failed), tests_run, tracing.runs() + reads.runs(), watch.durations,
                     tuple(sorted(watch.passed)), tuple(untraced),
                     time.monotonic() - started, imported).write(result)
    except BaseException:  # shown in the runner's error, which quotes this output
        traceback.print_exc()
    finally:
        os._exit(0)
