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
import json
import os
import select
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import pytest

from metaeval.mutation.apply import CallRecorder, apply_patch
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.items import CollectAgainError, Recollected, parts_of, speed_class
from metaeval.mutation.model import MutantKind
from metaeval.mutation.patches import PatchMutant
from metaeval.mutation.planner import How, ImportTime, Planner
from metaeval.mutation.processes import (
    cap_address_space,
    die_with_parent,
    kill_group,
    look_up_prctl,
    process_size,
)
from metaeval.mutation.reload import ExecError, ReloadPlan, apply_reload
from metaeval.mutation.swap import Swap, apply_swap, import_callers
from metaeval.mutation.wire import (
    CodeRun,
    ErrorKind,
    Reuse,
    WarmBaseline,
    WarmMutant,
    WarmOutcome,
    WarmSpec,
    read_warm_mutants,
    warm_line,
)

FORCED_FAIL = "forced-fail"
_READ_SIZE = 65536


@dataclass(frozen=True, slots=True)
class _Job:
    """A mutant for a child, planned before the first fork: planning in the warm
    process while children share its memory would copy every page it writes."""

    mutant: WarmMutant
    selected: tuple[pytest.Item, ...]
    how: How
    planning: float = 0.0
    """Seconds its plan took: counted in the mutant's time outside its tests."""
    limit: float = 60.0
    """Seconds its child may take, from the fork."""
    nodeids: tuple[str, ...] = field(init=False)
    """The selected tests' ids, read here and not between forks (for the same reason)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodeids", tuple(item.nodeid for item in self.selected))


@dataclass(slots=True)
class _Child:
    """A running child, seen from the warm process."""

    pid: int
    fd: int
    work: WarmMutant
    selected: tuple[str, ...]
    started: float
    limit: float
    plan: ReloadPlan | None
    """How it executes modules again, if it does."""
    forking: float
    """Seconds ``os.fork`` took in the warm process."""
    resident: int
    """Bytes of the warm process resident when it forked this one."""
    data: bytearray = field(default_factory=bytearray)
    eof: bool = False

    @property
    def deadline(self) -> float:
        return self.started + self.limit


class WarmSession:
    """The plugin object of the warm process, registered only with ``--metaeval-warm``."""

    def __init__(self, spec: WarmSpec, recorder: CallRecorder) -> None:
        self.spec = spec
        self.recorder = recorder
        self.collect_failed: list[str] = []
        self.first_failed = ""
        self.durations: dict[str, float] = {}
        self.passed: set[str] = set()
        """Tests whose call phase ran and passed in the baseline."""
        self.traced = True
        self.started = time.monotonic()
        self.pid = os.getpid()
        self.coverage = Coverage(Path(spec.root), {})
        self.planner = Planner(Path(spec.root), spec.packages, (), {}, {}, {})
        self.declared: dict[str, PatchMutant] = {}
        """Patch mutants loaded once, before forking: executing the mutants files in
        every child would cost more than most tests."""
        self.stream: TextIO | None = None
        self.mutants: tuple[WarmMutant, ...] = ()
        self.exiting: list[int] = []
        """Children that answered and were sent on their way, not yet reaped."""
        self.memory_cap = 0
        """A child's address-space limit: the parent's size when the pool starts
        (a child starts as a copy of it) plus the spec's limit; 0 for none."""
        self.collected = 0.0
        self.attempts = 0
        """Traced baselines started (each a fresh set of result files)."""
        """Seconds this process took to start, import and collect the tests."""
        self.whole_suite: set[int] = set()
        """Mutants that run every test (not a selection): after a reload, tests with
        new ids run too, as in a pytest process running the whole suite."""
        self.running: dict[int, _Child] = {}
        """The children running now, by the read end of their pipe."""

    # --- hooks -------------------------------------------------------------------

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_failed.append(report.nodeid or "<collection>")

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.recorder.begin(nodeid)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.recorder.end()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.durations[report.nodeid] = self.durations.get(report.nodeid, 0.0) + report.duration
        if report.failed and not self.first_failed:
            self.first_failed = report.nodeid
        if report.when == "call" and report.passed:
            self.passed.add(report.nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        self.recorder.stop()
        import_time = import_callers(self.recorder)
        items = list(session.items)
        # Every child shares the parent's memory copy-on-write; a collection in a
        # child would write to every object's header and copy the whole heap.
        gc.collect()
        gc.freeze()
        signal.signal(signal.SIGTERM, self._terminated)
        with Path(self.spec.stream_path).open("a", encoding="utf-8") as stream:
            self.stream = stream
            baseline = self._baseline(session, items)
            self._emit(warm_line("baseline", baseline))
            if not baseline.failed and not baseline.wiring:
                self.mutants = self._await_mutants()
                self._run_mutants(items, baseline, import_time)
        return True

    def _terminated(self, signum: int, frame: object) -> None:
        """The runner stops this process (interrupted, or done with it): every child
        leads a process group of its own, which the runner cannot see; kill them
        all, with whatever their tests started, and go."""
        if os.getpid() == self.pid:  # not a forked child, which inherits this handler
            for pid in [*(c.pid for c in self.running.values()), *self.exiting]:
                kill_group(pid)
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

    def _baseline(self, session: pytest.Session, items: list[pytest.Item]) -> WarmBaseline:
        tests = tuple(item.nodeid for item in items)
        if self.collect_failed or not items:
            failed = tuple(self.collect_failed) or ("<no tests collected>",)
            return WarmBaseline(failed, 0, 0.0, (), tests, "")
        collected = self.collected = time.monotonic() - self.started
        reuse = Reuse.read(Path(self.spec.reuse_path)) if self.spec.reuse_path else None
        todo = [i for i in items if i.nodeid not in reuse.tests] if reuse else items
        # The suite in ``jobs`` contiguous parts, each traced in a child of its own at
        # the same time: the baseline is the one stretch where a single process
        # would leave the other cores idle.
        parts = parts_of(todo, self.spec.jobs)
        data, problem = self._traced(session, parts)
        if reuse is not None and (problem or data["failed"]):
            # A traced test may lean on a reused one that ran before it: only the
            # whole suite in its order can say that the suite fails.
            reuse, todo = None, items
            parts = parts_of(todo, self.spec.jobs)
            data, problem = self._traced(session, parts)
        if len(parts) > 1 and (problem or data["failed"]):
            # A test may lean on one that ran before it in another part: only the
            # whole suite in its order can say that the suite fails.
            data, problem = self._traced(session, [todo])
        # The limit per mutant scales with the suite run in order, as a mutant's are.
        duration = collected + data["seconds"]
        if problem:
            return WarmBaseline((problem,), 0, duration, (), tests, "")
        ran = tuple(CodeRun.from_json(r) for r in data["ran"])
        self.durations = data["durations"]
        self.passed = set(data["passed"])
        self.traced = data["traced"]
        if reuse is not None:
            collected_ids = {item.nodeid for item in items}
            kept = {t: d for t, d in reuse.tests.items() if t in collected_ids}
            self.durations = {**kept, **self.durations}
            self.passed |= kept.keys()
            ran += reuse.ran
        wiring = self._wiring(items)
        return WarmBaseline(tuple(data["failed"]), data["tests_run"], duration, ran, tests,
                            wiring, durations=self.durations, passed=tuple(sorted(self.passed)),
                            reused=len(items) - len(todo), stale=reuse.stale if reuse else 0,
                            traced=self.traced)

    def _traced(self, session: pytest.Session, parts: list[list[pytest.Item]]
                ) -> tuple[dict[str, Any], str]:
        """One traced child per part, all at once; their records merged (the seconds
        added up, as if run in order), and what went wrong with a child, if anything."""
        children = []
        self.attempts += 1
        for n, part in enumerate(parts):
            result = Path(self.spec.scratch) / f"warm-baseline-{self.attempts}-{n}.json"
            pid = os.fork()
            if pid == 0:
                self._baseline_child(session, part, result)
            children.append((pid, result))
        merged: dict[str, Any] = {"failed": [], "tests_run": 0, "ran": [], "durations": {},
                                  "traced": True, "passed": [], "seconds": 0.0}
        problem = ""
        for pid, result in children:
            _, status = os.waitpid(pid, 0)
            if not result.exists():
                problem = problem or f"<the baseline child ended with status {status}>"
                continue
            data = json.loads(result.read_text(encoding="utf-8"))
            for key in ("failed", "ran", "passed"):
                merged[key] += data[key]
            merged["durations"].update(data["durations"])
            merged["tests_run"] += data["tests_run"]
            merged["seconds"] += data["seconds"]
            merged["traced"] = merged["traced"] and data["traced"]
        return merged, problem

    def _baseline_child(self, session: pytest.Session, items: list[pytest.Item],
                        result: Path) -> None:
        try:
            die_with_parent(self.pid)
            started = time.monotonic()
            failed: list[str] = []
            tests_run = 0
            self.recorder.start()
            for i, item in enumerate(items):
                self.first_failed = ""
                nextitem = items[i + 1] if i + 1 < len(items) else None
                item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
                tests_run += 1
                if sys.gettrace() is not self.recorder:
                    # A test replaced the tracer (a coverage tool does): what it ran
                    # went unseen, so no selection can be trusted.
                    self.traced = False
                    self.recorder.start()
                if self.first_failed:
                    failed.append(self.first_failed)
                if session.shouldstop or session.shouldfail:
                    break
            self.recorder.stop()
            runs = [asdict(r) for r in self.recorder.runs()]
            tmp = result.with_suffix(".tmp")
            tmp.write_text(json.dumps({"failed": failed, "tests_run": tests_run, "ran": runs,
                                       "durations": self.durations, "traced": self.traced,
                                       "passed": sorted(self.passed),
                                       "seconds": time.monotonic() - started}),
                           encoding="utf-8")
            tmp.replace(result)
        except BaseException:  # shown in the runner's error, which quotes this output
            traceback.print_exc()
        finally:
            os._exit(0)

    def _wiring(self, items: list[pytest.Item]) -> str:
        """One child whose fastest passing test is forced to fail must report it."""
        probe = WarmMutant(-1, FORCED_FAIL, FORCED_FAIL, "", "", "", "", (0, 0, 0, 0))
        ran = [item for item in items if item.nodeid in self.passed]  # not skipped, not xfail
        if not ran:
            return "no test ran and passed in the baseline"
        fastest = min(ran, key=lambda item: self.durations.get(item.nodeid, 0.0))
        outcome = self._pool([_Job(probe, (fastest,), [])])
        if outcome and outcome[0].failed == fastest.nodeid:
            return ""
        return (f"the forced-fail child was not killed: {outcome[0] if outcome else None!r}")

    # --- the mutants -------------------------------------------------------------

    def _select(self, items: list[pytest.Item], baseline: WarmBaseline, work: WarmMutant
                ) -> tuple[pytest.Item, ...] | None:
        """The tests that run the mutant's lines, fastest first (``()`` when its
        function runs but those lines do not); None when its function never runs."""
        if not self.traced:
            self.whole_suite.add(work.index)
            return tuple(items)
        selection = self.coverage.select(work.mutant())
        if not selection.reached:
            return None
        if selection.tests is None:
            # Module or class body, or code that ran only at import: every test may see it.
            self.whole_suite.add(work.index)
            chosen = list(items)
        else:
            wanted = set(selection.tests)
            chosen = [item for item in items if item.nodeid in wanted]
        position = {item.nodeid: i for i, item in enumerate(items)}
        chosen.sort(key=lambda item: (speed_class(self.durations.get(item.nodeid, 0.0)),
                                      position[item.nodeid]))
        return tuple(chosen)

    def _run_mutants(self, items: list[pytest.Item], baseline: WarmBaseline,
                     import_time: ImportTime) -> None:
        self.coverage = Coverage.from_runs(Path(self.spec.root), baseline.ran)
        self.planner = Planner(
            Path(self.spec.root), self.spec.packages,
            (m.module for m in self.mutants if m.kind == MutantKind.REWRITE.value),
            import_time, self.recorder.importers,
            {node.obj.__name__: node.nodeid for item in items
             if (node := item.getparent(pytest.Module)) is not None})
        if any(m.kind == MutantKind.PATCH.value for m in self.mutants):
            self.declared = _load_declared(Path(self.spec.mutants_dir))
        work: list[tuple[WarmMutant, tuple[pytest.Item, ...]]] = []
        for mutant in self.mutants:
            selected = self._select(items, baseline, mutant)
            if selected is None:
                self._emit(warm_line("mutant", WarmOutcome(mutant.index, None)))
            else:
                work.append((mutant, selected))
        # Longest first (by what the selected tests took in the baseline): a long
        # survivor started last would leave the other workers idle at the end.
        work.sort(key=lambda job: -sum(self.durations.get(item.nodeid, 0.0) for item in job[1]))
        jobs: list[_Job] = []
        for mutant, selected in work:
            started = time.monotonic()
            # No test runs the mutated lines: the original's passing run stands.
            how, settled = ([], WarmOutcome(mutant.index, ())) if not selected \
                else self._plan(mutant, selected)
            if settled is not None:
                # A process of its own starts, imports and collects before its tests.
                self._emit(warm_line("mutant", replace(settled, limit=self._limit(
                    selected, reloads=True)) if settled.deferred else settled))
            else:
                jobs.append(_Job(mutant, selected, how, time.monotonic() - started,
                                 self._limit(selected, isinstance(how, ReloadPlan))))
        self._pool(jobs)

    def _limit(self, selected: tuple[pytest.Item, ...], reloads: bool) -> float:
        """Seconds a mutant may take: what its selected tests took in the baseline,
        and the import and collection when its modules are executed again (the most
        that can take), times the factor, plus the constant. Not the whole suite's:
        a looping mutant would hold a worker for minutes."""
        seconds = sum(self.durations.get(item.nodeid, 0.0) for item in selected)
        seconds += self.collected if reloads else 0.0
        return seconds * self.spec.timeout_factor + self.spec.timeout_constant

    def _pool(self, work: list[_Job]) -> list[WarmOutcome]:
        """Fork children ``jobs`` at a time, reap them, kill those past their limit;
        every outcome is emitted to the stream as it arrives, and returned."""
        pending = deque(work)
        running = self.running = {}
        done: list[WarmOutcome] = []
        jobs = max(1, self.spec.jobs)
        size = process_size(0) if self.spec.memory_limit else 0
        self.memory_cap = size + self.spec.memory_limit if size else 0
        look_up_prctl()  # looked up here, once, not in every child
        while pending or running:
            while pending and len(running) < jobs:
                job = pending.popleft()
                started = time.monotonic() - job.planning
                child = self._fork(job, started, [c.fd for c in running.values()])
                running[child.fd] = child
            if not running:
                break
            now = time.monotonic()
            wait = max(0.0, min(c.deadline for c in running.values()) - now)
            ready, _, _ = select.select(list(running), [], [], wait)
            for fd in ready:
                chunk = os.read(fd, _READ_SIZE)
                if chunk:
                    running[fd].data += chunk
                else:
                    running[fd].eof = True
            now = time.monotonic()
            for fd, child in list(running.items()):
                # A child is done when its one line arrives: its exit (tearing down a
                # copy of this process) need not hold up the next fork.
                if child.eof or child.data.endswith(b"\n"):
                    outcome = self._reap(child, timed_out=False)
                elif now >= child.deadline:
                    outcome = self._reap(child, timed_out=True)
                else:
                    continue
                del running[fd]
                done.append(outcome)
                if child.work.index >= 0:
                    self._emit(warm_line("mutant", outcome))
            self._wait_exiting(block=False)
        self._wait_exiting(block=True)
        return done

    def _wait_exiting(self, block: bool) -> None:
        """Reap the children that answered and are on their way out."""
        for pid in list(self.exiting):
            try:
                finished, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
            except ChildProcessError:
                finished = pid
            if finished:
                self.exiting.remove(pid)

    def _plan(self, mutant: WarmMutant, selected: tuple[pytest.Item, ...]
              ) -> tuple[How, WarmOutcome | None]:
        """How a child puts the mutant in place (``planner``); or its outcome when it
        cannot be forked: it does not compile, or it is deferred to a pytest process
        of its own (no plan could be made)."""
        if mutant.kind != MutantKind.REWRITE.value:
            return [], None
        try:
            how = self.planner.plan(mutant)
        except SyntaxError as e:
            return [], WarmOutcome(mutant.index, tuple(i.nodeid for i in selected),
                                   error_kind=ErrorKind.COMPILE, error=_describe(e))
        if isinstance(how, str):
            return [], WarmOutcome(mutant.index, tuple(i.nodeid for i in selected),
                                   deferred=True, error=how)
        return how, None

    def _fork(self, job: _Job, started: float, inherited: list[int]) -> _Child:
        read, write = os.pipe()
        resident = process_size(1)
        before = time.monotonic()
        pid = os.fork()
        if pid == 0:
            self._child(job.mutant, job.selected, job.how, write, [read, *inherited])
        forking = time.monotonic() - before
        os.close(write)
        try:
            os.setpgid(pid, pid)  # also done by the child: whichever runs first wins the race
        except OSError:
            pass
        how = job.how
        return _Child(pid, read, job.mutant, job.nodeids, started, job.limit,
                      how if isinstance(how, ReloadPlan) else None, forking, resident)

    def _reap(self, child: _Child, timed_out: bool) -> WarmOutcome:
        outcome = self._outcome(child, timed_out)
        return replace(outcome, forking=child.forking, resident=child.resident,
                       limit=child.limit)

    def _outcome(self, child: _Child, timed_out: bool) -> WarmOutcome:
        wall = time.monotonic() - child.started
        answered = not timed_out and not child.eof
        if timed_out or answered:
            try:
                # The child and whatever its tests started; one that answered has
                # nothing left to do but exit.
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        status = 0
        if answered:
            self.exiting.append(child.pid)
        else:
            if not timed_out:  # ended without an answer: what its tests started goes too
                kill_group(child.pid)
            _, status = os.waitpid(child.pid, 0)
        os.close(child.fd)
        if timed_out:
            return WarmOutcome(child.work.index, child.selected, timed_out=True,
                               exit_status=status, wall=wall)
        try:
            data = json.loads(bytes(child.data).decode("utf-8"))
        except ValueError:
            # A child that died while executing modules again gets a fresh process.
            return WarmOutcome(child.work.index, child.selected, exit_status=status,
                               reported=False, wall=wall, deferred=child.plan is not None,
                               error=f"its child ended (status {status}) with no answer while "
                                     "executing modules again" if child.plan else "")
        if data.get("deferred"):
            return self._failing_import(child, data["error"], data.get("raised_in"))
        return WarmOutcome(child.work.index, child.selected, failed=data["failed"],
                           error_kind=ErrorKind(data["error_kind"]), error=data["error"],
                           exit_status=status, in_tests=data["in_tests"], wall=wall,
                           reloaded=data["reloaded"], placing=data["placing"])

    def _failing_import(self, child: _Child, error: str, raised_in: str | None
                        ) -> WarmOutcome:
        """A child that could not put its mutant in place: killed by the collection
        of the first test module importing the module that raised, when a fresh
        process would say so (``failing_import``); else deferred to one."""
        collected = None
        if raised_in is not None and child.plan is not None:
            collected = self.planner.failing_collection(
                child.plan, raised_in, child.limit, lambda: die_with_parent(self.pid))
        wall = time.monotonic() - child.started
        if collected is None:
            where = f"executing {raised_in} again" if raised_in else "putting it in place"
            return WarmOutcome(child.work.index, child.selected, deferred=True, wall=wall,
                               error=f"{where} raised {error}")
        return WarmOutcome(child.work.index, child.selected, failed=collected, wall=wall,
                           error=f"importing {raised_in} raises {error}", reloaded=True)

    # --- in the child ------------------------------------------------------------

    def _child(self, mutant: WarmMutant, selected: tuple[pytest.Item, ...], how: How,
               write: int, inherited: list[int]) -> None:
        began = time.monotonic()
        try:
            for fd in inherited:  # the other children's pipes, and this one's read end
                os.close(fd)
            os.setpgid(0, 0)
            die_with_parent(self.pid)
            cap_address_space(self.memory_cap)
            result = self._apply_and_run(mutant, selected, how, began)
            os.write(write, json.dumps(result).encode("utf-8") + b"\n")
        finally:
            os._exit(0)

    def _apply_and_run(self, mutant: WarmMutant, selected: tuple[pytest.Item, ...],
                       how: How, began: float) -> dict[str, object]:
        error_kind, error = ErrorKind.NONE, ""
        self.first_failed = ""
        run: Iterable[pytest.Item] = selected
        if isinstance(how, ReloadPlan):
            try:
                apply_reload(how)
            except ExecError as e:
                return {"deferred": True, "error": _describe(e.__cause__ or e),
                        "raised_in": e.module}
            except Exception as e:
                # What a fresh import makes of it is for a process of its own to say.
                return {"deferred": True, "error": _describe(e)}
            run = Recollected(selected, how.modules, mutant.index in self.whole_suite)
        else:
            try:
                self._apply(mutant, selected, how)
            except (Exception, SystemExit) as e:  # missing target, a replacement that
                # raises or calls exit(): this mutant's RuntimeError, with the reason
                error_kind, error = ErrorKind.APPLY, _describe(e)
        in_tests = 0.0
        placing = time.monotonic() - began
        # Only the failing test's name is reported: formatting its traceback would
        # cost more than most tests (inspect.getmodule walks every module).
        if selected:
            selected[0].config.option.tbstyle = "no"
        if error_kind is ErrorKind.NONE and not self.first_failed:
            failed_collections = len(self.collect_failed)
            items = iter(run)
            try:
                # Each test's successor is found before it runs (its fixtures are torn
                # down by what comes next); finding it may collect a module again.
                nextitem = next(items, None)
                while nextitem is not None and not self.first_failed:
                    item, nextitem = nextitem, next(items, None)
                    if len(self.collect_failed) > failed_collections:
                        return {"deferred": True, "error": "a test module failed to be "
                                "collected again after its modules were executed again"}
                    started = time.perf_counter()
                    item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
                    in_tests += time.perf_counter() - started
            except CollectAgainError as e:
                # What a fresh import makes of it is for a process of its own to say.
                return {"deferred": True, "error": "collecting a test module again raised "
                        + _describe(e.__cause__ or e)}
        return {"failed": self.first_failed, "error_kind": error_kind.value, "error": error,
                "in_tests": in_tests, "placing": placing,
                "reloaded": isinstance(how, ReloadPlan)}

    def _apply(self, mutant: WarmMutant, selected: tuple[pytest.Item, ...], swaps: Swap) -> None:
        if mutant.kind == FORCED_FAIL:
            for item in selected:
                item.runtest = _forced_fail  # type: ignore[method-assign]
        elif mutant.kind == MutantKind.REWRITE.value:
            apply_swap(swaps)
        else:
            declared = self.declared.get(mutant.id)
            if declared is None:  # not loaded in the parent: let the loader say why
                from metaeval.mutation.patches import find_declared

                declared = find_declared(Path(self.spec.mutants_dir), mutant.id)
            apply_patch(declared.target, declared.replacement)


def _load_declared(directory: Path) -> dict[str, PatchMutant]:
    from metaeval.mutation.patches import load_declared

    try:
        return {d.mutant.id: d.mutant for d in load_declared(directory)}
    except Exception:  # a bad file: each child reports it for its own mutant
        return {}


def _forced_fail() -> None:
    raise AssertionError("metaeval forced-fail check: this test must fail")


def _describe(error: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(error), error)).strip()[-2000:]
