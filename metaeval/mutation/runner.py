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

import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from metaeval.errors import ExitCode, MetaevalError
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Status
from metaeval.mutation.wire import SPEC_ENV, ChildResult, ChildSpec, ErrorKind, Mode

DEFAULT_TIMEOUT_FACTOR = 3.0
DEFAULT_TIMEOUT_CONSTANT = 5.0
OUTPUT_TAIL = 2000
# pytest: 1 tests failed, 2 interrupted (a collection error under -x).
_PYTEST_FAILED = (1, 2)


class VoidRun(MetaevalError):
    """The run proves nothing: the suite fails unmutated, the plugin is not wired,
    or no mutant ran. The message names the failing tests or the cause."""


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
class MutationRun:
    """Everything one ``metaeval mutate`` run found, in the order of its mutants."""

    results: tuple[MutantResult, ...]
    baseline_duration: float
    timeout: float
    """The per-mutant limit in seconds: baseline * factor + constant."""

    @property
    def executed(self) -> int:
        """Mutants whose tests actually ran to an answer (killed, survived, timed out)."""
        ran = (Status.KILLED, Status.SURVIVED, Status.TIMEOUT)
        return sum(1 for r in self.results if r.status in ran)


@dataclass(frozen=True, slots=True)
class ChildOutcome:
    """One pytest child, seen from outside."""

    returncode: int | None
    """None when the child was killed for running past its limit."""
    duration: float
    result: ChildResult | None
    output: str


@dataclass(frozen=True, slots=True)
class Context:
    """What ``run_mutant`` needs besides the mutant: shared by every worker."""

    options: RunOptions
    scratch: Path
    timeout: float
    coverage: Coverage


Progress = Callable[[int, int, MutantResult], None]


def _child(options: RunOptions, scratch: Path, name: str, spec_fields: dict[str, str],
           mode: Mode, mutant_id: str, timeout: float | None, stop_first: bool,
           packages: tuple[str, ...] = ()) -> ChildOutcome:
    """Run one pytest child with one spec; kill its whole process group on timeout."""
    spec_path = scratch / f"{name}.spec.json"
    result_path = scratch / f"{name}.result.json"
    out_path = scratch / f"{name}.out"
    ChildSpec(mode=mode, mutant_id=mutant_id, result_path=str(result_path),
              root=str(options.root.resolve()), parent_pid=os.getpid(),
              mutants_dir=str(options.mutants_dir.resolve()), packages=packages,
              **spec_fields).write(spec_path)
    command = [options.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--metaeval-mutant", mutant_id, *(["-x"] if stop_first else []),
               *options.pytest_args]
    env = {**os.environ, SPEC_ENV: str(spec_path), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    with out_path.open("wb") as out:
        proc = subprocess.Popen(command, cwd=options.root, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            returncode: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            returncode = None
    duration = time.monotonic() - started
    output = out_path.read_text(encoding="utf-8", errors="replace")[-OUTPUT_TAIL:]
    result = ChildResult.read(result_path) if result_path.exists() else None
    return ChildOutcome(returncode, duration, result, output)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the child and anything its tests started
    except ProcessLookupError:
        pass
    proc.wait()


def run_baseline(options: RunOptions, scratch: Path, packages: tuple[str, ...]) -> Baseline:
    """Run the unmutated suite, recording which tests run which functions of
    ``packages``; VoidRun naming the failing tests if it fails."""
    outcome = _child(options, scratch, "baseline", {}, Mode.BASELINE, "baseline",
                     timeout=None, stop_first=False, packages=packages)
    if outcome.result is None:
        raise VoidRun("the baseline run did not report back: is metaeval installed in the "
                      f"environment that runs pytest ({options.python})?\n{outcome.output}")
    if outcome.returncode != 0 or outcome.result.failed:
        failing = "\n  ".join(outcome.result.failed) or f"(pytest exit {outcome.returncode})"
        raise VoidRun(f"the test suite fails without any mutant; fix these first:\n  {failing}"
                      f"\n{outcome.output}")
    return Baseline(outcome.duration, outcome.result.tests_run,
                    Coverage.from_runs(options.root, outcome.result.ran))


def check_wiring(options: RunOptions, scratch: Path, timeout: float) -> None:
    """The forced-fail mutant must be killed, or no Survived below could be trusted."""
    outcome = _child(options, scratch, "forced-fail", {}, Mode.FORCED_FAIL, "forced-fail",
                     timeout=timeout, stop_first=True)
    if outcome.returncode not in _PYTEST_FAILED or outcome.result is None \
            or not outcome.result.failed:
        raise VoidRun("the forced-fail check was not killed: the metaeval pytest plugin "
                      f"did not apply it (pytest exit {outcome.returncode})\n{outcome.output}")


def run_mutant(mutant: Mutant, context: Context, name: str = "mutant") -> MutantResult:
    """Run the suite against one mutant; never raises for what the mutant does."""
    if mutant.ignored_reason:
        return MutantResult(mutant, Status.IGNORED, detail=mutant.ignored_reason)
    if mutant.kind is MutantKind.REWRITE:
        try:
            compile(mutant.mutated_source, mutant.path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as e:
            return MutantResult(mutant, Status.COMPILE_ERROR, detail=f"{e!r}")
    covered_by = context.coverage.tests_for(mutant) or ()
    if mutant.kind is MutantKind.REWRITE:
        fields = {"module": mutant.module, "source": mutant.mutated_source,
                  "file": str((context.options.root / mutant.path).resolve())}
        mode = Mode.REWRITE
    else:
        fields = {"target": mutant.target}
        mode = Mode.PATCH
    outcome = _child(context.options, context.scratch, name, fields, mode, mutant.id,
                     timeout=context.timeout, stop_first=True)
    result = classify(mutant, outcome, covered_by, context.timeout)
    # Run even a mutant the baseline saw no test reach: its tracer can miss code
    # (a thread started before it, a test that installs its own trace function,
    # as coverage tools do), and a kill must never be reported as no coverage.
    # Only a survivor the baseline saw no test reach is NoCoverage.
    if result.status is Status.SURVIVED and not context.coverage.reached(mutant):
        return dataclasses.replace(result, status=Status.NO_COVERAGE,
                                   detail="no test runs this code in the baseline")
    return result


def classify(mutant: Mutant, outcome: ChildOutcome, covered_by: tuple[str, ...],
             timeout: float) -> MutantResult:
    """Turn what a child did into a status."""
    took = outcome.duration
    if outcome.returncode is None:
        return MutantResult(mutant, Status.TIMEOUT, covered_by=covered_by, duration=took,
                            detail=f"ran past the {timeout:.1f}s limit")
    result = outcome.result
    if result is None:
        return MutantResult(mutant, Status.RUNTIME_ERROR, duration=took,
                            detail=f"pytest exited {outcome.returncode} without a result\n"
                                   f"{outcome.output}")
    if result.error_kind is ErrorKind.COMPILE:
        return MutantResult(mutant, Status.COMPILE_ERROR, duration=took, detail=result.error)
    if result.error_kind is ErrorKind.APPLY:
        return MutantResult(mutant, Status.RUNTIME_ERROR, duration=took, detail=result.error)
    if outcome.returncode == 0 and not result.failed:
        return MutantResult(mutant, Status.SURVIVED, covered_by=covered_by, duration=took)
    if outcome.returncode in _PYTEST_FAILED and result.failed:
        return MutantResult(mutant, Status.KILLED, killed_by=result.failed[:1],
                            covered_by=covered_by, duration=took)
    return MutantResult(mutant, Status.RUNTIME_ERROR, duration=took,
                        detail=f"pytest exited {outcome.returncode}\n{outcome.output}")


def run_mutants(mutants: Sequence[Mutant], options: RunOptions,
                progress: Progress | None = None) -> MutationRun:
    """Baseline, forced-fail check, then every mutant; VoidRun if nothing can be trusted."""
    with tempfile.TemporaryDirectory(prefix="metaeval-mutate-") as tmp:
        scratch = Path(tmp)
        packages = tuple(sorted({m.module.partition(".")[0] for m in mutants}))
        baseline = run_baseline(options, scratch, packages)
        timeout = baseline.duration * options.timeout_factor + options.timeout_constant
        check_wiring(options, scratch, timeout)
        context = Context(options, scratch, timeout, baseline.coverage)
        done = 0
        lock = threading.Lock()

        def one(index: int) -> MutantResult:
            nonlocal done
            result = run_mutant(mutants[index], context, name=f"m{index}")
            with lock:
                done += 1
                if progress is not None:
                    progress(done, len(mutants), result)
            return result

        with ThreadPoolExecutor(max_workers=options.workers) as pool:
            results = tuple(pool.map(one, range(len(mutants))))
    return MutationRun(results, baseline.duration, timeout)


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
