"""Subprocess isolation, the parent side: a fresh pytest process per mutant, sharing
nothing (the child side is ``subprocess.child``).

The reference the fork isolation is held to, and the way a mutant that cannot
be put in place in a forked child runs. Each child leads a process group of its
own, killed whole when it ends or runs past its limit.
"""

from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.mutation.coverage import Coverage
from metaeval.mutation.isolation.options import OUTPUT_TAIL, RunOptions, VoidRun, scratch_writes
from metaeval.mutation.isolation.outcome import ChildVerdict, classify, unreached
from metaeval.mutation.isolation.ran import Ran, Record
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Status
from metaeval.mutation.processes import Children, wait_exited
from metaeval.mutation.subprocess.protocol import SPEC_ENV, ChildResult, ChildSpec, ChildTask
from metaeval.mutation.wire import ErrorKind

# pytest: 1 tests failed, 2 interrupted (a collection error under -x).
PYTEST_FAILED = (1, 2)


@dataclass(frozen=True, slots=True)
class ChildOutcome:
    """One pytest child, seen from outside."""

    returncode: int | None
    """None when the child was killed for running past its limit."""
    duration: float
    result: ChildResult | None
    output: str


def of_subprocess(outcome: ChildOutcome, covered_by: tuple[str, ...]) -> ChildVerdict:
    """A pytest child: its return code and its result file must agree, or its
    answer is not trusted (the detail then quotes the tail of its output)."""
    code, result, took = outcome.returncode, outcome.result, outcome.duration
    if code is None:
        return ChildVerdict(timed_out=True, wall=took, covered_by=covered_by)
    if result is None:
        return ChildVerdict(reported=False, wall=took, covered_by=covered_by,
                            error=f"pytest exited {code} without a result\n{outcome.output}")
    if result.error_kind is not ErrorKind.NONE:
        return ChildVerdict(error_kind=result.error_kind, error=result.error, wall=took,
                            covered_by=covered_by)
    if code == 0 and not result.failed:
        return ChildVerdict(in_tests=result.in_tests, wall=took, covered_by=covered_by)
    if code in PYTEST_FAILED and result.failed:
        return ChildVerdict(failed=result.failed[0], in_tests=result.in_tests, wall=took,
                            covered_by=covered_by)
    # A pass with a failed test, a failure code with none, or pytest's own
    # usage or internal error: neither a kill nor a survivor.
    return ChildVerdict(reported=False, wall=took, covered_by=covered_by,
                        error=f"pytest exited {code}\n{outcome.output}")


@dataclass(frozen=True, slots=True)
class Baseline:
    """The unmutated suite: how long it took and which tests reach which code."""

    duration: float
    tests_run: int
    coverage: Coverage



@dataclass(frozen=True, slots=True)
class Context:
    """What ``run_mutant`` needs besides the mutant: shared by every worker."""

    options: RunOptions
    scratch: Path
    timeout: float
    coverage: Coverage
    children: Children = field(default_factory=Children)
    """The pytest children running now: an interrupted run kills them all."""




@dataclass(frozen=True, slots=True)
class ChildScope:
    """What one pytest child traces (``packages``, the baseline) and runs (``tests``,
    a mutant's selection; empty: every test)."""

    packages: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()


def _child(options: RunOptions, scratch: Path, name: str, spec_fields: dict[str, str],
           task: ChildTask, mutant_id: str, timeout: float | None, stop_first: bool,
           scope: ChildScope = ChildScope(), children: Children | None = None) -> ChildOutcome:
    """Run one pytest child with one spec. It leads a process group of its own,
    killed whole when it ends (what its tests started, too) or runs past ``timeout``."""
    packages, tests = scope.packages, scope.tests
    spec_path = scratch / f"{name}.spec.json"
    result_path = scratch / f"{name}.result.json"
    out_path = scratch / f"{name}.out"
    # Mutants only: the baseline and the forced-fail check run the unmutated code.
    memory_limit = options.memory_limit if task in (ChildTask.REWRITE, ChildTask.PATCH) else 0
    with scratch_writes(scratch):
        ChildSpec(task=task, mutant_id=mutant_id, result_path=str(result_path),
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
    outcome = _child(options, scratch, "baseline", {}, ChildTask.BASELINE, "baseline",
                     timeout=None, stop_first=False, scope=ChildScope(packages=packages),
                     children=children)
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
    outcome = _child(options, scratch, "forced-fail", {}, ChildTask.FORCED_FAIL, "forced-fail",
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
        task = ChildTask.REWRITE
    else:
        fields = {"target": mutant.target}
        task = ChildTask.PATCH
    outcome = _child(context.options, context.scratch, name, fields, task, mutant.id,
                     timeout=limit, stop_first=True, scope=ChildScope(tests=tests),
                     children=context.children)
    result = classify(mutant, of_subprocess(outcome, covered_by), limit)
    # Run even a mutant the baseline saw no test reach: its tracer can miss code
    # (a thread started before it, a test that installs its own trace function,
    # as coverage tools do), and a kill must never be reported as no coverage.
    return unreached(result, selection)


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


def run_fresh(todo: list[tuple[int, Mutant]], options: RunOptions, scratch: Path,
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

