"""One status ladder for both isolations: the same child outcome, whichever wire
format brings it back, is the same result."""

from __future__ import annotations

from pathlib import Path

import pytest

from metaeval.mutation.fork.parent import of_fork
from metaeval.mutation.fork.protocol import ChildTimes, WarmOutcome, read_warm_line, warm_line
from metaeval.mutation.isolation.outcome import classify
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
from metaeval.mutation.subprocess.parent import ChildOutcome, of_subprocess
from metaeval.mutation.subprocess.protocol import ChildResult
from metaeval.mutation.wire import ErrorKind

MUTANT = Mutant(id="m.py::f::op::0", kind=MutantKind.REWRITE, operator="op", path="m.py",
                module="m", qualname="f", span=Span(1, 1, 1, 2), original="1",
                replacement="2", mutated_source="x = 2\n")
COVERED_BY = ("t.py::a", "t.py::b")
LIMIT = 9.0


def through_subprocess(tmp_path: Path, returncode: int | None, result: ChildResult | None,
                       output: str = "") -> MutantResult:
    # Through the result file, as the runner reads it after the pytest child exits.
    read = None
    if result is not None:
        result.write(tmp_path / "m.result.json")
        read = ChildResult.read(tmp_path / "m.result.json")
    outcome = ChildOutcome(returncode, 2.5, read, output)
    return classify(MUTANT, of_subprocess(outcome, COVERED_BY), LIMIT)


def through_fork(outcome: WarmOutcome) -> MutantResult:
    # Through the stream line, as the runner reads it from the warm process.
    read = read_warm_line(warm_line("mutant", outcome))
    assert isinstance(read, WarmOutcome)
    return classify(MUTANT, of_fork(read, COVERED_BY), LIMIT)


SELECTED = ("t.py::a", "t.py::b")

# (what happened, pytest child: return code and result file, forked child, expected).
SAME = [
    ("killed by its first failing test",
     (1, ChildResult(failed=("t.py::b",), tests_run=2, in_tests=1.25)),
     WarmOutcome(4, SELECTED, failed="t.py::b", times=ChildTimes(in_tests=1.25, wall=2.5)),
     (Status.KILLED, ("t.py::b",))),
    ("every selected test passed",
     (0, ChildResult(tests_run=2, in_tests=1.25)),
     WarmOutcome(4, SELECTED, times=ChildTimes(in_tests=1.25, wall=2.5)),
     (Status.SURVIVED, ())),
    ("ran past its limit",
     (None, None),
     WarmOutcome(4, SELECTED, timed_out=True, exit_status=9,
                 times=ChildTimes(in_tests=1.0, wall=2.5)),
     (Status.TIMEOUT, ())),
    ("the mutated source does not compile in the child",
     (3, ChildResult(ErrorKind.COMPILE, "SyntaxError: invalid syntax")),
     WarmOutcome(4, SELECTED, error_kind=ErrorKind.COMPILE, error="SyntaxError: invalid syntax",
                 times=ChildTimes(wall=2.5)),
     (Status.COMPILE_ERROR, ())),
    ("the patch target is gone",
     (3, ChildResult(ErrorKind.APPLY, "AttributeError: 'f'")),
     WarmOutcome(4, SELECTED, error_kind=ErrorKind.APPLY, error="AttributeError: 'f'",
                 times=ChildTimes(wall=2.5)),
     (Status.RUNTIME_ERROR, ())),
]


@pytest.mark.parametrize(("child", "warm", "expected"), [case[1:] for case in SAME],
                         ids=[case[0] for case in SAME])
def test_the_same_outcome_through_either_wire_format_is_the_same_result(
        tmp_path: Path, child: tuple[int | None, ChildResult | None], warm: WarmOutcome,
        expected: tuple[Status, tuple[str, ...]]) -> None:
    by_subprocess = through_subprocess(tmp_path, *child)
    by_fork = through_fork(warm)
    assert (by_subprocess.status, by_subprocess.killed_by) == expected
    assert by_fork == by_subprocess


def test_a_child_that_dies_without_a_result_is_a_runtime_error_either_way(
        tmp_path: Path) -> None:
    by_subprocess = through_subprocess(tmp_path, -9, None, "...Killed")
    by_fork = through_fork(WarmOutcome(4, SELECTED, reported=False, exit_status=9,
                                       times=ChildTimes(wall=2.5)))
    # Each names what its own wire format left: pytest's output, or the wait status.
    assert by_subprocess.detail == "pytest exited -9 without a result\n...Killed"
    assert by_fork.detail == "the child ended without a result (wait status 9)"
    for result in (by_subprocess, by_fork):
        assert (result.status, result.killed_by, result.covered_by, result.duration) == (
            Status.RUNTIME_ERROR, (), (), 2.5)


@pytest.mark.parametrize(("returncode", "result"), [
    (0, ChildResult(failed=("t.py::a",))),  # a pass code, yet a test failed
    (1, ChildResult()),                      # a failure code, yet no test failed
    (5, ChildResult()),                      # pytest: no tests collected
    (4, ChildResult(failed=("t.py::a",))),   # pytest: usage error
])
def test_a_pytest_child_whose_code_and_result_disagree_is_neither_killed_nor_survived(
        tmp_path: Path, returncode: int, result: ChildResult) -> None:
    got = through_subprocess(tmp_path, returncode, result, "tail of the output")
    assert (got.status, got.killed_by, got.covered_by) == (Status.RUNTIME_ERROR, (), ())
    assert got.detail == f"pytest exited {returncode}\ntail of the output"


def test_a_fork_mutant_no_test_runs_is_not_run_and_says_why() -> None:
    unreached = through_fork(WarmOutcome(4, None))
    lines_unrun = through_fork(WarmOutcome(4, ()))
    assert (unreached.status, unreached.detail, unreached.covered_by) == (
        Status.NO_COVERAGE, "no test runs this code in the baseline", ())
    # No test executes the mutated code either way: NoCoverage, told apart by the detail.
    assert (lines_unrun.status, lines_unrun.covered_by, lines_unrun.duration) == (
        Status.NO_COVERAGE, (), 0.0)
    assert lines_unrun.detail == ("its function runs in the tests, but no test runs the "
                                  "mutated lines")


def test_a_timeout_counts_its_whole_time_as_in_tests_and_names_the_limit(
        tmp_path: Path) -> None:
    got = through_subprocess(tmp_path, None, None)
    assert (got.covered_by, got.duration, got.in_tests, got.detail) == (
        COVERED_BY, 2.5, 2.5, "ran past the 9.0s limit")
