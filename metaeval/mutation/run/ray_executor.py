"""Run the mutants on a Ray cluster: ``metaeval mutate --executor ray``.

The head (this process) has made the plan; it traces the baseline once, then
sends the mutants out as many small batches, Ray tasks of one CPU that idle
workers pull, so that a slow batch holds one worker, not the run. A task runs
the warm runner (fork isolation, one job) in the copy of the project Ray ships
to its node (the runtime environment's working directory), reusing the head's
coverage map, so that no batch traces a test again. It returns its results; the
head records them as batches finish, through the path a local run's take, so
the table, reports and exit code are the same.

A batch counts only once its task has finished: a worker that dies mid-batch
returns nothing, and Ray runs the batch again elsewhere (``RETRIES``). Nothing
is written in the source tree on any node: the working directory is Ray's copy,
and the scratch files go to the node's temp dir. The only module that imports
ray; ``metaeval mutate`` imports it only for ``--executor ray``.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import ray
import ray.exceptions

from metaeval.errors import InputError
from metaeval.mutation.caches.coverage_cache import CoverageMap
from metaeval.mutation.caches.coverage_file import (
    CoverageFile,
    load_coverage_file,
    write_coverage_file,
)
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.fork.parent import WarmStart, run_forked, start_warm
from metaeval.mutation.isolation.options import Isolation, RunOptions, VoidRun, scratch_writes
from metaeval.mutation.isolation.ran import ForkStats, Ran, Record
from metaeval.mutation.model import Mutant, MutantResult, Status

EXCLUDES = [".git", ".metaeval", ".venv", "venv", ".tox", ".nox", "__pycache__",
            ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", "node_modules"]
"""Left out of the copy Ray ships: history, caches and virtual environments (the
nodes run their own metaeval and test dependencies)."""
MAX_BATCH = 16
"""Mutants in one task at most: a task pays one warm runner's start (collection,
the forced-fail check), which a dozen mutants amortize."""
PER_SLOT = 4
"""Batches per CPU of the cluster at least, while they hold one mutant or more:
the last few to finish are then small, and a slow one holds one worker."""
RETRIES = 3
"""Times Ray runs a batch again after its worker or node died; then its mutants
are RuntimeErrors, named so."""
CONNECT = 10.0
"""Seconds a ``--ray-address`` has to answer before the run gives up (exit 2)."""
COVERAGE_PLAN = "ray executor"
"""The plan field of the coverage file a task reuses: its own head wrote it."""


@dataclass(frozen=True, slots=True)
class BatchSpec:
    """What every task is told besides its mutants: the options that are not the node's."""

    mutants_dir: str
    """The patch-mutant directory, relative to the project root."""
    packages: tuple[str, ...]
    pytest_args: tuple[str, ...]
    timeout_factor: float
    timeout_constant: float
    memory_limit: int


@dataclass(frozen=True, slots=True)
class Shipped:
    """A ``MutantResult`` without its mutant, which the head holds (by its index)."""

    status: str
    killed_by: tuple[str, ...]
    covered_by: tuple[str, ...]
    duration: float
    detail: str
    in_tests: float
    own_process: str

    @staticmethod
    def of(result: MutantResult) -> Shipped:
        return Shipped(result.status.value, result.killed_by, result.covered_by,
                       result.duration, result.detail, result.in_tests, result.own_process)

    def result(self, mutant: Mutant, node_root: str, root: str) -> MutantResult:
        """The result for ``mutant``, the node's copy of the project named as the head's."""
        return MutantResult(mutant, Status(self.status), self.killed_by, self.covered_by,
                            self.duration, self.detail.replace(node_root, root),
                            self.in_tests, own_process=self.own_process)


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    """What a finished task returns: each mutant's result by its index, as plain values
    (the head holds the mutants), and what its warm runner reported."""

    root: str
    """The project's copy on the node, to name the head's in the details instead."""
    results: tuple[tuple[int, Shipped], ...]
    timeout: float
    stats: tuple[int, int, float, float, float, int, int]
    """deferred, reloaded, deferred_elsewhere, forking, placing, resident, and the tests
    it traced (none, unless the shipped map did not hold on the node)."""


@dataclass(frozen=True, slots=True)
class RayExecutor:
    """``runner.Execute`` on a Ray cluster: the one at ``address``, or one started
    here for the run (``jobs`` CPUs) and stopped after it."""

    address: str | None = None
    batch: int = 0
    """Mutants per task; 0 chooses from their number and the cluster's CPUs."""

    def __call__(self, todo: list[tuple[int, Mutant]], options: RunOptions, scratch: Path,
                 packages: tuple[str, ...], record: Record, warm: WarmStart | None) -> Ran:
        from metaeval.mutation.run.trace import trace_baseline

        mutants_dir = _shipped(options)
        # Connected first: a cluster that cannot be reached is said before the trace
        # (the runner stops ``warm`` in any case).
        with _connected(self.address, options) as slots:
            # VoidRun when the suite fails; the plan starts ``warm`` in fork isolation.
            stats = trace_baseline(options, warm or start_warm(options, packages))
            cmap = stats.coverage_map
            assert cmap is not None
            shipped = scratch / "coverage.json"
            with scratch_writes(scratch):
                write_coverage_file(shipped, cmap, COVERAGE_PLAN, options.root)
            coverage = Coverage.from_runs(options.root, cmap.ran)
            outcomes = _dispatch(_batches(todo, coverage, cmap, slots, self.batch),
                                 BatchSpec(mutants_dir, cmap.packages, options.pytest_args,
                                           options.timeout_factor, options.timeout_constant,
                                           options.memory_limit),
                                 shipped.read_bytes(), options.root, record)
        timeout = max((o.timeout for o in outcomes), default=0.0)
        sums = [sum(o.stats[i] for o in outcomes) for i in range(5)]
        fork = ForkStats(int(sums[0]), int(sums[1]), sums[2], sums[3], sums[4],
                         max((o.stats[5] for o in outcomes), default=0),
                         stats.traced_tests + sum(o.stats[6] for o in outcomes),
                         stats.reused_tests, coverage_map=cmap, collected=stats.collected,
                         baseline_ready=stats.baseline_ready)
        # The baseline's seconds: its tests' own as the head traced them (collection aside).
        return Ran(sum(cmap.durations.values()), timeout, coverage, fork)


def _shipped(options: RunOptions) -> str:
    """The patch-mutant directory as the nodes find it: relative to the project root."""
    root = options.root.resolve()
    mutants_dir = options.mutants_dir.resolve()
    if not mutants_dir.is_relative_to(root):
        raise InputError(f"--executor ray: the patch-mutant directory {str(mutants_dir)!r} "
                         f"is outside the project {str(root)!r}; expected a directory "
                         "inside it (only the project is shipped to the cluster)")
    return mutants_dir.relative_to(root).as_posix()


@contextmanager
def _connected(address: str | None, options: RunOptions) -> Iterator[int]:
    """Ray, connected to ``address`` or started here, with the project as every task's
    working directory; yields the cluster's CPUs. Disconnects (and stops the cluster
    it started) in any case."""
    if address is None:  # a cluster of our own: no usage statistics leave this machine
        os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    runtime_env = {"working_dir": str(options.root.resolve()), "excludes": EXCLUDES}
    # Ray prints what its raylets report (a worker that died, say) on stdout, which
    # --format json keeps for the JSON alone: to stderr with it while connected.
    with redirect_stdout(sys.stderr):
        yield from _session(address, runtime_env, options)


def _reachable(address: str) -> None:
    """``InputError`` when a ``host:port`` address does not answer: ``ray.init`` would
    retry it for minutes. Other forms (``ray://``, ``auto``) are Ray's to resolve."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "/" in address or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT).close()
    except OSError as e:
        raise InputError(f"--ray-address {address!r}: nothing answers there ({e}); expected "
                         "the address of a running Ray cluster's head (host:port of "
                         "'ray start --head')") from e


def _session(address: str | None, runtime_env: Mapping[str, object], options: RunOptions
             ) -> Iterator[int]:
    if address is not None:
        _reachable(address)
    try:
        if address is None:
            ray.init(num_cpus=options.workers, include_dashboard=False,
                     runtime_env=runtime_env, logging_level=logging.WARNING,
                     log_to_driver=False)
        else:
            ray.init(address=address, runtime_env=runtime_env,
                     logging_level=logging.WARNING, log_to_driver=False)
    except Exception as e:  # whatever Ray raises: said, never a traceback
        ray.shutdown()
        where = f"the Ray cluster at {address!r}" if address else "a local Ray cluster"
        raise InputError(f"--executor ray: cannot start or reach {where}: {e}") from e
    try:
        yield max(1, int(ray.cluster_resources().get("CPU", 1)))
    finally:
        ray.shutdown()


def _cost(mutant: Mutant, coverage: Coverage, durations: dict[str, float]) -> float:
    """The baseline seconds of the tests a mutant's batch will run for it."""
    selection = coverage.select(mutant)
    tests = durations.keys() if selection.tests is None else selection.tests
    return sum(durations.get(t, 0.0) for t in tests)


def batch_size(mutants: int, slots: int) -> int:
    """Mutants per batch: ``PER_SLOT`` batches per CPU at least, ``MAX_BATCH`` at most."""
    return max(1, min(MAX_BATCH, math.ceil(mutants / (slots * PER_SLOT))))


def _batches(todo: Sequence[tuple[int, Mutant]], coverage: Coverage, cmap: CoverageMap,
             slots: int, size: int) -> list[list[tuple[int, Mutant]]]:
    """The mutants in batches, the costliest first: a long batch that starts last would
    leave the other workers idle at the end."""
    durations = dict(cmap.durations)
    ordered = sorted(todo, key=lambda job: -_cost(job[1], coverage, durations))
    size = size or batch_size(len(ordered), slots)
    return [list(ordered[i:i + size]) for i in range(0, len(ordered), size)]


def _dispatch(batches: list[list[tuple[int, Mutant]]], spec: BatchSpec, coverage: bytes,
              root: Path, record: Record) -> list[BatchOutcome]:
    """Every batch as a task; each result recorded once, when its task has finished."""
    shared = ray.put(coverage)
    pending = {_run_batch.remote(spec, shared, batch): batch for batch in batches}
    outcomes: list[BatchOutcome] = []
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                batch = pending.pop(ref)
                try:
                    outcome: BatchOutcome = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    cause = getattr(e, "cause", None)  # what the task raised, when Ray has it
                    if isinstance(cause, VoidRun):  # the suite fails on that node, say
                        raise VoidRun(f"on the Ray cluster: {cause}") from e
                    raise VoidRun(f"a batch of mutants failed on the Ray cluster: {e}") from e
                except ray.exceptions.RayError as e:  # its worker or node died too often
                    _lost(batch, e, record)
                    continue
                outcomes.append(outcome)
                _record(outcome, dict(batch), root, record)
    finally:
        for ref in pending:  # interrupted, or a batch failed: the rest is not wanted
            ray.cancel(ref, force=True)
    return outcomes


def _record(outcome: BatchOutcome, mutants: dict[int, Mutant], root: Path,
            record: Record) -> None:
    here = str(root.resolve())
    for index, shipped in outcome.results:
        if index in mutants:  # another batch's would never be counted
            record(index, shipped.result(mutants.pop(index), outcome.root, here))
    for index, mutant in mutants.items():  # a batch's runner always reports each; if not:
        record(index, MutantResult(mutant, Status.RUNTIME_ERROR,
                                   detail="its batch finished on the Ray cluster without it"))


def _lost(batch: list[tuple[int, Mutant]], error: Exception, record: Record) -> None:
    for index, mutant in batch:
        record(index, MutantResult(mutant, Status.RUNTIME_ERROR, detail=(
            f"its batch was lost on the Ray cluster, run {RETRIES + 1} times at most: "
            f"{error}")))


def run_batch(spec: BatchSpec, coverage: bytes, batch: list[tuple[int, Mutant]]
              ) -> BatchOutcome:
    """On a worker: the batch through the warm runner, in Ray's copy of the project
    (the working directory), with the head's coverage map."""
    root = Path.cwd()
    results: dict[int, MutantResult] = {}

    def keep(index: int, result: MutantResult) -> None:
        results[index] = result

    with scratch_writes(tempfile.gettempdir()):
        scratch = tempfile.TemporaryDirectory(prefix="metaeval-ray-")
    with scratch as tmp:
        shipped = Path(tmp) / "coverage.json"
        with scratch_writes(tmp):
            shipped.write_bytes(coverage)
        options = RunOptions(
            root=root, mutants_dir=root / spec.mutants_dir, jobs=1,
            timeout_factor=spec.timeout_factor, timeout_constant=spec.timeout_constant,
            pytest_args=spec.pytest_args, python=sys.executable, isolation=Isolation.FORK,
            memory_limit=spec.memory_limit, coverage_file=_head_map(shipped))
        warm = start_warm(options, spec.packages)
        ran = run_forked(batch, options, keep, warm)
    fork = ran.fork or ForkStats()
    stats = (fork.deferred, fork.reloaded, fork.deferred_elsewhere, fork.forking,
             fork.placing, fork.resident, fork.traced_tests)
    return BatchOutcome(str(root.resolve()),
                        tuple((i, Shipped.of(r)) for i, r in sorted(results.items())),
                        ran.timeout, stats)


def _head_map(shipped: Path) -> CoverageFile | None:
    """The head's map, traced for the batch's packages, read once here for the warm
    runner; None (every test traced, said in one line) when this node's metaeval
    cannot read it, as a stale coverage cache is."""
    try:
        return load_coverage_file(shipped)
    except InputError as e:
        print(f"warning: {e}; tracing every test", file=sys.stderr)
        return None


_run_batch = ray.remote(num_cpus=1, max_retries=RETRIES)(run_batch)
"""``run_batch`` as a Ray task of one CPU, run again elsewhere if its worker dies."""
