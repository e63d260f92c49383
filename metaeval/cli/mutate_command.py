"""``metaeval mutate``: its options, the plan shown before the run, the progress,
then the result rendered and the files written.

Kept apart from ``app.py`` so that it stays small; registered there with one line.
The runner and libcst are imported only when the command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from metaeval.cli.options import (
    FORMAT,
    SUMMARY,
    EnumChoice,
    InRange,
    ShowCount,
    echo,
    executor_options,
    outputs_then_exit,
    refuse_inputs_as_outputs,
    shard_options,
    user_errors,
)
from metaeval.config import load_config
from metaeval.mutation import limits
from metaeval.mutation.isolation.options import Executor, Isolation


@click.command()
@click.argument("paths", nargs=-1)
@click.option("--jobs", "-j", type=click.IntRange(int(limits.JOBS.low), int(limits.JOBS.high)),
              default=None, help="Mutants run in parallel (default: [tool.metaeval.mutate] "
                                 "jobs, else one per core).")
@click.option("--timeout-factor", type=InRange(limits.TIMEOUT_FACTOR), default=None,
              help="Per-mutant limit = baseline duration x this + the constant (default 3; "
                   "1 to 1000).")
@click.option("--timeout-constant", type=InRange(limits.TIMEOUT_CONSTANT), default=None,
              help="Seconds added to the per-mutant limit (default 5; 0 to 86400).")
@click.option("--mutants", "mutants_dir", type=click.Path(path_type=Path), default=None,
              help="Directory of patch-mutant files (default: mutants).")
@click.option("--report", "report_path", type=click.Path(path_type=Path), default=None,
              help="Where to write the mutation-testing-report-schema JSON "
                   "(default: .metaeval/mutation-report.json).")
@click.option("--isolation", type=EnumChoice(Isolation), default=None,
              help="fork: collect once, fork a child per mutant running only the tests "
                   "that reach it (default on POSIX); subprocess: a fresh pytest per mutant.")
@click.option("--since", "since_ref", metavar="REF", default=None,
              help="Only mutants on lines changed against the git ref REF (and patch "
                   "mutants whose target's file changed).")
@click.option("--cache", "cache_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Result cache file (default: .metaeval/mutate-cache.json).")
@click.option("--no-cache", is_flag=True,
              help="Run every mutant, neither reading nor writing the result cache.")
@click.option("--baseline", "baseline_path", type=click.Path(path_type=Path), default=None,
              help="Findings file of known survivors: exit 1 only for new survivors and "
                   "accepted ones past their expiry.")
@click.option("--update-baseline", is_flag=True,
              help="Write the findings file (--baseline, else config) after the run.")
@click.option("--sarif", "sarif_path", type=click.Path(path_type=Path), default=None,
              help="Write the open survivors as SARIF 2.1.0 here.")
@click.option("--html", "html_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Also write the report as one HTML page that opens offline "
                                 "(the mutation-testing-elements viewer, inlined).")
@click.option("--message-strings/--no-message-strings", default=None,
              help="Also mutate strings that are only a log, warning or exception message "
                   "(default: [tool.metaeval.mutate] message_strings, else no).")
@click.option("--operators", "operators", metavar="NAME,...", default=None,
              help="Only these rewrite operators, separated by commas (default: "
                   "[tool.metaeval.mutate] operators, else all).")
@click.option("--show", "show", type=ShowCount(), default="5", show_default=True,
              help="Survivors' diffs to print, new ones first; 'all' for every one (the "
                   "rest: metaeval findings list, the --html report).")
@shard_options
@executor_options
@SUMMARY
@FORMAT
@user_errors
def mutate(paths: tuple[str, ...], jobs: int | None, timeout_factor: float | None,
           timeout_constant: float | None, mutants_dir: Path | None, report_path: Path | None,
           isolation: Isolation | None, since_ref: str | None, cache_path: Path | None,
           no_cache: bool, baseline_path: Path | None, update_baseline: bool,
           sarif_path: Path | None, html_path: Path | None, message_strings: bool | None,
           operators: str | None, show: int | None, summary_path: Path | None, fmt: str,
           shard: tuple[int, int] | None, shard_out: Path | None, timings_path: Path | None,
           write_timings: Path | None, merge_dirs: tuple[Path, ...], trace_only: bool,
           write_coverage: Path | None, coverage_path: Path | None, executor: Executor,
           ray_address: str | None) -> None:
    """Inject one fault at a time and run the tests against each.

    PATHS are rewrite targets (files, directories, package.module:qualname);
    default: [tool.metaeval.mutate] targets. Patch mutants come from mutants/.

    Exit 0 when every mutant was detected, 1 when one survived (or had no
    coverage, or could not be applied), 2 on bad input, 3 when the suite fails
    without any mutant or no mutant ran.
    """
    from metaeval.mutation.isolation.ran import Step
    from metaeval.report.progress import MutateProgress

    progress = MutateProgress(sys.stderr, terminal=sys.stderr.isatty())
    if not merge_dirs:  # a word within seconds: importing, planning, tracing take a while
        progress.phase(Step.PLANNING)
    try:
        # Imported here: the runner and libcst are only needed by this command.
        from metaeval.commands.mutate import plan_mutate, run_plan
        from metaeval.commands.mutate_trace import trace_plan
        from metaeval.commands.mutate_values import MutateRequest
        from metaeval.report.mutate_outcome import finish
        from metaeval.report.mutation import Shown, mutation_json, mutation_text

        _mutate_outputs_are_no_inputs(
            paths, mutants_dir, baseline_path, update_baseline, cache_path, timings_path,
            coverage_path, merge_dirs, [("--report", report_path), ("--sarif", sarif_path),
                                        ("--html", html_path), ("--summary", summary_path),
                                        ("--write-timings", write_timings),
                                        ("--write-coverage", write_coverage)])
        request = MutateRequest(
            paths=paths, jobs=jobs, timeout_factor=timeout_factor,
            timeout_constant=timeout_constant, mutants_dir=mutants_dir, report_path=report_path,
            isolation=isolation, since_ref=since_ref,
            cache_path=cache_path, no_cache=no_cache, baseline_path=baseline_path,
            update_baseline=update_baseline, sarif_path=sarif_path,
            message_strings=message_strings, shard=shard, shard_out=shard_out,
            timings_path=timings_path, write_timings=write_timings, trace_only=trace_only,
            write_coverage=write_coverage, coverage_path=coverage_path, executor=executor,
            ray_address=ray_address, operators=operators)
        if merge_dirs:
            from metaeval.commands.mutate_merge import merge_shards

            result = merge_shards(request, merge_dirs)
            for message in result.before:
                echo(message.text, err=message.stderr)
        else:
            plan = plan_mutate(request)
            progress.clear_line()
            # Shown before the run starts, not with its outcome: the --since count comes
            # before the progress, as the user waits.
            for message in plan.notes:
                echo(message.text, err=message.stderr)
            if request.trace_only:
                progress.phase(Step.TRACING)
                result = trace_plan(plan)
            else:
                result = run_plan(plan, progress)
        progress.stop()  # before the results: no step line after them
        outcome = finish(result, html=html_path)
        if outcome.run is not None and fmt == "json":
            echo(mutation_json(outcome.run, outcome.root, outcome.report))
        elif outcome.run is not None:
            new = (None if outcome.comparison is None
                   else frozenset(e.mutant_id for e in outcome.comparison.new))
            echo(mutation_text(outcome.run, outcome.root, outcome.report,
                               Shown(show, new, html_path)))
        for message in outcome.after:  # with --format json, stdout holds the JSON alone
            echo(message.text, err=message.stderr or fmt == "json")
        if outcome.findings_error is not None:
            for error in outcome.write_errors:  # the results above stand; these files do not
                echo(f"error: {error}", err=True)
            raise outcome.findings_error
        from metaeval.report.summary import append_summary, mutate_summary

        outputs_then_exit(outcome.code, [
            (summary_path, lambda p: append_summary(p, mutate_summary(outcome)))],
            outcome.write_errors)
    finally:
        progress.stop()


def _mutate_outputs_are_no_inputs(
        paths: tuple[str, ...], mutants_dir: Path | None, baseline: Path | None,
        update_baseline: bool, cache: Path | None, timings: Path | None,
        coverage: Path | None, merge_dirs: tuple[Path, ...],
        outputs: list[tuple[str, Path | None]]) -> None:
    """``refuse_inputs_as_outputs`` for ``mutate``: the targets (a report over a source
    file would be the tree written), the patch mutants, the findings file (an output
    itself with ``--update-baseline``, by design), the caches and shard files read."""
    from metaeval.mutation.run.shard_manifest import GLOB

    config = load_config()
    root = config.root  # where --report, --mutants and targets are taken from
    findings = baseline or config.root / config.findings
    inputs: list[tuple[str, Path | None, str]] = [
        *(("PATHS", root / spec.partition(":")[0], "*.py")
          for spec in (paths or config.mutate_targets)),
        ("--mutants", root / (mutants_dir or Path("mutants")), "*.py"),
        ("--cache", cache, ""), ("--timings", timings, ""), ("--coverage", coverage, ""),
        *(("--merge", d, GLOB) for d in merge_dirs)]
    if update_baseline:
        outputs = [*outputs, ("--baseline", findings)]
    else:
        inputs.append(("--baseline", findings, ""))
    refuse_inputs_as_outputs(
        [(flag, root / path if flag == "--report" and path is not None else path)
         for flag, path in outputs], inputs)
