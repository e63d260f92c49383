"""Fork isolation, the runner's side of ``metaeval.mutation.child.warm``.

One warm pytest process collects once, traces the baseline and forks a child per
mutant; its stream of results is read as it is written. A mutant it cannot put
in place in a child runs in a fresh pytest process (``fresh.run_mutant``) beside it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.mutation.child.processes import Children, end_group, has_exited, wait_exited
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.mutation.run.coverage_cache import CoverageMap, load_reuse
from metaeval.mutation.run.coverage_file import covering_packages
from metaeval.mutation.run.fresh import Context, run_mutant
from metaeval.mutation.run.options import (
    OUTPUT_TAIL,
    WARM_GRACE,
    RunOptions,
    VoidRun,
    scratch_writes,
)
from metaeval.mutation.run.outcome import ChildVerdict, classify, unreached
from metaeval.mutation.run.ran import Expect, ForkStats, Ran, Record
from metaeval.mutation.wire import (
    WarmBaseline,
    WarmMutant,
    WarmSpec,
    read_warm_line,
    write_warm_mutants,
)

SHOWN_FAILING = 5
"""Failing tests the command that shows why names (all are listed above it)."""


@dataclass(slots=True)
class WarmStart:
    """A warm pytest process, started before its mutants are known so that it
    collects and traces the baseline while the runner is still finding them;
    ``send`` hands it the mutants. Owns its scratch directory."""

    proc: subprocess.Popen[bytes]
    spec: WarmSpec
    scratch: Path
    started: float = field(default_factory=time.monotonic)
    """When the process was started (``time.monotonic``)."""

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
    with scratch_writes(tempfile.gettempdir()):
        scratch = Path(tempfile.mkdtemp(prefix="metaeval-warm-"))
    try:
        with scratch_writes(scratch):
            return _start_warm(options, packages, scratch)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def _start_warm(options: RunOptions, packages: tuple[str, ...], scratch: Path) -> WarmStart:
    reuse_path = ""
    kept = options.coverage_cache
    if options.coverage_file is not None:
        # The shared map, recorded for the whole plan's packages: record those too, so
        # that its records hold for this run (and the map it leaves is whole).
        kept = options.coverage_file
        packages, warning = covering_packages(kept, packages)
        if warning:
            print(warning, file=sys.stderr)
    if kept is not None:
        reuse, warning = load_reuse(kept, options.root, packages, options.pytest_args,
                                    cache=options.coverage_file is None)
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


def run_forked(todo: list[tuple[int, Mutant]], options: RunOptions, scratch: Path,
              packages: tuple[str, ...], record: Record, warm: WarmStart | None = None,
              expect: Expect | None = None) -> Ran:
    """One warm pytest process runs the baseline and forks a child per mutant; its
    stream is read as it is written, so progress shows as mutants finish. ``warm``
    is one started earlier, used when it traces every package the mutants are in;
    ``expect`` is given the baseline when it comes."""
    if warm is None or not set(packages) <= set(warm.spec.packages):
        if warm is not None:
            warm.stop()
        warm = start_warm(options, packages)
    try:
        with scratch_writes(warm.scratch):
            warm.send(todo, options.root)
        return _read_warm(warm, todo, options, scratch, record, expect)
    finally:
        warm.stop()


def _read_warm(warm: WarmStart, todo: list[tuple[int, Mutant]], options: RunOptions,
               scratch: Path, record: Record, expect: Expect | None) -> Ran:
    proc, out_path, stream = warm.proc, warm.out_path, Path(warm.spec.stream_path)
    by_index = dict(todo)
    baseline: WarmBaseline | None = None
    ready = 0.0
    """Seconds from the warm process's start to its baseline's line."""
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
        elsewhere = max(0.0, result.duration - result.in_tests)
        # What the fallback cost, beside why: the start-up and collection a fork spares.
        cost = (f"a pytest process of its own took {result.duration:.1f}s, {elsewhere:.1f}s "
                "of it starting and collecting")
        record(index, dataclasses.replace(
            result, own_process=f"{why or 'no reason given'}; {cost}"))
        return elsewhere

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
                        ready = time.monotonic() - warm.started
                        _check_warm_baseline(value, options, out_path)
                        coverage = Coverage.from_runs(options.root, value.ran)
                        timeout = (value.duration * options.timeout_factor
                                   + options.timeout_constant)
                        context = Context(options, scratch, timeout, coverage, children)
                        if expect is not None:
                            expect(coverage, value.durations, value.untraced)
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
                        result = classify(mutant, verdict, value.times.limit or timeout)
                        if result.status is Status.SURVIVED:  # select only where it can matter
                            result = unreached(result, coverage.select(mutant))
                        record(value.index, result)
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
    # A test the tracer did not see through is left out of the map: the next run
    # traces it again (and runs it for every mutant again).
    untraced = set(baseline.untraced)
    coverage_map = CoverageMap(warm.spec.packages, options.pytest_args, baseline.ran,
                               baseline.durations,
                               tuple(t for t in baseline.passed if t not in untraced))
    return Ran(baseline.duration, longest or timeout, coverage, ForkStats(
        len(deferred), reloaded, deferred_elsewhere, forking, placing, resident,
        baseline.tests_run, baseline.reused, coverage_map=coverage_map,
        traced_beside=baseline.beside, collected=baseline.collected,
        baseline_ready=0.0 if baseline.beside else ready))


def why_failing(failed: tuple[str, ...], options: RunOptions) -> str:
    """The command that shows why: the warm runner's children trace the baseline,
    so its output holds their progress marks, never a failing test's traceback
    (a pytest process of its own, ``--isolation subprocess``, shows that)."""
    # Ids alone: ``pytest_args`` may name the whole suite's paths. A collection that
    # failed as a whole has no id to give, so that command runs the suite.
    tests = [t for t in failed if not t.startswith("<")][:SHOWN_FAILING]
    return "to see why: " + shlex.join([options.python, "-m", "pytest",
                                        *(tests or options.pytest_args)])


def _check_warm_baseline(baseline: WarmBaseline, options: RunOptions, out_path: Path) -> None:
    if baseline.failed:
        tail = out_path.read_text(encoding="utf-8", errors="replace")[-OUTPUT_TAIL:]
        failing = "\n  ".join(baseline.failed)
        raise VoidRun(f"the test suite fails without any mutant; fix these first:\n  {failing}"
                      f"\n{why_failing(baseline.failed, options)}\n{tail}")
    if baseline.wiring:
        raise VoidRun(f"the forced-fail check was not killed: {baseline.wiring}")
