"""The warm process's baseline: the unmutated suite run under the call and line
recorder, in forked children, one per part of the suite at once.

Each child runs its part in collection order (a test may lean on one before
it), records which tests ran which functions and lines of the mutated
packages, and writes a ``BaselinePart`` file; the parts merge into one record,
their seconds added up as if they had run in order. The children are forked,
so the warm process stays as collection left it.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.processes import die_with_parent
from metaeval.mutation.child.work import Watch
from metaeval.mutation.wire import BaselinePart


def trace_parts(session: pytest.Session, parts: list[list[pytest.Item]],
                recorder: CallRecorder, watch: Watch, scratch: Path, name: str
                ) -> tuple[BaselinePart, str]:
    """One traced child per part, all at once; their records merged, and what went
    wrong with a child, if anything. ``name`` keeps this call's files apart."""
    return start_trace(session, parts, recorder, watch, scratch, name).finish()


@dataclass(slots=True)
class Tracing:
    """Traced children started and not yet waited for (``start_trace``)."""

    children: list[tuple[int, Path]]
    statuses: dict[int, int] = field(default_factory=dict)
    """The exit status of each child reaped so far, by pid."""

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


def start_trace(session: pytest.Session, parts: list[list[pytest.Item]],
                recorder: CallRecorder, watch: Watch, scratch: Path, name: str) -> Tracing:
    """Fork one traced child per part and return at once."""
    parent = os.getpid()
    children = []
    for n, part in enumerate(parts):
        result = scratch / f"warm-baseline-{name}-{n}.json"
        pid = os.fork()
        if pid == 0:
            _child(session, part, recorder, watch, result, parent)
        children.append((pid, result))
    return Tracing(children)


def _child(session: pytest.Session, items: list[pytest.Item], recorder: CallRecorder,
           watch: Watch, result: Path, parent: int) -> None:
    try:
        die_with_parent(parent)
        started = time.monotonic()
        failed: list[str] = []
        tests_run = 0
        untraced: list[str] = []
        recorder.start()
        for i, item in enumerate(items):
            watch.first_failed = ""
            nextitem = items[i + 1] if i + 1 < len(items) else None
            item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            tests_run += 1
            if sys.gettrace() is not recorder:
                # A test replaced the tracer (a coverage tool does) or CPython dropped
                # it (a RecursionError inside it): what that test ran after went unseen.
                untraced.append(item.nodeid)
                recorder.start()
            if watch.first_failed:
                failed.append(watch.first_failed)
            if session.shouldstop or session.shouldfail:
                break
        recorder.stop()
        BaselinePart(tuple(failed), tests_run, recorder.runs(), watch.durations,
                     tuple(sorted(watch.passed)), tuple(untraced),
                     time.monotonic() - started).write(result)
    except BaseException:  # shown in the runner's error, which quotes this output
        traceback.print_exc()
    finally:
        os._exit(0)
