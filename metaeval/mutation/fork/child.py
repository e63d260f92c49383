"""What a forked child of the warm process does with its job: put the mutant in
place as the planner said, run its selected tests fastest first, stop at the
first failure, and say how it went.

A rewrite mutant gets its changed functions' code swapped in, or its modules
executed again (``reload``), after which the test modules executed again are
collected again as the run reaches them; a patch mutant is applied as the
subprocess plugin applies it; the forced-fail probe makes its test fail. A
child that cannot put its mutant in place as a fresh import would defers it
to a pytest process of its own, saying why. It runs only in a forked child:
whatever it changes dies with the child.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pytest

from metaeval.mutation.child.apply import apply_patch
from metaeval.mutation.fork.items import CollectAgainError, Recollected
from metaeval.mutation.fork.pool import Job, Tick
from metaeval.mutation.fork.protocol import ChildReport
from metaeval.mutation.fork.reload import ExecError, ReloadPlan, apply_reload
from metaeval.mutation.fork.swap import apply_swap
from metaeval.mutation.model import MutantKind
from metaeval.mutation.patches import PatchMutant
from metaeval.mutation.wire import ErrorKind


@dataclass(slots=True)
class Watch:
    """What the warm process's hooks see of the tests that run (in the baseline's
    children and the mutants' alike)."""

    first_failed: str = ""
    """The first test that failed since this was last cleared."""
    collect_failed: list[str] = field(default_factory=list)
    """Collectors that failed, the warm process's own collection first."""
    durations: dict[str, float] = field(default_factory=dict)
    """Each test's seconds: setup, call and teardown."""
    passed: set[str] = field(default_factory=set)
    """Tests whose call phase ran and passed."""

    def record(self, report: pytest.TestReport) -> None:
        self.durations[report.nodeid] = self.durations.get(report.nodeid, 0.0) + report.duration
        if report.failed and not self.first_failed:
            self.first_failed = report.nodeid
        if report.when == "call" and report.passed:
            self.passed.add(report.nodeid)


PatchLookup = Callable[[str], PatchMutant]
"""A declared patch mutant by id."""


def run_job(job: Job, began: float, watch: Watch, whole_suite: bool,
            patches: PatchLookup, tick: Tick) -> ChildReport:
    """Put ``job`` in place and run its tests; ``began`` is when the child started
    (the time before the first test is the time it took to put the mutant in place)."""
    watch.first_failed = ""
    run: Iterable[pytest.Item] = job.selected
    error_kind, error = ErrorKind.NONE, ""
    if isinstance(job.how, ReloadPlan):
        try:
            apply_reload(job.how)
        except ExecError as e:
            return ChildReport(deferred=True, error=describe(e.__cause__ or e),
                               raised_in=e.module)
        except Exception as e:
            # What a fresh import makes of it is for a process of its own to say.
            return ChildReport(deferred=True, error=describe(e))
        run = Recollected(job.selected, job.how.modules, whole_suite)
    else:
        try:
            _apply(job, patches)
        except (Exception, SystemExit) as e:  # missing target, a replacement that
            # raises or calls exit(): this mutant's RuntimeError, with the reason
            error_kind, error = ErrorKind.APPLY, describe(e)
    placing = time.monotonic() - began
    if error_kind is not ErrorKind.NONE:
        return ChildReport(error_kind=error_kind, error=error, placing=placing)
    # Only the failing test's name is reported: formatting its traceback would cost
    # more than most tests (inspect.getmodule walks every module).
    if job.selected:
        job.selected[0].config.option.tbstyle = "no"
    in_tests = 0.0
    failed_collections = len(watch.collect_failed)
    items = iter(run)
    try:
        # Each test's successor is found before it runs (its fixtures are torn down
        # by what comes next); finding it may collect a module again.
        nextitem = next(items, None)
        while nextitem is not None and not watch.first_failed:
            item, nextitem = nextitem, next(items, None)
            if len(watch.collect_failed) > failed_collections:
                return ChildReport(deferred=True, error="a test module failed to be collected "
                                   "again after its modules were executed again")
            tick()
            started = time.perf_counter()
            item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            in_tests += time.perf_counter() - started
    except CollectAgainError as e:
        # What a fresh import makes of it is for a process of its own to say.
        return ChildReport(deferred=True, error="collecting a test module again raised "
                           + describe(e.__cause__ or e))
    return ChildReport(failed=watch.first_failed, in_tests=in_tests, placing=placing,
                       reloaded=isinstance(job.how, ReloadPlan))


def _apply(job: Job, patches: PatchLookup) -> None:
    if job.probe:
        for item in job.selected:
            item.runtest = _forced_fail  # type: ignore[method-assign]
    elif job.mutant.kind is MutantKind.REWRITE:
        assert not isinstance(job.how, ReloadPlan)
        apply_swap(job.how)
    else:
        declared = patches(job.mutant.id)
        apply_patch(declared.target, declared.replacement)


def _forced_fail() -> None:
    raise AssertionError("metaeval forced-fail check: this test must fail")


def describe(error: BaseException) -> str:
    """An exception as one line (its last 2,000 characters)."""
    return "".join(traceback.format_exception_only(type(error), error)).strip()[-2000:]
