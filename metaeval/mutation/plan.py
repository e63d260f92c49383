"""The plan of a mutation run: plain settings in (``PlanSettings``, the flags, and
the project's ``Config``), the mutants and how they are to run out (``Plan``).

The targets scanned (through the scan cache), the patch mutants loaded,
``--since`` applied, the shard's share taken, the ``RunOptions`` built, the
result cache read and, in fork isolation, the warm runner started: early, so
that it collects and traces the baseline while libcst parses, or, when the scan
cache already knew every target, once a mutant is found that the result cache
does not answer (a rerun where nothing changed starts no process). The run only
uses it. Nothing runs a mutant here, so a plan that finds nothing to mutate
carries its exit code (``Plan.stop``) and its notes for the run. This module
never reads the configuration file (the command reads it, ``metaeval.config``),
never prints (but a cache's warning that it is read as empty), never runs a
mutant and never writes a file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.config import Config
from metaeval.errors import ExitCode, InputError
from metaeval.mutation.apart import load_patch_mutants
from metaeval.mutation.caches.coverage_cache import COVERAGE_FILE_NAME
from metaeval.mutation.caches.coverage_file import CoverageFile, load_coverage_file
from metaeval.mutation.caches.result_cache import CACHE_FILE, ResultCache
from metaeval.mutation.find.operators import configured_operators, operators_flag
from metaeval.mutation.find.resolve import module_name, resolve_targets
from metaeval.mutation.find.scan_cache import SCAN_FILE_NAME, ScanCache
from metaeval.mutation.find.since import since
from metaeval.mutation.find.targets import find_mutants
from metaeval.mutation.findings_file import fingerprints
from metaeval.mutation.fork.parent import WarmStart, start_warm
from metaeval.mutation.isolation.options import (
    DEFAULT_ISOLATION,
    Executor,
    Isolation,
    RunOptions,
    ScratchError,
)
from metaeval.mutation.model import Mutant
from metaeval.mutation.run.runner import Execute
from metaeval.mutation.run.settings import MutateSettings, mutate_settings
from metaeval.mutation.run.shard_manifest import ShardPlan, plan_hash
from metaeval.mutation.run.shards import fill_costs, share
from metaeval.mutation.run.source_tree import TreeState, snapshot
from metaeval.mutation.run.timings import read_timings


@dataclass(frozen=True, slots=True)
class PlanSettings:
    """What a plan is asked for, as plain values: the flags of ``metaeval mutate``
    that choose the mutants and how they run (``None``: the configured default),
    named as ``MutateRequest`` names them. Relative paths are read as the command
    line reads them: ``cache_path``, ``baseline_path``, ``timings_path``,
    ``shard_out`` and ``coverage_path`` against the current directory,
    ``mutants_dir`` and ``report_path`` against the project root."""

    paths: tuple[str, ...] = ()
    """Rewrite targets; empty: the section's ``targets``."""
    jobs: int | None = None
    timeout_factor: float | None = None
    timeout_constant: float | None = None
    mutants_dir: Path | None = None
    report_path: Path | None = None
    isolation: Isolation | None = None
    since_ref: str | None = None
    cache_path: Path | None = None
    no_cache: bool = False
    baseline_path: Path | None = None
    message_strings: bool | None = None
    shard: tuple[int, int] | None = None
    shard_out: Path | None = None
    timings_path: Path | None = None
    trace_only: bool = False
    write_coverage: Path | None = None
    coverage_path: Path | None = None
    executor: Executor = Executor.LOCAL
    ray_address: str | None = None
    operators: str | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """One line the plan says before the run; ``stderr`` for a diagnostic."""

    text: str
    stderr: bool = False


@dataclass(frozen=True, slots=True)
class Plan:
    """The mutants a plan found and how they are to be run; nothing has run yet.
    ``commands.mutate_values.MutatePlan`` carries these fields beside the request
    and says what each holds."""

    root: Path
    mutants: tuple[Mutant, ...]
    options: RunOptions
    notes: tuple[Note, ...]
    stop: ExitCode | None
    cache_file: Path
    scan: ScanCache | None
    report_file: Path
    findings_file: Path
    warm: WarmStart | None = None
    shard: ShardPlan | None = None
    plan_hash: str = ""
    packages: tuple[str, ...] = ()
    execute: Execute | None = None
    tree: TreeState | None = None
    fingerprints: Mapping[str, str] | None = None
    results: ResultCache | None = None
    void: str = ""


def plan(request: PlanSettings, config: Config) -> Plan:
    """Find the mutants ``request`` asks for and ready their run: nothing runs a mutant.

    Raises ``InputError`` for a bad target, patch-mutants file, git ref, timings or
    coverage file, or flags that cannot go together.
    """
    settings = mutate_settings(config.mutate)
    root = config.root
    cache_file = (root / CACHE_FILE if request.cache_path is None
                  else Path.cwd() / request.cache_path)
    patch_dir = root / (request.mutants_dir or Path(settings.mutants))
    # The flags first, each against the others: a bad combination stops here.
    options = _run_options(request, settings, root, patch_dir, cache_file)
    execute = _executor(request, options)  # a missing Ray stops here, with nothing started
    operators = (configured_operators(config.mutate) if request.operators is None
                 else operators_flag(request.operators))
    messages = (settings.message_strings if request.message_strings is None
                else request.message_strings)
    tree = snapshot(root)  # before the warm runner starts the suite below
    targets = list(request.paths) or list(config.mutate_targets)
    scan = None if request.no_cache else ScanCache(root, cache_file.with_name(SCAN_FILE_NAME))
    patches = load_patch_mutants(patch_dir, root)
    # Read before the warm runner starts: a bad timings file stops here, with nothing to stop.
    timings = (None if request.timings_path is None
               else read_timings(Path.cwd() / request.timings_path))
    shared = (None if request.coverage_path is None
              else load_coverage_file(Path.cwd() / request.coverage_path))
    if shared is not None:  # read once, here: the warm runner reuses the map as read
        options = dataclasses.replace(options, coverage_file=shared)
    packages = (_warm_packages(targets, root, patches)
                if options.isolation is Isolation.FORK else ())
    # In fork isolation the warm runner starts now, before libcst parses the targets (a
    # few tenths of a second on a small package), unless the scan cache holds every
    # target already (a rerun, where nothing may run at all); a trace starts it anyway.
    warm = None
    if packages and (request.trace_only or scan is None
                     or not scan.knows_every(targets, root, operators, messages)):
        with contextlib.suppress(ScratchError):  # only a head start: the run says why not
            warm = start_warm(options, packages)
    try:
        mutants = (find_mutants(targets, root, operators, scan, messages)
                   if targets else [])
        mutants += patches
        found = len(mutants)
        # A fault's fingerprint counts the identical ones before it in its function:
        # taken before the changed lines choose, so a pull request's run and the
        # full run give a survivor the same one.
        prints = None
        if mutants and request.since_ref is not None:
            prints = fingerprints(mutants)
            mutants = since(mutants, root, request.since_ref)
        digest = _plan_digest(request, config, mutants, operators, messages, shared)
    except BaseException:  # a bad target or git ref: nothing will run
        if warm is not None:
            warm.stop()
        raise
    notes, stop = _notes(request, found, len(mutants), patch_dir)
    report_file = root / (request.report_path or Path(settings.report))
    shard = None
    if request.shard is not None and found:
        shard, mutants = _take_share(request, mutants, notes, digest, report_file.parent,
                                     timings)
        if not mutants and stop is None:
            notes.append(Note(f"nothing to run: shard {shard.k}/{shard.n} has no mutant "
                                 f"of the {shard.planned}"))
            stop = ExitCode.OK
    results = (None if request.no_cache or request.trace_only or stop is not None
               else ResultCache(root, _cache_settings(options), cache_file))
    void = ""
    if warm is None and stop is None and packages and (
            request.trace_only or _some_to_run(mutants, results)):
        try:
            warm = start_warm(options, packages)
        except ScratchError as e:  # said by the run, as a void run
            void = str(e)
    return Plan(root, tuple(mutants), options, tuple(notes), stop, cache_file, scan,
                report_file, request.baseline_path or config.root / config.findings, warm,
                shard, digest, packages, execute, tree, prints, results, void)


def _cache_settings(options: RunOptions) -> tuple[str, ...]:
    """What a result cache entry was run with, besides the mutant and its files."""
    return (*options.pytest_args, str(options.timeout_factor), str(options.timeout_constant))


def _some_to_run(mutants: Sequence[Mutant], results: ResultCache | None) -> bool:
    """Whether a mutant may need its tests run: one the result cache does not answer
    (one settled without running, an ignored one or a compile error, still counts:
    a warm runner started for nothing is stopped unused)."""
    return results is None or any(not m.ignored_reason and results.lookup(m) is None
                                  for m in mutants)


def _run_options(request: PlanSettings, settings: MutateSettings, root: Path,
                 patch_dir: Path, cache_file: Path) -> RunOptions:
    """How the mutants are to run: the flags over the settings; ``InputError`` for
    flags that cannot go together (``--trace-only`` or ``--coverage`` outside fork
    isolation among them)."""
    _check_coverage_flags(request)
    options = RunOptions(
        root=root, mutants_dir=patch_dir,
        jobs=settings.jobs if request.jobs is None else request.jobs,
        timeout_factor=(settings.timeout_factor if request.timeout_factor is None
                        else request.timeout_factor),
        timeout_constant=(settings.timeout_constant if request.timeout_constant is None
                          else request.timeout_constant),
        pytest_args=settings.pytest_args,
        isolation=DEFAULT_ISOLATION if request.isolation is None else request.isolation,
        coverage_cache=None if request.no_cache else cache_file.with_name(COVERAGE_FILE_NAME))
    # The coverage file is read once the flags hold together (``plan``), and put here.
    if options.isolation is not Isolation.FORK and (request.trace_only
                                                    or request.coverage_path is not None):
        raise InputError("--trace-only and --coverage need fork isolation: the coverage "
                         "map is the warm runner's")
    return options


def _plan_digest(request: PlanSettings, config: Config, mutants: Sequence[Mutant],
                 operators: Sequence[str], messages: bool, shared: CoverageFile | None
                 ) -> str:
    """``plan_hash`` of the plan, when a shard, a trace or a coverage file needs it
    (else ""); ``InputError`` for a coverage file of another plan, before anything runs."""
    if request.shard is None and not request.trace_only and shared is None:
        return ""
    section = {"targets": list(config.mutate.targets), "operators": list(operators),
               "runner": dict(config.mutate.runner), "message_strings": messages}
    digest = plan_hash(mutants, section, operators, request.since_ref, config.root)
    if shared is not None:
        shared.check_plan(digest)
    return digest


def _notes(request: PlanSettings, found: int, kept: int, patch_dir: Path
           ) -> tuple[list[Note], ExitCode | None]:
    """What the plan says before the run (nothing found, the ``--since`` count) and
    the exit code of a plan with nothing to run (None: it runs)."""
    if not found:
        return [Note(f"error: no mutant found: no targets given or configured, and no "
                        f"patch mutants under {patch_dir}", stderr=True)], ExitCode.VOID
    if request.since_ref is None:
        return [], None
    notes = [Note(f"--since {request.since_ref}: {kept} of {found} mutants "
                     f"on changed lines", stderr=True)]
    if kept:
        return notes, None
    notes.append(Note(f"nothing to mutate: no mutant on a line changed against "
                         f"{request.since_ref}"))
    return notes, ExitCode.OK


def _executor(request: PlanSettings, options: RunOptions) -> Execute | None:
    """The executor ``--executor`` names (None: this machine's runners); ``InputError``
    for a combination that cannot run, or Ray not installed."""
    if request.executor is not Executor.RAY:
        if request.ray_address is not None:
            raise InputError(f"--ray-address {request.ray_address!r}: expected it with "
                             "--executor ray (the mutants run on this machine otherwise)")
        return None
    if options.isolation is not Isolation.FORK:
        raise InputError(f"--executor ray: got --isolation {options.isolation.value!r}; "
                         "expected fork (each Ray task runs the warm runner)")
    try:
        from metaeval.mutation.run.ray_executor import RayExecutor
    except ImportError as e:
        if (e.name or "").partition(".")[0] != "ray":
            raise
        raise InputError("--executor ray: Ray is not installed in this environment "
                         f"({sys.executable}); install it with: pip install "
                         "'metaeval[ray]'") from e
    return RayExecutor(request.ray_address)


def _check_coverage_flags(request: PlanSettings) -> None:
    if request.trace_only and request.write_coverage is None:
        raise InputError("--trace-only: give --write-coverage FILE, where the coverage "
                         "map goes")
    if request.write_coverage is not None and not request.trace_only:
        raise InputError("--write-coverage FILE is written by --trace-only; a run that "
                         "tests mutants reads one with --coverage FILE")
    if request.trace_only and request.shard is not None:
        raise InputError("--trace-only runs no mutant: it takes no --shard (the shards "
                         "read its file with --coverage)")


def _take_share(request: PlanSettings, mutants: list[Mutant], notes: list[Note],
                digest: str, report_dir: Path, timings: dict[str, float] | None
                ) -> tuple[ShardPlan, list[Mutant]]:
    """This shard's place and share of ``mutants``, balanced by the cost of each: the
    ``--timings`` file, else a stable hash of the ids (said in ``notes``). Never the
    result cache: shards run one after another in one checkout would each find what
    the one before wrote there, split differently, and the merge would refuse them;
    every shard of a plan must see the same cost data."""
    assert request.shard is not None
    k, n = request.shard
    known = {} if timings is None else {m.id: timings[m.id] for m in mutants if m.id in timings}
    source = f"the timings in {request.timings_path}"
    if not known:
        source = ("a stable hash of each mutant id: no timings for these mutants (--timings "
                  "FILE, written by --write-timings)")
    costs = fill_costs([m.id for m in mutants], known)
    for m in mutants:
        if m.ignored_reason:  # settled without running
            costs[m.id] = 0.0
    mine = set(share(costs, k, n))
    kept = [m for m in mutants if m.id in mine]
    notes.append(Note(f"--shard {k}/{n}: {len(kept)} of {len(mutants)} mutants "
                         f"(~{sum(costs[i] for i in mine):.1f} of "
                         f"{sum(costs.values()):.1f} cost units), balanced by {source}",
                         stderr=True))
    out = Path.cwd() / request.shard_out if request.shard_out is not None else report_dir
    return ShardPlan(k, n, digest, len(mutants), tuple(sorted(mine)), out), kept


def _warm_packages(targets: Sequence[str], root: Path, patches: Sequence[Mutant]
                   ) -> tuple[str, ...]:
    """The packages of every target file and patch mutant: what the warm runner
    records, the same for every shard of a plan (so a coverage file fits them all)."""
    files = [module_name(t.path, root) for t in resolve_targets(targets, root)]
    return tuple(sorted({m.partition(".")[0] for m in files}
                        | {m.module.partition(".")[0] for m in patches}))
