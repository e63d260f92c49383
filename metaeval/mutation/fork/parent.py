"""Fork isolation, the parent side (in ``metaeval mutate``) of ``fork.warm_session``.

One warm pytest process collects once, traces the baseline and forks a child per
mutant; its stream of results is read as it is written. A mutant it cannot put
in place in a child runs in a fresh pytest process (``subprocess.parent.run_mutant``) beside it.
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
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from metaeval.mutation.caches.coverage_cache import CoverageMap, load_reuse
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.fork.protocol import (
    WarmBaseline,
    WarmMutant,
    WarmOutcome,
    WarmPhase,
    WarmSpec,
    read_warm_line,
    write_warm_mutants,
)
from metaeval.mutation.isolation.options import (
    OUTPUT_TAIL,
    WARM_GRACE,
    RunOptions,
    VoidRun,
    scratch_writes,
)
from metaeval.mutation.isolation.outcome import ChildVerdict, NotRun, classify, unreached
from metaeval.mutation.isolation.ran import Expect, ForkStats, Phase, Ran, Record, Step
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.mutation.processes import Children, end_group, has_exited, wait_exited
from metaeval.mutation.subprocess.parent import Context, run_mutant

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

    def send(self, todo: list[tuple[int, Mutant]], root: Path,
             killers: Mapping[int, tuple[str, ...]] | None = None) -> None:
        """Hand over the mutants (index, mutant), with the tests that killed each last
        time (``killers``, by index), which its child runs first. ``ScratchError``
        when the file cannot be written in its scratch directory."""
        root = root.resolve()
        killers = killers or {}
        with scratch_writes(self.scratch):
            write_warm_mutants(Path(self.spec.mutants_path), [
                WarmMutant(i, m.id, m.kind, m.module, m.path, str((root / m.path).resolve()),
                           m.qualname, (m.span.start_line, m.span.start_column,
                                        m.span.end_line, m.span.end_column),
                           m.mutated_source, killers.get(i, ()))
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
    reuse, warning = None, ""
    if options.coverage_file is not None:
        # The shared map, as the plan read it, recorded for the whole plan's packages:
        # record those too, so that its records hold for this run (and the map it
        # leaves is whole).
        packages, reuse, warning = options.coverage_file.reuse(options.root, packages,
                                                               options.pytest_args)
    elif options.coverage_cache is not None:
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


def run_forked(todo: list[tuple[int, Mutant]], options: RunOptions, record: Record,
               warm: WarmStart, expect: Expect | None = None,
               killers: Mapping[int, tuple[str, ...]] | None = None,
               phase: Phase | None = None) -> Ran:
    """``warm``, a warm pytest process started for the packages of ``todo``
    (``start_warm``), runs the baseline and forks a child per mutant; its stream is
    read as it is written, so progress shows as mutants finish. ``expect`` is given
    the baseline when it comes; ``killers`` (by index) are run first; ``phase`` is
    told what the warm process does until then. ``warm`` is stopped in any case, and
    with it goes its scratch directory, which holds every file of the run (those of
    the deferred mutants' own processes too, ``m<index>.*``)."""
    try:
        warm.send(todo, options.root, killers)
        reader = StreamReader(warm, todo, options, record, expect)
        reader.phase = phase
        return reader.read()
    finally:
        warm.stop()


@dataclass(slots=True)
class ForkTally:
    """What the warm runner's stream has said so far: the baseline, the mutants
    still to hear of, and the run's totals (``ForkStats``) as its lines come."""

    pending: set[int]
    """Mutants the stream has not reported yet."""
    baseline: WarmBaseline | None = None
    ready: float = 0.0
    """Seconds from the warm process's start to its baseline's line."""
    timeout: float = 0.0
    """The limit the baseline gives a mutant that has none of its own."""
    longest: float = 0.0
    """The largest limit a mutant had (each has its own, from its selected tests)."""
    reloaded: int = 0
    forking: float = 0.0
    placing: float = 0.0
    resident: int = 0
    deferred: list[Future[float]] = field(default_factory=list)
    """The deferred mutants' own processes: each gives its seconds outside tests."""

    def forked(self, outcome: WarmOutcome) -> None:
        """Add what one forked child cost to the totals."""
        self.pending.discard(outcome.index)
        self.reloaded += outcome.reloaded
        self.forking += outcome.times.forking
        self.placing += outcome.times.placing
        self.resident = max(self.resident, outcome.times.resident)
        self.longest = max(self.longest, outcome.times.limit)

    def stats(self, baseline: WarmBaseline, deferred_elsewhere: float,
              coverage_map: CoverageMap) -> ForkStats:
        return ForkStats(
            len(self.deferred), self.reloaded, deferred_elsewhere, self.forking, self.placing,
            self.resident, baseline.tests_run, baseline.reused, coverage_map=coverage_map,
            traced_beside=baseline.beside, collected=baseline.collected,
            baseline_ready=0.0 if baseline.beside else self.ready)


class StreamReader:
    """The parent's side of the stream ``fork.protocol`` describes: first one
    ``baseline`` line, then one ``mutant`` line per mutant, forked (a verdict) or
    deferred (a pytest process of its own, started here beside the warm runner).
    ``read`` follows the stream until the warm runner exits; one method per kind
    of line."""

    def __init__(self, warm: WarmStart, todo: list[tuple[int, Mutant]], options: RunOptions,
                 record: Record, expect: Expect | None) -> None:
        self.warm, self.options = warm, options
        self.record, self.expect = record, expect
        self.by_index = dict(todo)
        self.tally = ForkTally(set(self.by_index))
        # Mutants only a fresh import puts in place start in a pytest process of their
        # own as soon as the warm runner reports them, one at a time beside its
        # children, rather than after it: at the end they would leave a core idle.
        # No subprocess forced-fail check first: the warm runner's proved the plugin
        # wired, and a child without the plugin writes no result (a RuntimeError).
        self.own = ThreadPoolExecutor(max_workers=1)
        self.children = Children()
        self.context: Context | None = None
        """Made from the baseline's line, which comes before every mutant's: the
        coverage that selects each mutant's tests, the limit of one without its own."""
        self.phase: Phase | None = None
        """Told what the warm process does before its baseline line (``WarmPhase``)."""

    def read(self) -> Ran:
        """Every line until the warm runner exits, then what the run left."""
        if self.phase is not None:  # until the warm process says it has collected
            self.phase(Step.COLLECTING, 0, 0)
        with self.own, Path(self.warm.spec.stream_path).open(encoding="utf-8") as stream:
            try:
                for line in _lines(stream, self.warm.proc):
                    self.on_line(line)
            except BaseException:
                # Interrupted, or a void baseline: the deferred mutants' children end
                # now, and the warm runner (with its children) in the caller's ``stop``.
                self.children.close()
                self.own.shutdown(cancel_futures=True)
                raise
            deferred_elsewhere = sum(f.result() for f in self.tally.deferred)
        return self.finish(deferred_elsewhere)

    def on_line(self, line: str) -> None:
        value = read_warm_line(line)
        if isinstance(value, WarmPhase):
            if self.phase is not None:
                self.phase(Step.TRACING, value.done, value.total)
        elif isinstance(value, WarmBaseline):
            self.on_baseline(value)  # raises VoidRun for a failing suite
            if self.phase is not None:
                self.phase(Step.PREPARING, 0, 0)
        elif value.deferred:
            self.on_deferred(value)
        else:
            self.on_forked(value)

    def on_baseline(self, baseline: WarmBaseline) -> None:
        """The suite passed unmutated (else the run is void): the coverage that selects
        each mutant's tests, and the limit of one without its own."""
        self.tally.baseline = baseline
        self.tally.ready = time.monotonic() - self.warm.started
        _check_warm_baseline(baseline, self.options, self.warm.out_path)
        coverage = Coverage.from_runs(self.options.root, baseline.ran)
        timeout = baseline.duration * self.options.timeout_factor + self.options.timeout_constant
        self.tally.timeout = timeout
        # The deferred mutants' own processes write beside the warm runner's files.
        self.context = Context(self.options, self.warm.scratch, timeout, coverage,
                               self.children)
        if self.expect is not None:
            self.expect(coverage, baseline.durations, baseline.untraced)

    def baseline_context(self) -> Context:
        """The context the baseline's line made; ``VoidRun`` for a stream that reports
        a mutant before it (the protocol puts the baseline first)."""
        if self.context is None:
            raise VoidRun("the warm runner reported a mutant before its baseline")
        return self.context

    def on_deferred(self, outcome: WarmOutcome) -> None:
        """A mutant no forked child could put in place: a pytest process of its own."""
        self.tally.pending.discard(outcome.index)
        self.tally.longest = max(self.tally.longest, outcome.times.limit)
        self.tally.deferred.append(self.own.submit(
            self.run_own, outcome.index, outcome.selected or (), outcome.error,
            outcome.times.limit))

    def on_forked(self, outcome: WarmOutcome) -> None:
        """A forked child's outcome: its status by the ladder both isolations share."""
        self.tally.forked(outcome)
        mutant = self.by_index[outcome.index]
        coverage = self.baseline_context().coverage
        verdict = of_fork(outcome, coverage.tests_for(mutant) or ())
        result = classify(mutant, verdict, outcome.times.limit or self.tally.timeout)
        if result.status is Status.SURVIVED:  # select only where it can matter
            result = unreached(result, coverage.select(mutant))
        self.record(outcome.index, result)

    def run_own(self, index: int, tests: tuple[str, ...], why: str, limit: float) -> float:
        """A deferred mutant in a pytest process of its own (in ``own``'s thread), its
        selected tests fastest first, as the warm runner chose them: a kill comes
        from the quickest test. Its seconds outside its tests."""
        result = run_mutant(self.by_index[index], self.baseline_context(), name=f"m{index}",
                            tests=tests, timeout=limit or None)
        elsewhere = max(0.0, result.duration - result.in_tests)
        # What the fallback cost, beside why: the start-up and collection a fork spares.
        cost = (f"a pytest process of its own took {result.duration:.1f}s, {elsewhere:.1f}s "
                "of it starting and collecting")
        self.record(index, dataclasses.replace(
            result, own_process=f"{why or 'no reason given'}; {cost}"))
        return elsewhere

    def finish(self, deferred_elsewhere: float) -> Ran:
        """What the run left: void without a baseline; a RuntimeError for each mutant
        the stream never reported; the coverage map for the next run."""
        tail = self.warm.out_path.read_text(encoding="utf-8", errors="replace")[-OUTPUT_TAIL:]
        baseline = self.tally.baseline
        if baseline is None:
            raise VoidRun("the warm runner did not report a baseline: is metaeval installed "
                          f"in the environment that runs pytest ({self.options.python})?\n"
                          f"{tail}")
        for index in sorted(self.tally.pending):
            self.record(index, MutantResult(
                self.by_index[index], Status.RUNTIME_ERROR,
                detail=f"the warm runner ended before this mutant\n{tail}"))
        # A test the tracer did not see through is left out of the map: the next run
        # traces it again (and runs it for every mutant again).
        untraced = set(baseline.untraced)
        coverage_map = CoverageMap(self.warm.spec.packages, self.options.pytest_args,
                                   baseline.ran, baseline.durations,
                                   tuple(t for t in baseline.passed if t not in untraced))
        return Ran(baseline.duration, self.tally.longest or self.tally.timeout,
                   self.baseline_context().coverage,
                   self.tally.stats(baseline, deferred_elsewhere, coverage_map))


def _lines(stream: TextIO, proc: subprocess.Popen[bytes]) -> Iterator[str]:
    """Each whole line the warm runner appends to its stream, as it comes, until it
    has exited; what it wrote before exiting is read too."""
    buffer = ""
    while True:
        exited = has_exited(proc)
        buffer += stream.read()
        *complete, buffer = buffer.split("\n")
        yield from complete
        if exited:
            return
        time.sleep(0.02)


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


def of_fork(outcome: WarmOutcome, covered_by: tuple[str, ...]) -> ChildVerdict:
    """A forked child, as the warm runner reported it (never a deferred one:
    that mutant runs again in a pytest child of its own)."""
    if outcome.selected is None:
        return ChildVerdict(not_run=NotRun.NO_TEST_REACHES)
    if outcome.selected == ():
        return ChildVerdict(not_run=NotRun.NO_TEST_RUNS_LINES)
    error = outcome.error if outcome.reported else \
        f"the child ended without a result (wait status {outcome.exit_status})"
    return ChildVerdict(timed_out=outcome.timed_out, reported=outcome.reported,
                        error_kind=outcome.error_kind, error=error, failed=outcome.failed,
                        in_tests=outcome.times.in_tests, wall=outcome.times.wall,
                        covered_by=covered_by)
