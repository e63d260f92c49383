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
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Protocol

from metaeval.errors import ExitCode, MetaevalError
from metaeval.mutation.child.processes import Children, end_group, has_exited, wait_exited
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Status
from metaeval.mutation.run.coverage_cache import CoverageMap, load_reuse
from metaeval.mutation.run.outcome import (
    NOT_RUN_DETAIL,
    PYTEST_FAILED,
    ChildOutcome,
    ChildVerdict,
    NotRun,
    classify,
)
from metaeval.mutation.wire import (
    SPEC_ENV,
    ChildResult,
    ChildSpec,
    Mode,
    WarmBaseline,
    WarmMutant,
    WarmSpec,
    read_warm_line,
    write_warm_mutants,
)

DEFAULT_TIMEOUT_FACTOR = 3.0
DEFAULT_TIMEOUT_CONSTANT = 5.0
OUTPUT_TAIL = 2000


class Isolation(Enum):
    """How one mutant's tests are kept apart from another's."""

    FORK = "fork"
    """One warm pytest process collects once and forks a child per mutant (POSIX)."""
    SUBPROCESS = "subprocess"
    """A fresh pytest process per mutant: slow, shares nothing; the reference."""


DEFAULT_ISOLATION = Isolation.FORK if hasattr(os, "fork") else Isolation.SUBPROCESS
DEFAULT_MEMORY_LIMIT = 4 << 30
"""Bytes of address space a mutant's process may add to its size before its tests
run: a forked child to the warm process's, a pytest child to its own at start."""
WARM_GRACE = 2.0
"""Seconds a warm runner told to stop (SIGTERM) has to kill its children's groups."""


class VoidRun(MetaevalError):
    """The run proves nothing: the suite fails unmutated, the plugin is not wired,
    or no mutant ran. The message names the failing tests or the cause."""


class ScratchError(VoidRun):
    """The scratch directory under the system temp dir cannot be written (full, or
    read-only): no mutant can run, so the run proves nothing (exit 3). Not exit 2:
    the user named no such path; the temp dir is the machine's."""


@contextmanager
def _scratch_writes(where: Path | str) -> Iterator[None]:
    try:
        yield
    except OSError as e:
        raise ScratchError(f"cannot write the scratch files in {where}: {e.strerror or e}; "
                           "free space there, or point TMPDIR at a directory that has "
                           "room") from e


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How to run the suite; ``root`` is the project root (the children's cwd)."""

    root: Path
    mutants_dir: Path
    jobs: int = 0
    """Parallel children; 0 means the number of cores."""
    timeout_factor: float = DEFAULT_TIMEOUT_FACTOR
    timeout_constant: float = DEFAULT_TIMEOUT_CONSTANT
    pytest_args: tuple[str, ...] = ()
    python: str = sys.executable
    isolation: Isolation = DEFAULT_ISOLATION
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    """RLIMIT_AS headroom of a mutant's process, in bytes, in either isolation; 0 for none."""
    coverage_cache: Path | None = None
    """Fork mode: where the baseline's coverage map is kept between runs, so a run
    traces only the tests whose files changed; None traces every test."""

    @property
    def workers(self) -> int:
        return self.jobs if self.jobs > 0 else (os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class Baseline:
    """The unmutated suite: how long it took and which tests reach which code."""

    duration: float
    tests_run: int
    coverage: Coverage


@dataclass(frozen=True, slots=True)
class ForkStats:
    """What a fork-isolation run adds to its results."""

    deferred: int = 0
    """Mutants that ran in a pytest process of their own anyway."""
    reloaded: int = 0
    """Mutants put in place by executing their module again in the child."""
    deferred_elsewhere: float = 0.0
    """Of ``elsewhere``, the seconds the deferred mutants' own processes spent outside tests."""
    forking: float = 0.0
    """Of ``elsewhere``, the seconds the warm process spent forking."""
    placing: float = 0.0
    """Of ``elsewhere``, the seconds children spent putting their mutants in place
    before their first test."""
    resident: int = 0
    """The largest the warm process was (resident bytes) when it forked."""
    traced_tests: int = 0
    """Tests the baseline traced in this run."""
    reused_tests: int = 0
    """Tests whose records came from the last run's coverage map."""
    coverage_map: CoverageMap | None = None
    """The whole baseline's map (traced and reused), for the next run."""


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


@dataclass(frozen=True, slots=True)
class Context:
    """What ``run_mutant`` needs besides the mutant: shared by every worker."""

    options: RunOptions
    scratch: Path
    timeout: float
    coverage: Coverage
    children: Children = field(default_factory=Children)
    """The pytest children running now: an interrupted run kills them all."""


Progress = Callable[[int, int, MutantResult], None]


def _child(options: RunOptions, scratch: Path, name: str, spec_fields: dict[str, str],
           mode: Mode, mutant_id: str, timeout: float | None, stop_first: bool,
           packages: tuple[str, ...] = (), tests: tuple[str, ...] = (),
           children: Children | None = None) -> ChildOutcome:
    """Run one pytest child with one spec. It leads a process group of its own,
    killed whole when it ends (what its tests started, too) or runs past ``timeout``."""
    spec_path = scratch / f"{name}.spec.json"
    result_path = scratch / f"{name}.result.json"
    out_path = scratch / f"{name}.out"
    # Mutants only: the baseline and the forced-fail check run the unmutated code.
    memory_limit = options.memory_limit if mode in (Mode.REWRITE, Mode.PATCH) else 0
    with _scratch_writes(scratch):
        ChildSpec(mode=mode, mutant_id=mutant_id, result_path=str(result_path),
                  root=str(options.root.resolve()), parent_pid=os.getpid(),
                  mutants_dir=str(options.mutants_dir.resolve()), packages=packages,
                  tests=tests, memory_limit=memory_limit, **spec_fields).write(spec_path)
        out = out_path.open("wb")
    command = [options.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--metaeval-mutant", mutant_id, *(["-x"] if stop_first else []),
               *options.pytest_args]
    env = {**os.environ, SPEC_ENV: str(spec_path), "PYTHONDONTWRITEBYTECODE": "1"}
    children = children or Children()
    started = time.monotonic()
    with out:
        proc = children.start(command, cwd=options.root, env=env, stdout=out,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            finished = wait_exited(proc, timeout)
        finally:
            children.end(proc)
    returncode = proc.returncode if finished else None
    duration = time.monotonic() - started
    output = out_path.read_text(encoding="utf-8", errors="replace")[-OUTPUT_TAIL:]
    result = ChildResult.read(result_path) if result_path.exists() else None
    return ChildOutcome(returncode, duration, result, output)


def run_baseline(options: RunOptions, scratch: Path, packages: tuple[str, ...],
                 children: Children | None = None) -> Baseline:
    """Run the unmutated suite, recording which tests run which functions of
    ``packages``; VoidRun naming the failing tests if it fails."""
    outcome = _child(options, scratch, "baseline", {}, Mode.BASELINE, "baseline",
                     timeout=None, stop_first=False, packages=packages, children=children)
    if outcome.result is None:
        raise VoidRun("the baseline run did not report back: is metaeval installed in the "
                      f"environment that runs pytest ({options.python})?\n{outcome.output}")
    if outcome.returncode != 0 or outcome.result.failed:
        failing = "\n  ".join(outcome.result.failed) or f"(pytest exit {outcome.returncode})"
        raise VoidRun(f"the test suite fails without any mutant; fix these first:\n  {failing}"
                      f"\n{outcome.output}")
    return Baseline(outcome.duration, outcome.result.tests_run,
                    Coverage.from_runs(options.root, outcome.result.ran))


def check_wiring(options: RunOptions, scratch: Path, timeout: float,
                 children: Children | None = None) -> None:
    """The forced-fail mutant must be killed, or no Survived below could be trusted."""
    outcome = _child(options, scratch, "forced-fail", {}, Mode.FORCED_FAIL, "forced-fail",
                     timeout=timeout, stop_first=True, children=children)
    if outcome.returncode not in PYTEST_FAILED or outcome.result is None \
            or not outcome.result.failed:
        raise VoidRun("the forced-fail check was not killed: the metaeval pytest plugin "
                      f"did not apply it (pytest exit {outcome.returncode})\n{outcome.output}")


def run_mutant(mutant: Mutant, context: Context, name: str = "mutant",
               tests: tuple[str, ...] = (), timeout: float | None = None) -> MutantResult:
    """Run the suite (or only ``tests``, in that order) against one mutant, for at
    most ``timeout`` seconds (else the context's); never raises for what the mutant does."""
    limit = context.timeout if timeout is None else timeout
    settled = settle(mutant)
    if settled is not None:
        return settled
    selection = context.coverage.select(mutant)
    covered_by = selection.tests or ()
    if mutant.kind is MutantKind.REWRITE:
        fields = {"module": mutant.module, "source": mutant.mutated_source,
                  "file": str((context.options.root / mutant.path).resolve())}
        mode = Mode.REWRITE
    else:
        fields = {"target": mutant.target}
        mode = Mode.PATCH
    outcome = _child(context.options, context.scratch, name, fields, mode, mutant.id,
                     timeout=limit, stop_first=True, tests=tests,
                     children=context.children)
    result = classify(mutant, ChildVerdict.of_subprocess(outcome, covered_by), limit)
    # Run even a mutant the baseline saw no test reach: its tracer can miss code
    # (a thread started before it, a test that installs its own trace function,
    # as coverage tools do), and a kill must never be reported as no coverage.
    # Only a survivor the baseline saw no test reach is NoCoverage.
    if result.status is Status.SURVIVED and (not selection.reached or selection.unseen):
        why = NotRun.NO_TEST_REACHES if not selection.reached else NotRun.NO_TEST_RUNS_LINES
        return dataclasses.replace(result, status=Status.NO_COVERAGE, detail=NOT_RUN_DETAIL[why])
    return result


def settle(mutant: Mutant) -> MutantResult | None:
    """The result of a mutant that needs no test run (ignored, does not compile)."""
    if mutant.ignored_reason:
        return MutantResult(mutant, Status.IGNORED, detail=mutant.ignored_reason)
    if mutant.kind is MutantKind.REWRITE:
        try:
            compile(mutant.mutated_source, mutant.path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as e:
            return MutantResult(mutant, Status.COMPILE_ERROR, detail=f"{e!r}")
    return None


class Cache(Protocol):
    """Where results of earlier runs are kept (``run.result_cache.ResultCache``)."""

    def lookup(self, mutant: Mutant) -> MutantResult | None: ...

    def store(self, result: MutantResult, coverage: Coverage | None) -> None: ...

    def last_limits(self) -> tuple[float, float]: ...


def run_mutants(mutants: Sequence[Mutant], options: RunOptions,
                progress: Progress | None = None, cache: Cache | None = None,
                warm: WarmStart | None = None) -> MutationRun:
    """Baseline, forced-fail check, then every mutant that is neither settled up
    front nor in ``cache``; VoidRun if nothing can be trusted. When every result
    comes from the cache, nothing runs, not even the baseline. ``warm`` is a warm
    runner started early (``start_warm``), used in fork isolation and stopped in
    any case."""
    started = time.monotonic()
    results: dict[int, MutantResult] = {}
    lock = threading.Lock()

    def record(index: int, result: MutantResult) -> None:
        with lock:
            results[index] = result
            if progress is not None:
                progress(len(results), len(mutants), result)

    todo: list[int] = []
    for index, mutant in enumerate(mutants):
        # The cache first: a hit needs no compile (CompileErrors are never cached).
        known = None if mutant.ignored_reason or cache is None else cache.lookup(mutant)
        known = known or settle(mutant)
        if known is None:
            todo.append(index)
        else:
            record(index, known)
    ran = Ran(0.0, 0.0, None)
    try:
        if todo:
            with _scratch_writes(tempfile.gettempdir()):
                scratch = tempfile.TemporaryDirectory(prefix="metaeval-mutate-")
            with scratch as tmp:
                packages = tuple(sorted({m.module.partition(".")[0] for m in mutants}))
                jobs = [(i, mutants[i]) for i in todo]
                if options.isolation is Isolation.FORK:
                    ran = _run_fork(jobs, options, Path(tmp), packages, record, warm)
                else:
                    ran = _run_subprocess(jobs, options, Path(tmp), packages, record)
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


@dataclass(frozen=True, slots=True)
class Ran:
    """What one isolation's run of the mutants left besides their results."""

    baseline_duration: float
    timeout: float
    coverage: Coverage | None
    fork: ForkStats | None = None


Record = Callable[[int, MutantResult], None]


def _run_subprocess(todo: list[tuple[int, Mutant]], options: RunOptions, scratch: Path,
                    packages: tuple[str, ...], record: Record) -> Ran:
    children = Children()
    baseline = run_baseline(options, scratch, packages, children)
    timeout = baseline.duration * options.timeout_factor + options.timeout_constant
    check_wiring(options, scratch, timeout, children)
    context = Context(options, scratch, timeout, baseline.coverage, children)

    def one(job: tuple[int, Mutant]) -> None:
        index, mutant = job
        record(index, run_mutant(mutant, context, name=f"m{index}"))

    pool = ThreadPoolExecutor(max_workers=options.workers)
    try:
        list(pool.map(one, todo))
    except BaseException:
        # Ctrl-C, SIGTERM, a full scratch dir: no mutant waits for the others to end.
        children.close()
        raise
    finally:
        pool.shutdown(cancel_futures=True)
    return Ran(baseline.duration, timeout, baseline.coverage)


# --- fork isolation: the runner's side of metaeval.mutation.child.warm ---------------------


@dataclass(slots=True)
class WarmStart:
    """A warm pytest process, started before its mutants are known so that it
    collects and traces the baseline while the runner is still finding them;
    ``send`` hands it the mutants. Owns its scratch directory."""

    proc: subprocess.Popen[bytes]
    spec: WarmSpec
    scratch: Path

    @property
    def out_path(self) -> Path:
        return self.scratch / "warm.out"

    def send(self, todo: list[tuple[int, Mutant]], root: Path) -> None:
        root = root.resolve()
        write_warm_mutants(Path(self.spec.mutants_path), [
            WarmMutant(i, m.id, m.kind, m.module, m.path, str((root / m.path).resolve()),
                       m.qualname, (m.span.start_line, m.span.start_column, m.span.end_line,
                                    m.span.end_column), m.mutated_source)
            for i, m in todo])

    def stop(self) -> None:
        """End it and its process group, and remove its scratch directory. One still
        running gets SIGTERM first, on which it kills its forked children's groups
        (each leads its own), then SIGKILL; idempotent."""
        if not has_exited(self.proc):
            # os.kill, not send_signal: that polls, and a reaped leader's number is
            # no longer ours to kill the group of.
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGTERM)
            wait_exited(self.proc, WARM_GRACE)
        end_group(self.proc)  # what the baseline's tests started, too
        shutil.rmtree(self.scratch, ignore_errors=True)


def start_warm(options: RunOptions, packages: tuple[str, ...]) -> WarmStart:
    """Start the warm runner for the mutants of ``packages``; they follow by ``send``.
    ``ScratchError`` when its scratch directory cannot be written."""
    with _scratch_writes(tempfile.gettempdir()):
        scratch = Path(tempfile.mkdtemp(prefix="metaeval-warm-"))
    try:
        with _scratch_writes(scratch):
            return _start_warm(options, packages, scratch)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def _start_warm(options: RunOptions, packages: tuple[str, ...], scratch: Path) -> WarmStart:
    reuse_path = ""
    if options.coverage_cache is not None:
        reuse, warning = load_reuse(options.coverage_cache, options.root, packages,
                                    options.pytest_args)
        if warning:
            print(warning, file=sys.stderr)
        if reuse is not None:
            reuse_path = str(scratch / "warm.reuse.json")
            reuse.write(Path(reuse_path))
    spec = WarmSpec(
        stream_path=str(scratch / "warm.jsonl"), scratch=str(scratch),
        root=str(options.root.resolve()), mutants_dir=str(options.mutants_dir.resolve()),
        packages=packages, parent_pid=os.getpid(), jobs=options.workers,
        timeout_factor=options.timeout_factor, timeout_constant=options.timeout_constant,
        memory_limit=options.memory_limit, mutants_path=str(scratch / "warm.mutants.json"),
        reuse_path=reuse_path)
    spec_path = scratch / "warm.spec.json"
    spec.write(spec_path)
    Path(spec.stream_path).touch()
    command = [options.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               # One token: pytest takes a bare path argument into account for its rootdir.
               f"--metaeval-warm={spec_path}", *options.pytest_args]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    with (scratch / "warm.out").open("wb") as out:
        proc = subprocess.Popen(command, cwd=options.root, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    return WarmStart(proc, spec, scratch)


def _run_fork(todo: list[tuple[int, Mutant]], options: RunOptions, scratch: Path,
              packages: tuple[str, ...], record: Record, warm: WarmStart | None = None) -> Ran:
    """One warm pytest process runs the baseline and forks a child per mutant; its
    stream is read as it is written, so progress shows as mutants finish. ``warm``
    is one started earlier, used when it traces every package the mutants are in."""
    if warm is None or not set(packages) <= set(warm.spec.packages):
        if warm is not None:
            warm.stop()
        warm = start_warm(options, packages)
    try:
        with _scratch_writes(warm.scratch):
            warm.send(todo, options.root)
        return _read_warm(warm, todo, options, scratch, record)
    finally:
        warm.stop()


def _read_warm(warm: WarmStart, todo: list[tuple[int, Mutant]], options: RunOptions,
               scratch: Path, record: Record) -> Ran:
    proc, out_path, stream = warm.proc, warm.out_path, Path(warm.spec.stream_path)
    by_index = dict(todo)
    baseline: WarmBaseline | None = None
    coverage = Coverage.from_runs(options.root, ())
    timeout = 0.0
    pending = set(by_index)
    deferred: list[Future[float]] = []
    reloaded = 0
    forking = placing = 0.0
    resident = 0
    longest = 0.0
    """The largest limit a mutant had (each has its own, from its selected tests)."""
    # Mutants only a fresh import puts in place start in a pytest process of their
    # own as soon as the warm runner reports them, one at a time beside its
    # children, rather than after it: at the end they would leave a core idle.
    # No subprocess forced-fail check first: the warm runner's proved the plugin
    # wired, and a child without the plugin writes no result (a RuntimeError).
    own = ThreadPoolExecutor(max_workers=1)
    children = Children()
    context = Context(options, scratch, 0.0, coverage, children)

    def fresh(index: int, tests: tuple[str, ...], why: str, limit: float) -> float:
        # The warm selection, fastest first: a kill comes from the quickest test.
        result = run_mutant(by_index[index], context, name=f"m{index}", tests=tests,
                            timeout=limit or None)
        record(index, dataclasses.replace(result, own_process=why or "no reason given"))
        return max(0.0, result.duration - result.in_tests)

    with own, stream.open(encoding="utf-8") as lines:
        try:
            buffer = ""
            while True:
                exited = has_exited(proc)
                buffer += lines.read()
                *complete, buffer = buffer.split("\n")
                for line in complete:
                    value = read_warm_line(line)
                    if isinstance(value, WarmBaseline):
                        baseline = value
                        _check_warm_baseline(value, options, out_path)
                        coverage = Coverage.from_runs(options.root, value.ran)
                        timeout = (value.duration * options.timeout_factor
                                   + options.timeout_constant)
                        context = Context(options, scratch, timeout, coverage, children)
                    elif value.deferred:
                        pending.discard(value.index)
                        deferred.append(own.submit(fresh, value.index, value.selected or (),
                                                   value.error, value.times.limit))
                        longest = max(longest, value.times.limit)
                    else:
                        pending.discard(value.index)
                        reloaded += value.reloaded
                        forking += value.times.forking
                        placing += value.times.placing
                        resident = max(resident, value.times.resident)
                        mutant = by_index[value.index]
                        verdict = ChildVerdict.of_fork(value, coverage.tests_for(mutant) or ())
                        record(value.index, classify(mutant, verdict, value.times.limit or timeout))
                        longest = max(longest, value.times.limit)
                if exited:
                    break
                time.sleep(0.02)
        except BaseException:
            # Interrupted, or a void baseline: the deferred mutants' children end now,
            # and the warm runner (with its children) in the caller's ``stop``.
            children.close()
            own.shutdown(cancel_futures=True)
            raise
        deferred_elsewhere = sum(f.result() for f in deferred)
    tail = out_path.read_text(encoding="utf-8", errors="replace")[-OUTPUT_TAIL:]
    if baseline is None:
        raise VoidRun("the warm runner did not report a baseline: is metaeval installed in "
                      f"the environment that runs pytest ({options.python})?\n{tail}")
    for index in sorted(pending):
        record(index, MutantResult(by_index[index], Status.RUNTIME_ERROR,
                                   detail=f"the warm runner ended before this mutant\n{tail}"))
    coverage_map = CoverageMap(warm.spec.packages, options.pytest_args, baseline.ran,
                               baseline.durations, baseline.passed) if baseline.traced else None
    return Ran(baseline.duration, longest or timeout, coverage, ForkStats(
        len(deferred), reloaded, deferred_elsewhere, forking, placing, resident,
        baseline.tests_run, baseline.reused, coverage_map))


def _check_warm_baseline(baseline: WarmBaseline, options: RunOptions, out_path: Path) -> None:
    if baseline.failed:
        tail = out_path.read_text(encoding="utf-8", errors="replace")[-OUTPUT_TAIL:]
        failing = "\n  ".join(baseline.failed)
        raise VoidRun(f"the test suite fails without any mutant; fix these first:\n  {failing}"
                      f"\n{tail}")
    if baseline.wiring:
        raise VoidRun(f"the forced-fail check was not killed: {baseline.wiring}")


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
