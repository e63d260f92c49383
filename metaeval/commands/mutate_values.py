"""What one ``metaeval mutate`` request is made of and gives back: the request, the
plan, the result, and the lines for the user.

Values only, shared by the command's phases (``mutate_plan`` makes the plan,
``mutate_run`` runs it into a ``Ran``, ``mutate_conclude`` concludes that into
a result), its other modes (``mutate_trace`` traces a plan's baseline,
``mutate_merge`` concludes shards' runs) and the rendering layer, which reads a
result and never runs one. Apart from them so that each phase and mode imports
them without importing another. This module never plans, runs or writes anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from metaeval.errors import ExitCode, InputError, OutputError
from metaeval.mutation.caches.result_cache import ResultCache
from metaeval.mutation.find.scan_cache import ScanCache
from metaeval.mutation.findings_file import Comparison, Findings
from metaeval.mutation.fork.parent import WarmStart
from metaeval.mutation.isolation.options import Executor, Isolation, RunOptions
from metaeval.mutation.model import Mutant
from metaeval.mutation.run.runner import Execute, MutationRun
from metaeval.mutation.run.shard_manifest import ShardPlan
from metaeval.mutation.run.source_tree import TreeState


@dataclass(frozen=True, slots=True)
class MutateRequest:
    """What the user asked of ``metaeval mutate``; ``None`` means the configured default.

    Relative paths are read as the command line reads them: ``cache_path`` and
    ``baseline_path`` and ``sarif_path`` against the current directory,
    ``mutants_dir`` and ``report_path`` against the project root.
    """

    paths: tuple[str, ...] = ()
    """Rewrite targets; empty: ``[tool.metaeval.mutate] targets``."""
    jobs: int | None = None
    timeout_factor: float | None = None
    timeout_constant: float | None = None
    mutants_dir: Path | None = None
    report_path: Path | None = None
    isolation: Isolation | None = None
    since_ref: str | None = None
    """Keep only the mutants on lines changed against this git ref."""
    cache_path: Path | None = None
    no_cache: bool = False
    """Neither read nor write the result and scan caches."""
    baseline_path: Path | None = None
    """The findings file of known survivors; when given, it decides the exit code."""
    update_baseline: bool = False
    """Write the findings file (``baseline_path``, else the configured one) after the run."""
    sarif_path: Path | None = None
    message_strings: bool | None = None
    """Keep the mutants that change only a log, warning or exception message."""
    shard: tuple[int, int] | None = None
    """``(k, n)``: run only the k-th of n time-balanced shares of the plan."""
    shard_out: Path | None = None
    """Where a shard writes its manifest (default: next to the report)."""
    timings_path: Path | None = None
    """Seconds per mutant id, the cost each share is balanced by (``--timings``)."""
    write_timings: Path | None = None
    """Write each result's seconds here after a finished run (``--write-timings``)."""
    trace_only: bool = False
    """Trace the baseline, run no mutant, write ``write_coverage`` (``--trace-only``)."""
    write_coverage: Path | None = None
    """Where ``--trace-only`` writes the coverage file (``caches.coverage_file``)."""
    coverage_path: Path | None = None
    """A coverage file whose map the run reuses instead of tracing (``--coverage``)."""
    executor: Executor = Executor.LOCAL
    """Where the mutants run: this machine or a Ray cluster."""
    ray_address: str | None = None
    """``--executor ray``: the cluster to connect to; None starts one here for the run."""
    operators: str | None = None
    """``--operators``: operator names separated by commas, instead of the configured
    ``operators`` (checked against the registry, with the closest names)."""

    @property
    def tracks_survivors(self) -> bool:
        """Whether a finished run is compared with a findings file."""
        return (self.baseline_path is not None or self.update_baseline
                or self.sarif_path is not None)


@dataclass(frozen=True, slots=True)
class Message:
    """One line for the user, in the order it is to be shown."""

    text: str
    stderr: bool = False
    """Diagnostics go to stderr, so that ``--format json`` keeps stdout parseable."""


@dataclass(frozen=True, slots=True)
class MutatePlan:
    """The mutants a request found and how they are to be run; nothing has run yet."""

    request: MutateRequest
    root: Path
    mutants: tuple[Mutant, ...]
    """The mutants to run, ``--since`` applied."""
    options: RunOptions
    notes: tuple[Message, ...]
    """Lines to show before the run: the ``--since`` count, or why nothing runs."""
    stop: ExitCode | None
    """Set when there is nothing to run: VOID when no mutant was found at all, OK
    when ``--since`` left none."""
    cache_file: Path
    """The result cache; the scan cache sits next to it."""
    scan: ScanCache | None
    """Filled while finding the mutants; saved only after a run that finished."""
    report_file: Path
    """Where a finished run writes its mutation-testing report."""
    findings_file: Path
    """The findings file survivors are compared with: ``--baseline``, else the config's."""
    warm: WarmStart | None = None
    """Fork isolation: the warm runner, started before the targets were parsed so
    that it collects and traces the baseline meanwhile (or once a mutant is known
    to need it); ``run_plan`` hands it the mutants, or stops it. None when no
    mutant needs running."""
    shard: ShardPlan | None = None
    """``--shard``: this shard's place and share; ``mutants`` is the share then."""
    plan_hash: str = ""
    """``shard_manifest.plan_hash`` of every planned mutant; set for ``--shard``,
    ``--trace-only`` and ``--coverage``."""
    packages: tuple[str, ...] = ()
    """Fork isolation: the packages of every target file and patch mutant, whose code
    the warm runner records (what ``--trace-only`` traces)."""
    execute: Execute | None = None
    """Runs the mutants elsewhere (``--executor ray``); None: this machine's isolation."""
    tree: TreeState | None = None
    """The source tree's files before any test process started, to tell a run whose
    tests wrote into the tree (a void run) from one whose tests did not."""
    fingerprints: Mapping[str, str] | None = None
    """``--since``: the fingerprint of every mutant found, before the changed lines
    chose some; a fault's fingerprint counts the identical ones before it in its
    function, which a pull request's run and the full run must count alike."""
    results: ResultCache | None = None
    """The result cache, read; None with ``--no-cache``, for ``--trace-only`` and for
    a plan that stops. Saved only after a run that finished."""
    void: str = ""
    """Why the run cannot start (the warm runner's scratch directory cannot be
    written): a void run, said by the run phase."""


@dataclass(frozen=True, slots=True)
class Ran:
    """A plan's run that finished, before its survivors are concluded."""

    plan: MutatePlan
    run: MutationRun
    after: tuple[Message, ...] = ()
    """Lines after the table: the caches that could not be written."""
    write_errors: tuple[OutputError, ...] = ()
    """The shard manifest or ``--write-timings`` file that could not be written
    (exit code 2, unless the run is void)."""


@dataclass(frozen=True, slots=True)
class Tracked:
    """A finished run's survivors against the findings file."""

    comparison: Comparison
    findings_file: Path
    """The findings file, relative to the current directory when it lies under it
    (as it is shown)."""
    written: bool
    """The findings file was updated with this run (``--update-baseline``)."""
    sarif: Findings | None
    """What the SARIF file is to hold, when one was asked for: the new survivors for
    a pull request's run (``--since``), else every open one."""
    new_only: bool = False
    """``sarif`` holds the new survivors only (a ``--since`` run)."""


@dataclass(frozen=True, slots=True)
class MutateResult:
    """What one request did, before its report and SARIF files are written. Shown in
    order: ``before``, the run's table (when ``run`` is set), ``after``, then the
    survivors against the findings file (``tracked``) and the files written."""

    code: ExitCode
    root: Path
    before: tuple[Message, ...]
    """The plan's notes."""
    run: MutationRun | None = None
    """``None`` when nothing ran: nothing to mutate, or the run proved nothing."""
    report_file: Path | None = None
    """Where the run's mutation-testing report goes (set whenever ``run`` is)."""
    after: tuple[Message, ...] = ()
    """Lines after the table: caches that could not be written, why the run is void."""
    tracked: Tracked | None = None
    """The survivors against the findings file, when they were tracked."""
    sarif_path: Path | None = None
    findings_error: InputError | None = None
    """The findings file could not be read. The run and its report stand, so the
    table is still shown before this error."""
    write_errors: tuple[OutputError, ...] = ()
    """The findings file could not be written (exit code 2)."""

    @classmethod
    def void(cls, plan: MutatePlan, why: str) -> MutateResult:
        """A run of ``plan`` that proved nothing (exit 3): ``why`` is its error line."""
        return cls(ExitCode.VOID, plan.root, plan.notes,
                   after=(Message(f"error: {why}", stderr=True),))
