"""What one child did with one mutant, and the status that follows from it.

A mutant's tests run in one of two ways (``runner.Isolation``), and each brings
its answer back in its own wire format: a pytest child's return code and
``ChildResult`` file (subprocess), or one line of the warm runner's stream
(fork). Each isolation's parent turns its own into one ``ChildVerdict``
(``subprocess.parent.of_subprocess``, ``fork.parent.of_fork``); ``classify`` turns
that into a ``MutantResult``, so the same thing done in either isolation gets the
same status.

This module only interprets: it never starts, waits for or kills a process,
and never reads a file. ``unreached`` makes a survivor that no traced test
reaches NoCoverage, given the selection the runner made for it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum

from metaeval.mutation.coverage import Selection
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.mutation.wire import ErrorKind


class NotRun(Enum):
    """Why no test was run against a mutant (the fork runner decides this up front)."""

    NO_TEST_REACHES = "no-test-reaches"
    """No test reaches its code in the baseline: NoCoverage."""
    NO_TEST_RUNS_LINES = "no-test-runs-lines"
    """Its function runs in the tests, but none runs the mutated lines: NoCoverage too
    (no test executes the mutated code), told apart in the detail."""


NOT_RUN_DETAIL = {
    NotRun.NO_TEST_REACHES: "no test runs this code in the baseline",
    NotRun.NO_TEST_RUNS_LINES: "its function runs in the tests, but no test runs the "
                               "mutated lines",
}


@dataclass(frozen=True, slots=True)
class ChildVerdict:
    """What one child did with one mutant, whichever isolation ran it.

    ``classify`` reads the fields in a fixed order: ``not_run``, ``timed_out``,
    ``reported``, ``error_kind``, ``failed``; the first that is set decides.
    """

    not_run: NotRun | None = None
    """Set when no test ran at all; every other field is then unused."""
    timed_out: bool = False
    reported: bool = True
    """False when the child left no answer that can be trusted; ``error`` says what it left."""
    error_kind: ErrorKind = ErrorKind.NONE
    error: str = ""
    """Why the mutant could not be applied, or why no answer came; beside a kill, what
    the child said with it."""
    failed: str = ""
    """The first failing test (the run stopped there); empty when all passed."""
    in_tests: float = 0.0
    """Seconds inside the tests' setup, call and teardown."""
    wall: float = 0.0
    """Seconds the child took, start or fork to reaping."""
    covered_by: tuple[str, ...] = ()
    """The tests the baseline saw reach the mutant."""

def classify(mutant: Mutant, verdict: ChildVerdict, timeout: float) -> MutantResult:
    """The status of ``mutant`` from what its child did; ``timeout`` is the limit it had.

    Only a mutant whose tests ran to an answer (killed, survived, timed out) names
    the tests that cover it; an error names none, since its tests proved nothing.
    """
    if verdict.not_run is not None:
        return MutantResult(mutant, Status.NO_COVERAGE, detail=NOT_RUN_DETAIL[verdict.not_run])
    took, covered_by = verdict.wall, verdict.covered_by
    if verdict.timed_out:
        # Killed at the limit: all of its time was spent in its tests.
        return MutantResult(mutant, Status.TIMEOUT, covered_by=covered_by, duration=took,
                            in_tests=took,
                            detail=verdict.error or f"ran past the {timeout:.1f}s limit")
    if not verdict.reported:
        return MutantResult(mutant, Status.RUNTIME_ERROR, duration=took, detail=verdict.error)
    if verdict.error_kind is ErrorKind.COMPILE:
        return MutantResult(mutant, Status.COMPILE_ERROR, duration=took, detail=verdict.error)
    if verdict.error_kind is ErrorKind.APPLY:
        return MutantResult(mutant, Status.RUNTIME_ERROR, duration=took, detail=verdict.error)
    if verdict.failed:
        return MutantResult(mutant, Status.KILLED, killed_by=(verdict.failed,),
                            covered_by=covered_by, duration=took, in_tests=verdict.in_tests,
                            detail=verdict.error)
    return MutantResult(mutant, Status.SURVIVED, covered_by=covered_by, duration=took,
                        in_tests=verdict.in_tests)


def unreached(result: MutantResult, selection: Selection) -> MutantResult:
    """A survivor that no test the baseline traced reaches is NoCoverage: the tests
    it ran anyway (a tracer can miss code, and tests the tracer did not see
    through run for every mutant) could not have told. A kill stays a kill."""
    if result.status is not Status.SURVIVED or (selection.reached and not selection.unseen):
        return result
    why = NotRun.NO_TEST_REACHES if not selection.reached else NotRun.NO_TEST_RUNS_LINES
    return dataclasses.replace(result, status=Status.NO_COVERAGE, detail=NOT_RUN_DETAIL[why])
