"""The warm runner: one pytest process imports and collects once, then forks a
child per mutant that runs only the tests which reach the mutated code.

It lives inside the pytest process that ``metaeval mutate --isolation fork``
starts with ``--metaeval-warm SPEC``. It takes over the test loop: a traced
baseline (in a forked child, so the parent stays as collection left it), a
forced-fail child that must be killed, then one forked child per mutant,
``jobs`` at a time, every mutant planned before the first fork. A child puts
its mutant in place as the planner said (a rewrite by giving the changed
functions their mutated code objects, or by executing modules again; a patch
as the subprocess plugin does), runs its selected tests fastest first
(collecting again, as the run reaches them, the test modules it executed
again), stops at the first failure, writes a line to a pipe and ends with
``os._exit``. A mutant no child can put in place is
*deferred*: the runner gives it a pytest process of its own. Every outcome is
appended to the stream file the runner reads as it goes.

It must never write the user's tree, never let a child run past its limit (the
child leads its own process group, which is killed whole), and never leave a
child behind: children are reaped, and die with the warm process.
"""

from __future__ import annotations

import gc
import os
import signal
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TextIO

import pytest

from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.reads import FileReads
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.fork.baseline import start_trace, trace_parts
from metaeval.mutation.fork.child import Watch, describe, run_job
from metaeval.mutation.fork.items import parts_of, run_order
from metaeval.mutation.fork.planner import How, ImportTime, Planner
from metaeval.mutation.fork.pool import Job, Limits, Pool, Running, Tick, job_limits
from metaeval.mutation.fork.preload import preload
from metaeval.mutation.fork.protocol import (
    BaselinePart,
    ChildReport,
    ChildTimes,
    WarmBaseline,
    WarmMutant,
    WarmOutcome,
    WarmPhase,
    WarmSpec,
    read_warm_mutants,
    warm_line,
)
from metaeval.mutation.fork.registries import Ledger
from metaeval.mutation.fork.reload import ReloadPlan
from metaeval.mutation.fork.swap import import_callers
from metaeval.mutation.model import MutantKind
from metaeval.mutation.patches import PatchMutant
from metaeval.mutation.processes import die_with_parent
from metaeval.mutation.wire import ErrorKind, Reuse

FORCED_FAIL = "forced-fail"
OVERLAP_SHARE = 0.25
"""The largest share of the suite traced again beside the mutants (``_overlap``):
every mutant runs those tests, which costs more than it saves beyond a few."""


class WarmSession:
    """The plugin object of the warm process, registered only with ``--metaeval-warm``."""

    def __init__(self, spec: WarmSpec, recorder: CallRecorder, ledger: Ledger | None = None
                 ) -> None:
        self.spec = spec
        self.recorder = recorder
        self.ledger = ledger
        """What each project module's import added to registries, watched while this
        process imports (collection, ``preload``), never while a test runs."""
        self.watch = Watch()
        self.reads = FileReads(Path(spec.root))
        """The data files the baseline's tests read; from here, before any conftest,
        a read is every test's (a test module loading its cases as it is collected)."""
        self.reads.start()
        self.started = time.monotonic()
        self.pid = os.getpid()
        self.untraced: frozenset[str] = frozenset()
        """Tests during which the baseline's tracer was replaced or switched off:
        what they ran is partly unseen, so every mutant runs them."""
        self.stale: frozenset[str] = frozenset()
        """Tests being traced again beside the mutants (``_overlap``): any may reach
        a mutant, so every mutant runs them."""
        self.imported: tuple[str, ...] = ()
        """Modules the baseline's tests imported (``preload``)."""
        self.collected = 0.0
        """Seconds this process took to start, import and collect the tests."""
        self.attempts = 0
        """Traced baselines started (each a fresh set of result files)."""
        self.coverage = Coverage(Path(spec.root), {})
        self.planner = Planner(Path(spec.root), spec.packages, (), {}, {}, {})
        self.declared: dict[str, PatchMutant] = {}
        """Patch mutants loaded once, before forking: executing the mutants files in
        every child would cost more than most tests."""
        self.stream: TextIO | None = None
        self.mutants: tuple[WarmMutant, ...] = ()
        self.whole_suite: set[int] = set()
        """Mutants that run every test (not a selection): after a reload, tests with
        new ids run too, as in a pytest process running the whole suite."""
        self.pool = Pool(spec.jobs, spec.memory_limit, self._work, self._failing_import)

    # --- hooks -------------------------------------------------------------------

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.watch.collect_failed.append(report.nodeid or "<collection>")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.watch.record(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        self.recorder.stop()
        if self.ledger is not None:
            self.ledger.stop()
        import_time = import_callers(self.recorder)
        items = list(session.items)
        # Every child shares the parent's memory copy-on-write; a collection in a
        # child would write to every object's header and copy the whole heap.
        gc.collect()
        gc.freeze()
        signal.signal(signal.SIGTERM, self._terminated)
        with Path(self.spec.stream_path).open("a", encoding="utf-8") as stream:
            self.stream = stream
            reuse = Reuse.read(Path(self.spec.reuse_path)) if self.spec.reuse_path else None
            if reuse is not None and self._overlap(session, items, import_time, reuse):
                return True
            baseline = self._baseline(session, items, reuse)
            self._emit(warm_line("baseline", baseline))
            if not baseline.failed and not baseline.wiring:
                if self._preload():
                    import_time = import_callers(self.recorder)
                    gc.collect()
                    gc.freeze()
                self.mutants = self._await_mutants()
                self._run_mutants(items, baseline, import_time)
        return True

    def _preload(self) -> bool:
        """``preload``, with the registries watched as collection's imports were."""
        if self.ledger is not None:
            self.ledger.start()
        try:
            return bool(preload(self.imported, self.recorder))
        finally:
            if self.ledger is not None:
                self.ledger.stop()

    def _terminated(self, signum: int, frame: object) -> None:
        """The runner stops this process (interrupted, or done with it): kill every
        child, with whatever their tests started, and go."""
        if os.getpid() == self.pid:  # not a forked child, which inherits this handler
            self.pool.kill_all()
        os._exit(128 + signum)

    # --- the baseline ------------------------------------------------------------

    def _await_mutants(self) -> tuple[WarmMutant, ...]:
        """The mutants, once the runner has written them: it may still be finding
        them while this process collects and traces the baseline. If the runner
        dies first, so does this process (``die_with_parent``)."""
        path = Path(self.spec.mutants_path)
        while not path.exists():
            time.sleep(0.005)
        return read_warm_mutants(path)

    def _emit(self, line: str) -> None:
        assert self.stream is not None
        self.stream.write(line)
        self.stream.flush()

    def _traced(self, session: pytest.Session, parts: list[list[pytest.Item]], jobs: int
                ) -> tuple[BaselinePart, str]:
        self.attempts += 1
        total = sum(len(part) for part in parts)
        self._emit(warm_line("phase", WarmPhase("tracing", 0, total)))
        return trace_parts(session, parts, jobs, self.recorder, self.watch,
                           Path(self.spec.scratch), str(self.attempts), self.reads,
                           lambda done: self._emit(warm_line(
                               "phase", WarmPhase("tracing", done, total))))

    def _baseline(self, session: pytest.Session, items: list[pytest.Item],
                  reuse: Reuse | None) -> WarmBaseline:
        tests = tuple(item.nodeid for item in items)
        if self.watch.collect_failed or not items:
            failed = tuple(self.watch.collect_failed) or ("<no tests collected>",)
            return WarmBaseline(failed, 0, 0.0, (), tests, "")
        collected = self.collected = time.monotonic() - self.started
        todo = [i for i in items if i.nodeid not in reuse.tests] if reuse else items
        # The suite in contiguous parts, traced by ``jobs`` children at the same time:
        # the baseline is the one stretch where a single process would leave the
        # other cores idle.
        jobs = self.spec.jobs
        parts = parts_of(todo, jobs)
        part, problem = self._traced(session, parts, jobs)
        if reuse is not None and (problem or part.failed):
            # A traced test may lean on a reused one that ran before it: only the
            # whole suite in its order can say that the suite fails.
            reuse, todo = None, items
            parts = parts_of(todo, jobs)
            part, problem = self._traced(session, parts, jobs)
        if len(parts) > 1 and jobs > 1 and (problem or part.failed):
            # A test may lean on one that ran before it in another part: only the
            # whole suite in its order can say that the suite fails.
            part, problem = self._traced(session, [todo], 1)
        baseline = self._merged(items, part, problem, collected, reuse)
        if baseline.failed:
            return baseline
        return replace(baseline, wiring=self._wiring(items))

    def _merged(self, items: list[pytest.Item], part: BaselinePart, problem: str,
                collected: float, reuse: Reuse | None) -> WarmBaseline:
        """The baseline from what was traced now and the records reused (the forced-fail
        check not done); this process's durations, passing tests and untraced tests
        set from it."""
        tests = tuple(item.nodeid for item in items)
        # The limit per mutant scales with the suite run in order, as a mutant's are.
        duration = collected + part.seconds
        if problem:
            return WarmBaseline((problem,), 0, duration, (), tests, "")
        ran = part.ran
        self.watch.durations = dict(part.durations)
        self.watch.passed = set(part.passed)
        self.untraced = frozenset(part.untraced)
        self.imported = part.imported
        if reuse is not None:
            collected_ids = set(tests)
            kept = {t: d for t, d in reuse.tests.items() if t in collected_ids}
            self.watch.durations = {**kept, **self.watch.durations}
            self.watch.passed |= kept.keys()
            ran += reuse.ran
        reused = sum(1 for t in tests if reuse is not None and t in reuse.tests)
        return WarmBaseline(part.failed, part.tests_run, duration, ran, tests, "",
                            durations=self.watch.durations,
                            passed=tuple(sorted(self.watch.passed)),
                            reused=reused, stale=reuse.stale if reuse else 0,
                            untraced=tuple(sorted(self.untraced)), collected=collected)

    # --- a baseline traced beside the mutants ---------------------------------------

    def _overlap(self, session: pytest.Session, items: list[pytest.Item],
                 import_time: ImportTime, reuse: Reuse) -> bool:
        """A run that reuses most of an earlier baseline (a pull request's) traces its
        few stale tests in children *beside* the mutants' children, instead of
        before them: on two cores, a lone survivor running the tests that reach a
        changed function would otherwise leave one core idle after the trace left
        the other idle. Until the trace is done every mutant also runs the stale
        tests (they may reach it), with their earlier times for its limits, and its
        outcome waits: the runner reads the baseline first. If the new baseline
        fails, every such outcome is dropped and the run starts again in order.
        False (nothing done) when the stale tests are more than ``OVERLAP_SHARE``
        of the suite, or one of them is new (no earlier time for its limit)."""
        todo = [i for i in items if i.nodeid not in reuse.tests]
        if (self.watch.collect_failed or not todo or len(todo) > OVERLAP_SHARE * len(items)
                or any(i.nodeid not in reuse.old for i in todo)):
            return False
        collected = self.collected = time.monotonic() - self.started
        self.attempts += 1
        # Forked before this process takes the earlier times: the traced children
        # start from collection, as in ``_baseline``.
        tracing = start_trace(session, parts_of(todo, self.spec.jobs),
                              self.spec.jobs, self.recorder,
                              self.watch, Path(self.spec.scratch), str(self.attempts),
                              self.reads)
        collected_ids = {i.nodeid for i in items}
        kept = {t: d for t, d in reuse.tests.items() if t in collected_ids}
        self.watch.durations = {**reuse.old, **kept}
        self.watch.passed = set(kept)
        self.stale = frozenset(i.nodeid for i in todo)
        held: list[WarmOutcome] | None = []
        void = False
        wiring = self._wiring(items)

        def settle(part: BaselinePart, problem: str) -> None:
            nonlocal held, void
            baseline = self._merged(items, part, problem, collected, reuse)
            if baseline.failed:
                void = True
                self.pool.cancel()
            else:
                self._emit(warm_line("baseline", replace(baseline, wiring=wiring,
                                                         beside=True)))
                for outcome in held or ():
                    self._emit(warm_line("mutant", outcome))
            held = None

        def emit(outcome: WarmOutcome) -> None:
            if held is not None and tracing.poll():
                settle(*tracing.finish())
            if void:
                return
            if held is not None:
                held.append(outcome)
            else:
                self._emit(warm_line("mutant", outcome))

        if not wiring:
            self.mutants = self._await_mutants()
            provisional = WarmBaseline((), 0, 0.0, reuse.ran, (), "")
            self._run_mutants(items, provisional, import_time, emit)
        if held is not None:
            settle(*tracing.finish())
        if void:
            # Every outcome dropped; the baseline again, the whole suite in its order.
            self.stale = frozenset()
            self.watch.durations, self.watch.passed = {}, set()
            baseline = self._baseline(session, items, None)
            self._emit(warm_line("baseline", baseline))
            if not baseline.failed and not baseline.wiring:
                self._run_mutants(items, baseline, import_time)
        return True

    def _wiring(self, items: list[pytest.Item]) -> str:
        """One child whose fastest passing test is forced to fail must report it."""
        probe = WarmMutant(-1, FORCED_FAIL, MutantKind.PATCH, "", "", "", "", (0, 0, 0, 0))
        passed = self.watch.passed
        ran = [item for item in items if item.nodeid in passed]  # not skipped, not xfail
        if not ran:
            return "no test ran and passed in the baseline"
        fastest = min(ran, key=lambda item: self.watch.durations.get(item.nodeid, 0.0))
        outcome = self.pool.run([Job(probe, (fastest,), [], probe=True)])
        if outcome and outcome[0].failed == fastest.nodeid:
            return ""
        return f"the forced-fail child was not killed: {outcome[0] if outcome else None!r}"

    # --- the mutants -------------------------------------------------------------

    def _select(self, items: list[pytest.Item], work: WarmMutant
                ) -> tuple[pytest.Item, ...] | None:
        """The tests that run the mutant's lines, those the tracer did not see
        through and those being traced again beside it, in ``run_order`` (``()`` when
        its function runs but those lines do not); None when its function never runs."""
        selection = self.coverage.select(work.mutant())
        if selection.tests is None and selection.reached:
            # Module or class body, or code that ran only at import: every test may see it.
            self.whole_suite.add(work.index)
            chosen = list(items)
        else:
            wanted = set(selection.tests or ()) | self.untraced | self.stale
            chosen = [item for item in items if item.nodeid in wanted]
            if not chosen and not selection.reached:
                return None
        position = {item.nodeid: i for i, item in enumerate(items)}
        return tuple(run_order(chosen, position, self.watch.durations, work.killers,
                               selection.first))

    def _run_mutants(self, items: list[pytest.Item], baseline: WarmBaseline,
                     import_time: ImportTime,
                     emit: Callable[[WarmOutcome], None] | None = None) -> None:
        if emit is None:
            emit = self._emit_outcome
        self.coverage = Coverage.from_runs(Path(self.spec.root), baseline.ran)
        self.planner = Planner(
            Path(self.spec.root), self.spec.packages,
            (m.module for m in self.mutants if m.kind is MutantKind.REWRITE),
            import_time, self.recorder.importers,
            {node.obj.__name__: node.nodeid for item in items
             if (node := item.getparent(pytest.Module)) is not None},
            self.recorder.module_codes,
            self.ledger.registered if self.ledger is not None else None)
        if any(m.kind is MutantKind.PATCH for m in self.mutants):
            self.declared = _load_declared(Path(self.spec.mutants_dir))
        work: list[tuple[WarmMutant, tuple[pytest.Item, ...]]] = []
        for mutant in self.mutants:
            selected = self._select(items, mutant)
            if selected is None:
                emit(WarmOutcome(mutant.index, None))
            else:
                work.append((mutant, selected))
        # Longest first (by what the selected tests took in the baseline): a long
        # survivor started last would leave the other workers idle at the end.
        durations = self.watch.durations
        work.sort(key=lambda job: -sum(durations.get(item.nodeid, 0.0) for item in job[1]))
        jobs: list[Job] = []
        for mutant, selected in work:
            started = time.monotonic()
            # No test runs the mutated lines: the original's passing run stands.
            how, settled = ([], WarmOutcome(mutant.index, ())) if not selected \
                else self._plan(mutant, selected)
            if settled is not None:
                # A process of its own starts, imports and collects before its tests.
                emit(replace(settled, times=ChildTimes(
                    limit=self._limits(selected, reloads=True).whole)) if settled.deferred
                    else settled)
            else:
                reloads = isinstance(how, ReloadPlan)
                jobs.append(Job(mutant, selected, how, time.monotonic() - started,
                                self._limits(selected, reloads)))
        self.pool.run(jobs, emit)

    def _emit_outcome(self, outcome: WarmOutcome) -> None:
        self._emit(warm_line("mutant", outcome))

    def _limits(self, selected: tuple[pytest.Item, ...], reloads: bool) -> Limits:
        """A mutant's limits (``pool.job_limits``) from its selected tests' baseline
        times; a child that executes modules again also imports and collects (the
        most that can take)."""
        durations = self.watch.durations
        return job_limits([durations.get(item.nodeid, 0.0) for item in selected],
                          self.collected if reloads else 0.0, self.spec.timeout_factor,
                          self.spec.timeout_constant)

    def _plan(self, mutant: WarmMutant, selected: tuple[pytest.Item, ...]
              ) -> tuple[How, WarmOutcome | None]:
        """How a child puts the mutant in place (``planner``); or its outcome when it
        cannot be forked: it does not compile, or it is deferred to a pytest process
        of its own (no plan could be made)."""
        if mutant.kind is not MutantKind.REWRITE:
            return [], None
        try:
            how = self.planner.plan(mutant)
        except SyntaxError as e:
            return [], WarmOutcome(mutant.index, tuple(i.nodeid for i in selected),
                                   error_kind=ErrorKind.COMPILE, error=describe(e))
        if isinstance(how, str):
            return [], WarmOutcome(mutant.index, tuple(i.nodeid for i in selected),
                                   deferred=True, error=how)
        return how, None

    def _work(self, job: Job, began: float, tick: Tick) -> ChildReport:
        """What each forked child does (``pool``)."""
        return run_job(job, began, self.watch, job.mutant.index in self.whole_suite,
                       self._patch, tick)

    def _patch(self, mutant_id: str) -> PatchMutant:
        declared = self.declared.get(mutant_id)
        if declared is None:  # not loaded in the parent: let the loader say why
            from metaeval.mutation.patches import find_declared

            declared = find_declared(Path(self.spec.mutants_dir), mutant_id)
        return declared

    def _failing_import(self, child: Running, report: ChildReport) -> WarmOutcome:
        """A child that could not put its mutant in place: killed by the collection
        of the first test module importing the module that raised, when a fresh
        process would say so (``failing_import``); else deferred to one."""
        collected = None
        raised_in, plan = report.raised_in, child.plan
        if raised_in is not None and plan is not None:
            collected = self.planner.failing_collection(
                plan, raised_in, child.job.limits.whole, lambda: die_with_parent(self.pid))
        times = ChildTimes(wall=time.monotonic() - child.started)
        index, selected = child.job.mutant.index, child.job.nodeids
        if collected is None:
            return WarmOutcome(index, selected, deferred=True, times=times,
                               error=raised_note(raised_in, report.error, plan))
        return WarmOutcome(index, selected, failed=collected, reloaded=True, times=times,
                           error=f"importing {raised_in} raises {report.error}")


def raised_note(raised_in: str | None, error: str, plan: ReloadPlan | None) -> str:
    """Why a mutant whose module raised when executed again goes to a process of its
    own: what was done first, and what keeps such a mutant in the fork."""
    if not raised_in:
        return f"putting it in place raised {error}"
    taken = len(plan.registered.get(raised_in, ())) if plan is not None else 0
    done = (f"after the {taken} entries its first import added to registries were taken out"
            if taken else "its first import added nothing to a module-level dict, list or set"
            " of another module")
    return (f"executing {raised_in} again raised {error} ({done}); a registry held elsewhere "
            "(an instance's attribute) that refuses a second registration does this: "
            "accepting the same name again, or keeping the registry in a module-level dict, "
            "keeps such mutants in the fork")


def _load_declared(directory: Path) -> dict[str, PatchMutant]:
    from metaeval.mutation.patches import load_declared

    try:
        return {d.mutant.id: d.mutant for d in load_declared(directory)}
    except Exception:  # a bad file: each child reports it for its own mutant
        return {}
