"""``metaeval mutate``: one request, from the options a user gave to a result.

``plan_mutate`` turns a ``MutateRequest`` into a ``MutatePlan``: the config and
settings read, the targets scanned (through the scan cache), the patch mutants
loaded, ``--since`` applied, the ``RunOptions`` built. Nothing runs yet, so a
plan that finds nothing to mutate stops here with its exit code. ``run_plan``
runs a plan and returns a ``MutateResult``: the run, the survivors compared with
the findings file, the exit code, and the lines to show.

The two steps are apart so that a command line can show the plan's notes (the
``--since`` count) before the progress of the run, as they happen;
``plan_and_run`` is both, for a caller with nothing to show in between. The
values they take and give are in ``mutate_values``. This module never prints,
never renders and never exits: every line for the user is a ``Message`` in the
value it returns, and the report and SARIF files are the rendering layer's to
write (``metaeval.report.mutate_outcome.finish``). It writes only data a finished
run leaves: the caches, the last run's survivors (``findings_file.LAST_RUN_FILE``) and
(when asked) the findings file.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from metaeval import vcs
from metaeval.commands.mutate_trace import trace_plan
from metaeval.commands.mutate_values import (
    Message,
    MutatePlan,
    MutateRequest,
    MutateResult,
    Tracked,
)
from metaeval.config import load_config
from metaeval.errors import ExitCode, InputError, OutputError
from metaeval.mutation.apart import load_patch_mutants
from metaeval.mutation.find.diffs import rewrite_diff
from metaeval.mutation.find.operators import (
    configured_operators,
    operators_flag,
    select_operators,
)
from metaeval.mutation.find.resolve import module_name, read_source, relative_path, resolve_targets
from metaeval.mutation.find.scan_cache import SCAN_FILE_NAME, ScanCache
from metaeval.mutation.find.since import since
from metaeval.mutation.find.targets import find_mutants
from metaeval.mutation.findings_file import (
    LAST_RUN_FILE,
    Findings,
    Seen,
    compare,
    fingerprints,
    save_last_run,
    updated,
)
from metaeval.mutation.findings_file import load as load_findings
from metaeval.mutation.findings_file import save as save_findings
from metaeval.mutation.fork.parent import WarmStart, start_warm
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.mutation.run.coverage_cache import COVERAGE_FILE_NAME
from metaeval.mutation.run.coverage_file import load_coverage_file
from metaeval.mutation.run.options import (
    DEFAULT_ISOLATION,
    Executor,
    Isolation,
    RunOptions,
    ScratchError,
    VoidRun,
)
from metaeval.mutation.run.result_cache import CACHE_FILE, ResultCache
from metaeval.mutation.run.runner import (
    Execute,
    MutationRun,
    Progress,
    exit_code,
    run_mutants,
)
from metaeval.mutation.run.settings import mutate_settings
from metaeval.mutation.run.shard_manifest import (
    ShardPlan,
    plan_hash,
    read_timings,
    write_manifest,
    write_timings,
)
from metaeval.mutation.run.shards import fill_costs, share
from metaeval.mutation.run.source_tree import snapshot, tree_written


def plan_mutate(request: MutateRequest) -> MutatePlan:
    """Find the mutants of ``request`` in the project around the current directory.

    Raises ``InputError`` for a bad config, target, patch-mutants file, git ref,
    timings or coverage file.
    """
    _check_coverage_flags(request)
    config = load_config()
    operators = (configured_operators(config.mutate) if request.operators is None
                 else operators_flag(request.operators))
    settings = mutate_settings(config.mutate)
    root = config.root
    tree = snapshot(root)  # before the warm runner starts the suite below
    targets = list(request.paths) or list(config.mutate_targets)
    cache_file = (root / CACHE_FILE if request.cache_path is None
                  else Path.cwd() / request.cache_path)
    scan = None if request.no_cache else ScanCache(root, cache_file.with_name(SCAN_FILE_NAME))
    patch_dir = root / (request.mutants_dir or Path(settings.mutants))
    patches = load_patch_mutants(patch_dir, root)
    options = RunOptions(
        root=root, mutants_dir=patch_dir,
        jobs=settings.jobs if request.jobs is None else request.jobs,
        timeout_factor=(settings.timeout_factor if request.timeout_factor is None
                        else request.timeout_factor),
        timeout_constant=(settings.timeout_constant if request.timeout_constant is None
                          else request.timeout_constant),
        pytest_args=settings.pytest_args,
        isolation=DEFAULT_ISOLATION if request.isolation is None else request.isolation,
        coverage_cache=None if request.no_cache else cache_file.with_name(COVERAGE_FILE_NAME),
        coverage_file=(None if request.coverage_path is None
                       else Path.cwd() / request.coverage_path))
    if options.isolation is not Isolation.FORK and (request.trace_only
                                                    or options.coverage_file is not None):
        raise InputError("--trace-only and --coverage need fork isolation: the coverage "
                         "map is the warm runner's")
    messages = (settings.message_strings if request.message_strings is None
                else request.message_strings)
    execute = _executor(request, options)  # a missing Ray stops here, with nothing started
    # Read before the warm runner starts: a bad timings file stops here, with nothing to stop.
    timings = (None if request.timings_path is None
               else read_timings(Path.cwd() / request.timings_path))
    shared = (None if options.coverage_file is None
              else load_coverage_file(options.coverage_file))
    packages = (_warm_packages(targets, root, patches)
                if options.isolation is Isolation.FORK else ())
    warm = _start_early(targets, root, operators, scan, packages, options, messages,
                        force=request.trace_only)
    try:
        mutants = (find_mutants(targets, root, operators, scan, messages)
                   if targets else [])
        mutants += patches
        found = len(mutants)
        prints = None
        if mutants and request.since_ref is not None:
            prints = fingerprints(mutants)
            mutants = since(mutants, root, request.since_ref)
        digest = ""
        if request.shard is not None or request.trace_only or shared is not None:
            section = {"targets": list(config.mutate.targets),
                       "operators": list(operators),
                       "runner": dict(config.mutate.runner), "message_strings": messages}
            digest = plan_hash(mutants, section, operators, request.since_ref, root)
        if shared is not None:  # refused before anything runs
            shared.check_plan(digest)
    except BaseException:  # a bad target or git ref: nothing will run
        if warm is not None:
            warm.stop()
        raise
    notes: list[Message] = []
    stop: ExitCode | None = None
    if not found:
        notes.append(Message(f"error: no mutant found: no targets given or configured, and no "
                             f"patch mutants under {patch_dir}", stderr=True))
        stop = ExitCode.VOID
    elif request.since_ref is not None:
        notes.append(Message(f"--since {request.since_ref}: {len(mutants)} of {found} mutants "
                             f"on changed lines", stderr=True))
        if not mutants:
            notes.append(Message(f"nothing to mutate: no mutant on a line changed against "
                                 f"{request.since_ref}"))
            stop = ExitCode.OK
    report_file = root / (request.report_path or Path(settings.report))
    shard = None
    if request.shard is not None and found:
        shard, mutants = _take_share(request, mutants, notes, digest, report_file.parent,
                                     timings)
        if not mutants and stop is None:
            notes.append(Message(f"nothing to run: shard {shard.k}/{shard.n} has no mutant "
                                 f"of the {shard.planned}"))
            stop = ExitCode.OK
    return MutatePlan(request, root, tuple(mutants), options, tuple(notes), stop, cache_file,
                      scan, report_file, request.baseline_path or config.root / config.findings,
                      warm, shard, digest, packages, execute, tree, prints)


def _executor(request: MutateRequest, options: RunOptions) -> Execute | None:
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


def _check_coverage_flags(request: MutateRequest) -> None:
    if request.trace_only and request.write_coverage is None:
        raise InputError("--trace-only: give --write-coverage FILE, where the coverage "
                         "map goes")
    if request.write_coverage is not None and not request.trace_only:
        raise InputError("--write-coverage FILE is written by --trace-only; a run that "
                         "tests mutants reads one with --coverage FILE")
    if request.trace_only and request.shard is not None:
        raise InputError("--trace-only runs no mutant: it takes no --shard (the shards "
                         "read its file with --coverage)")


def _take_share(request: MutateRequest, mutants: list[Mutant], notes: list[Message],
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
    notes.append(Message(f"--shard {k}/{n}: {len(kept)} of {len(mutants)} mutants "
                         f"(~{sum(costs[i] for i in mine):.1f} of "
                         f"{sum(costs.values()):.1f} cost units), balanced by {source}",
                         stderr=True))
    out = Path.cwd() / request.shard_out if request.shard_out is not None else report_dir
    return ShardPlan(k, n, digest, len(mutants), tuple(sorted(mine)), out), kept


def _cache_settings(options: RunOptions) -> tuple[str, ...]:
    """What a result cache entry was run with, besides the mutant and its files."""
    return (*options.pytest_args, str(options.timeout_factor), str(options.timeout_constant))


def _warm_packages(targets: Sequence[str], root: Path, patches: Sequence[Mutant]
                   ) -> tuple[str, ...]:
    """The packages of every target file and patch mutant: what the warm runner
    records, the same for every shard of a plan (so a coverage file fits them all)."""
    files = [module_name(t.path, root) for t in resolve_targets(targets, root)]
    return tuple(sorted({m.partition(".")[0] for m in files}
                        | {m.module.partition(".")[0] for m in patches}))


def _start_early(targets: Sequence[str], root: Path, operators: Sequence[str],
                 scan: ScanCache | None, packages: tuple[str, ...], options: RunOptions,
                 message_strings: bool, *, force: bool = False) -> WarmStart | None:
    """In fork isolation, the warm runner for ``packages`` started now, before libcst
    parses the targets (a few tenths of a second on a small package); None when
    the scan cache already holds every target (a rerun, where nothing may run at
    all), unless ``force`` (a baseline is traced whatever the mutants)."""
    if not packages:
        return None
    chosen = select_operators(operators)
    if scan is not None and not force and all(
            scan.knows(read_source(t.path), path=relative_path(t.path, root),
                       module=module_name(t.path, root), operators=chosen,
                       message_strings=message_strings)
            for t in resolve_targets(targets, root)):
        return None
    try:
        return start_warm(options, packages)
    except ScratchError:  # an early start is only a head start: the run says why it cannot
        return None


def run_plan(plan: MutatePlan, progress: Progress | None = None) -> MutateResult:
    """Run a plan's mutants and track the survivors when the request asks to.

    A plan that stops runs nothing and returns its exit code. A ``VoidRun`` is a
    result (exit 3 with its message), not an exception. A file that cannot be
    written never loses the run: a cache is a warning in ``after``; the findings
    file is in ``write_errors``, with exit code 2.
    """
    request, root = plan.request, plan.root
    if request.trace_only:
        return trace_plan(plan)
    if plan.stop is not None:
        if plan.warm is not None:
            plan.warm.stop()
        failed = _write_shard(plan, (), finished=plan.stop is ExitCode.OK)
        return MutateResult(ExitCode.BAD_INPUT if failed else plan.stop, root, plan.notes,
                            write_errors=failed)
    options = plan.options
    cache = None if request.no_cache else ResultCache(root, _cache_settings(options),
                                                      plan.cache_file)
    early = _write_shard(plan, (), finished=False)
    if early:  # a shard that cannot leave its manifest would run for nothing
        if plan.warm is not None:
            plan.warm.stop()
        return MutateResult(ExitCode.BAD_INPUT, root, plan.notes, write_errors=early)
    try:
        run = run_mutants(plan.mutants, options, progress, cache, plan.warm, execute=plan.execute)
    except VoidRun as e:
        return MutateResult(ExitCode.VOID, root, plan.notes,
                            after=(Message(f"error: {e}", stderr=True),))
    changed = tree_written(plan.tree) if plan.tree is not None else ""
    if changed:  # no report, no cache: results of a tree that moved under the tests
        return MutateResult(ExitCode.VOID, root, plan.notes,
                            after=(Message(f"error: {changed}", stderr=True),))
    # Like the report: the caches are written only by a run that finished.
    warnings = [_save_cache(lambda: cache.save(run.baseline_duration, run.timeout))
                if cache is not None else None,
                _save_cache(plan.scan.save) if plan.scan is not None else None,
                _save_cache(lambda: coverage.save(kept, root))
                if run.fork and (coverage := run.fork.coverage_map)
                and (kept := plan.options.coverage_cache)
                else None]
    after = tuple(w for w in warnings if w is not None)
    written = _write_shard(plan, run.results, finished=True, baseline=run.baseline_duration,
                           timeout=run.timeout)
    if request.write_timings is not None:
        try:
            write_timings(Path.cwd() / request.write_timings, run.results)
        except OutputError as e:
            written += (e,)
    result = conclude(plan, run, after)
    if written:
        code = result.code if result.code is ExitCode.VOID else ExitCode.BAD_INPUT
        return dataclasses.replace(result, code=code,
                                   write_errors=(*result.write_errors, *written))
    return result


def plan_and_run(request: MutateRequest, progress: Progress | None = None) -> MutateResult:
    """``run_plan(plan_mutate(request))``: the whole of ``metaeval mutate`` but the
    rendering (``report.mutate_outcome.finish`` writes the report and SARIF files)
    and the printing."""
    return run_plan(plan_mutate(request), progress)


def _write_shard(plan: MutatePlan, results: Sequence[MutantResult], *, finished: bool,
                 baseline: float = 0.0, timeout: float = 0.0) -> tuple[OutputError, ...]:
    """Write a shard's manifest (nothing without ``--shard``); the error when it
    cannot be written."""
    if plan.shard is None:
        return ()
    try:
        write_manifest(plan.shard, results, finished=finished, baseline=baseline,
                       timeout=timeout)
    except OutputError as e:
        return (e,)
    return ()


def conclude(plan: MutatePlan, run: MutationRun, after: tuple[Message, ...] = ()
             ) -> MutateResult:
    """A finished run's exit code and its survivors against the findings file, as
    ``run_plan`` gives them; ``--merge`` concludes the shards' merged run the same way."""
    request, root = plan.request, plan.root
    code = exit_code(run)
    if code is ExitCode.VOID:
        why = Message(f"error: no mutant ran ({len(plan.mutants)} found); nothing was tested",
                      stderr=True)
        return MutateResult(code, root, plan.notes, run, plan.report_file, (*after, why))
    diffs = survivor_diffs(run.results, root)
    seen = Seen(vcs.head_commit(root), vcs.today().isoformat())
    # What 'metaeval findings list' and 'show' read before any --update-baseline: like
    # a cache, a file that cannot be written costs a convenience, not the run. It sits
    # beside the result cache, so that a run told to keep its cache out of the tree
    # (--cache elsewhere) leaves the tree as it found it.
    try:
        save_last_run(run.results, diffs, seen, root,
                      plan.cache_file.parent / LAST_RUN_FILE.name, plan.fingerprints)
    except OutputError as e:
        after = (*after, Message(f"warning: {e}; 'metaeval findings' will not see this "
                                 "run's survivors", stderr=True))
    tracked = None
    failed: tuple[OutputError, ...] = ()
    if request.tracks_survivors:
        try:
            tracked, failed = track_survivors(
                run.results, root, plan.findings_file, request.update_baseline,
                sarif=request.sarif_path is not None, since=request.since_ref is not None,
                diffs=diffs, prints=plan.fingerprints)
        except InputError as e:
            return MutateResult(ExitCode.BAD_INPUT, root, plan.notes, run, plan.report_file,
                                after, findings_error=e)
        if request.update_baseline:
            # Updating accepts the run as it is (as cargo-mutants and Stryker do): the
            # new survivors are in the file now, open. What the written file would
            # still fail on (an acceptance past its expiry) fails this run too.
            code = ExitCode.FINDINGS if tracked.comparison.expired else ExitCode.OK
        elif request.baseline_path is not None:
            code = ExitCode.FINDINGS if tracked.comparison.failing else ExitCode.OK
    return MutateResult(code, root, plan.notes, run, plan.report_file, after, tracked,
                        request.sarif_path, write_errors=failed)


def _save_cache(save: Callable[[], None]) -> Message | None:
    """A cache that cannot be written costs the next run its speed, not this run its
    result: a warning, and the exit code stands."""
    try:
        save()
    except OutputError as e:
        return Message(f"warning: {e}; the next run starts without it", stderr=True)
    return None


def survivor_diffs(results: Sequence[MutantResult], root: Path) -> dict[str, str]:
    """Mutant id -> the diff of each survivor (Survived and NoCoverage)."""
    return {r.mutant.id: rewrite_diff(r, root) for r in results
            if r.status in (Status.SURVIVED, Status.NO_COVERAGE)}


def track_survivors(results: Sequence[MutantResult], root: Path, findings_file: Path,
                    update: bool, *, sarif: bool = False, since: bool = False,
                    diffs: dict[str, str] | None = None,
                    prints: Mapping[str, str] | None = None
                    ) -> tuple[Tracked, tuple[OutputError, ...]]:
    """Compare a run's survivors with the findings file: what is new, known and
    fixed; write the file (``update``); say what a SARIF file (``sarif``) is to
    hold: the new survivors when the run is a pull request's (``since``: what it
    introduced, not the backlog), else every open one. Returns what was tracked
    and the findings file when it could not be written. Raises ``InputError``
    for a findings file that cannot be read. ``prints``: the fingerprints of every
    mutant found, when ``results`` are some of them (``--since``)."""
    diffs = survivor_diffs(results, root) if diffs is None else diffs
    seen = Seen(vcs.head_commit(root), vcs.today().isoformat())
    baseline = load_findings(findings_file)
    comparison = compare(baseline, results, diffs, seen, vcs.today(), prints)
    failed: list[OutputError] = []
    after = updated(baseline, results, diffs, seen, prints)
    written = False
    if update:
        try:
            save_findings(after, findings_file)
            written = True
        except OutputError as e:
            failed.append(e)
    # A pull request's SARIF holds what it introduced; the open backlog is the full
    # run's (or 'metaeval findings export').
    reported = None if not sarif else Findings(comparison.new) if since else after
    return Tracked(comparison, _shown(findings_file), written, reported, since), tuple(failed)


def _shown(path: Path) -> Path:
    """``path`` relative to the current directory when it lies under it, as typed."""
    if path.is_absolute() and path.is_relative_to(Path.cwd()):
        return path.relative_to(Path.cwd())
    return path
