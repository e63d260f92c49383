"""The ``metaeval`` command line: parse, call the library, render. Nothing else.

A user's mistake ends as exit code 2 with a message, never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path
from typing import ParamSpec, TypeVar

import click

from metaeval import __version__, vcs
from metaeval.config import load_config
from metaeval.errors import ExitCode, InputError
from metaeval.findings import (
    Comparison,
    FindingStatus,
    Seen,
    accept,
    compare,
    diff_findings,
    parse_date,
    updated,
)
from metaeval.findings import load as load_findings
from metaeval.findings import save as save_findings
from metaeval.judge_items import ITEM_SUFFIX, with_judge_items
from metaeval.meta_set import load_meta_sets
from metaeval.mutation.model import MutantResult, Status
from metaeval.report.findings import (
    comparison_text,
    finding_text,
    findings_diff_text,
    findings_json,
    findings_table,
)
from metaeval.report.sarif import sarif
from metaeval.report.validation import validation_json, validation_text

P = ParamSpec("P")
R = TypeVar("R")

FORMAT = click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
                      show_default=True, help="Table for people, stable JSON for machines.")


def user_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn an InputError into its message and exit code 2."""

    @wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except InputError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(ExitCode.BAD_INPUT)

    return run


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="metaeval")
def main() -> None:
    """Test the tests and judge the judges of an LLM-agent evaluation harness."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@FORMAT
@user_errors
def validate(paths: tuple[Path, ...], fmt: str) -> None:
    """Check meta-set and judge-item files (default: the configured meta-sets); name
    every bad line.

    Exit 0 when every line loads, 2 when any line (or file) is bad.
    """
    config = load_config()
    targets = list(paths) or config.paths(config.meta_sets)
    result = with_judge_items(targets, load_meta_sets(
        [t for t in targets if t.suffix != ITEM_SUFFIX]))
    click.echo(validation_json(result) if fmt == "json" else validation_text(result))
    sys.exit(ExitCode.BAD_INPUT if result.errors else ExitCode.OK)


# --- findings --------------------------------------------------------------------------

FINDINGS_FILE = click.option("--file", "findings_file", type=click.Path(path_type=Path),
                             default=None, help="The findings file [default: from config, "
                             "else mutants/findings.json].")


def _findings_path(findings_file: Path | None) -> Path:
    if findings_file is not None:
        return findings_file
    config = load_config()
    return config.root / config.findings


@main.group()
def findings() -> None:
    """Tracked surviving mutants: list, show, accept with a reason, diff, export SARIF."""


@findings.command("list")
@FINDINGS_FILE
@FORMAT
@user_errors
def findings_list(findings_file: Path | None, fmt: str) -> None:
    """Every tracked finding. Exit 1 when any is open (or accepted but expired)."""
    tracked = load_findings(_findings_path(findings_file))
    today = vcs.today()
    text = findings_json(tracked, today) if fmt == "json" else findings_table(tracked, today)
    click.echo(text)
    is_open = any(e.effective_status(today) is FindingStatus.OPEN for e in tracked.entries)
    sys.exit(ExitCode.FINDINGS if is_open else ExitCode.OK)


@findings.command("show")
@click.argument("ref")
@FINDINGS_FILE
@user_errors
def findings_show(ref: str, findings_file: Path | None) -> None:
    """One finding (by fingerprint, a unique prefix of one, or mutant id), with its diff."""
    tracked = load_findings(_findings_path(findings_file), missing_ok=False)
    click.echo(finding_text(tracked.find(ref), vcs.today()))


@findings.command("accept")
@click.argument("ref")
@click.option("--reason", required=True, help="Why this survivor is fine.")
@click.option("--until", "until_text", default=None, metavar="YYYY-MM-DD",
              help="After this date the finding is open again.")
@click.option("--by", "by", default=None, help="Who accepts it [default: git user.name].")
@FINDINGS_FILE
@user_errors
def findings_accept(ref: str, reason: str, until_text: str | None, by: str | None,
                    findings_file: Path | None) -> None:
    """Accept a finding with a reason, so it no longer fails a run."""
    path = _findings_path(findings_file)
    until = parse_date(until_text, "--until") if until_text else None
    tracked, entry = accept(load_findings(path, missing_ok=False), ref, reason,
                            by or vcs.user_name(path.parent), until)
    save_findings(tracked, path)
    expiry = f" until {entry.until}" if entry.until else ""
    click.echo(f"accepted {entry.fingerprint[:12]} ({entry.mutant_id}){expiry}: {entry.reason}")


@findings.command("diff")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@user_errors
def findings_diff(old: Path, new: Path) -> None:
    """Compare two findings files. Exit 1 when NEW adds an open finding."""
    d = diff_findings(load_findings(old), load_findings(new, missing_ok=False))
    click.echo(findings_diff_text(d))
    added_open = any(e.status is FindingStatus.OPEN for e in d.added)
    sys.exit(ExitCode.FINDINGS if added_open else ExitCode.OK)


@findings.command("export")
@click.option("--sarif", "sarif_file", type=click.Path(path_type=Path), required=True,
              help="Write the open findings as SARIF 2.1.0 here.")
@FINDINGS_FILE
@user_errors
def findings_export(sarif_file: Path, findings_file: Path | None) -> None:
    """Export the open findings as SARIF 2.1.0 for code-scanning upload."""
    tracked = load_findings(_findings_path(findings_file))
    text = sarif(tracked, vcs.today())
    sarif_file.parent.mkdir(parents=True, exist_ok=True)
    sarif_file.write_text(text, encoding="utf-8")
    click.echo(f"wrote {sarif_file}")


# --- mutate ----------------------------------------------------------------------------


@main.command()
@click.argument("paths", nargs=-1)
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=None,
              help="Mutants run in parallel (default: [tool.metaeval.mutate] jobs, "
                   "else one per core).")
@click.option("--timeout-factor", type=click.FloatRange(min=0), default=None,
              help="Per-mutant limit = baseline duration x this + the constant (default 3).")
@click.option("--timeout-constant", type=click.FloatRange(min=0), default=None,
              help="Seconds added to the per-mutant limit (default 5).")
@click.option("--mutants", "mutants_dir", type=click.Path(path_type=Path), default=None,
              help="Directory of patch-mutant files (default: mutants).")
@click.option("--report", "report_path", type=click.Path(path_type=Path), default=None,
              help="Where to write the mutation-testing-report-schema JSON "
                   "(default: .metaeval/mutation-report.json).")
@click.option("--isolation", type=click.Choice(["fork", "subprocess"]), default=None,
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
@FORMAT
@user_errors
def mutate(paths: tuple[str, ...], jobs: int | None, timeout_factor: float | None,
           timeout_constant: float | None, mutants_dir: Path | None, report_path: Path | None,
           isolation: str | None, since_ref: str | None, cache_path: Path | None,
           no_cache: bool, baseline_path: Path | None, update_baseline: bool,
           sarif_path: Path | None, fmt: str) -> None:
    """Inject one fault at a time and run the tests against each.

    PATHS are rewrite targets (files, directories, package.module:qualname);
    default: [tool.metaeval.mutate] targets. Patch mutants come from mutants/.

    Exit 0 when every mutant was detected, 1 when one survived (or had no
    coverage, or could not be applied), 2 on bad input, 3 when the suite fails
    without any mutant or no mutant ran.
    """
    # Imported here: the runner and libcst are only needed by this command.
    from metaeval.mutation.cache import CACHE_FILE, SCAN_FILE_NAME, ResultCache, ScanCache
    from metaeval.mutation.patches import load_patch_mutants
    from metaeval.mutation.runner import (
        DEFAULT_ISOLATION,
        Isolation,
        RunOptions,
        VoidRun,
        exit_code,
        run_mutants,
    )
    from metaeval.mutation.settings import load_mutate_settings
    from metaeval.mutation.since import since
    from metaeval.mutation.targets import find_mutants
    from metaeval.report.mutation import mutation_json, mutation_report, mutation_text

    config = load_config()
    settings = load_mutate_settings(config.root)
    root = config.root
    targets = list(paths) or list(config.mutate_targets)
    cache_file = root / CACHE_FILE if cache_path is None else Path.cwd() / cache_path
    scan = None if no_cache else ScanCache(root, cache_file.with_name(SCAN_FILE_NAME))
    mutants = find_mutants(targets, root, config.mutate_operators, scan) if targets else []
    patch_dir = root / (mutants_dir or Path(settings.mutants))
    mutants += load_patch_mutants(patch_dir, root)
    if not mutants:
        click.echo(f"error: no mutant found: no targets given or configured, and no patch "
                   f"mutants under {patch_dir}", err=True)
        sys.exit(ExitCode.VOID)
    if since_ref is not None:
        found = len(mutants)
        mutants = since(mutants, root, since_ref)
        click.echo(f"--since {since_ref}: {len(mutants)} of {found} mutants on changed lines",
                   err=True)
        if not mutants:
            click.echo(f"nothing to mutate: no mutant on a line changed against {since_ref}")
            sys.exit(ExitCode.OK)
    options = RunOptions(
        root=root, mutants_dir=patch_dir,
        jobs=settings.jobs if jobs is None else jobs,
        timeout_factor=settings.timeout_factor if timeout_factor is None else timeout_factor,
        timeout_constant=(settings.timeout_constant if timeout_constant is None
                          else timeout_constant),
        pytest_args=settings.pytest_args,
        isolation=DEFAULT_ISOLATION if isolation is None else Isolation(isolation))
    cache = None if no_cache else ResultCache(
        root, (*options.pytest_args, str(options.timeout_factor), str(options.timeout_constant)),
        cache_file)
    show_progress = sys.stderr.isatty()

    def progress(done: int, total: int, result: object) -> None:
        if show_progress:
            click.echo(f"\rmutants {done}/{total}", err=True, nl=done == total)

    try:
        run = run_mutants(mutants, options, progress, cache)
    except VoidRun as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(ExitCode.VOID)
    if scan is not None:  # like the report: written only by a run that finished
        scan.save()
    report = root / (report_path or Path(settings.report))
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(mutation_report(run, root), indent=2) + "\n", encoding="utf-8")
    if report.is_relative_to(Path.cwd()):
        report = report.relative_to(Path.cwd())
    shown = mutation_json(run, root, report) if fmt == "json" else mutation_text(run, root, report)
    click.echo(shown)
    code = exit_code(run)
    if code is ExitCode.VOID:
        click.echo(f"error: no mutant ran ({len(mutants)} found); nothing was tested", err=True)
    elif baseline_path is not None or update_baseline or sarif_path is not None:
        tracked = _track_survivors(run.results, root, baseline_path or _findings_path(None),
                                   update_baseline, sarif_path)
        if baseline_path is not None:
            code = ExitCode.FINDINGS if tracked.failing else ExitCode.OK
    sys.exit(code)


def _track_survivors(results: Sequence[MutantResult], root: Path, findings_file: Path,
                     update: bool, sarif_path: Path | None) -> Comparison:
    """Compare a run's survivors with the findings file, print what is new, known
    and fixed; write the file (``update``) and the SARIF of the open ones."""
    from metaeval.report.mutation import rewrite_diff

    diffs = {r.mutant.id: rewrite_diff(r, root) for r in results
             if r.status in (Status.SURVIVED, Status.NO_COVERAGE)}
    seen = Seen(vcs.head_commit(root), vcs.today().isoformat())
    baseline = load_findings(findings_file)
    comparison = compare(baseline, results, diffs, seen, vcs.today())
    click.echo(comparison_text(comparison, findings_file))
    after = updated(baseline, results, diffs, seen)
    if update:
        save_findings(after, findings_file)
        click.echo(f"findings: wrote {findings_file}")
    if sarif_path is not None:
        # Open survivors of this run and the file: new, known open and expired ones.
        sarif_path.parent.mkdir(parents=True, exist_ok=True)
        sarif_path.write_text(sarif(after, vcs.today()), encoding="utf-8")
        click.echo(f"findings: SARIF of the open survivors in {sarif_path}")
    return comparison


@main.command("meta-eval")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--min-tpr", type=click.FloatRange(0, 1), default=None,
              help="Bar for every check's TPR (overrides every TPR bar of the config).")
@click.option("--min-tnr", type=click.FloatRange(0, 1), default=None,
              help="Bar for every check's TNR (overrides every TNR bar of the config).")
@click.option("--min-kappa", type=click.FloatRange(-1, 1), default=None,
              help="Bar for every check's Cohen's kappa (overrides every kappa bar of the "
                   "config).")
@click.option("--baseline", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="A previous --format json result; a drop or a new failing flag is a "
                   "regression.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed of the bootstrap (default: config, else 0).")
@click.option("--resamples", type=click.IntRange(min=1), default=None,
              help="Bootstrap resamples for the kappa and Youden's J intervals (default 1000).")
@FORMAT
@user_errors
def meta_eval(paths: tuple[Path, ...], min_tpr: float | None, min_tnr: float | None,
              min_kappa: float | None, baseline: Path | None, seed: int | None,
              resamples: int | None, fmt: str) -> None:
    """Run every check over the meta-sets (default: the configured ones) and measure
    each against the human labels: TPR, TNR, kappa with intervals, tautology flags.

    Exit 0 when every check meets its bars; 1 when one does not, regresses from
    the baseline, or is flagged a tautology; 2 for bad input (the good lines are
    still measured); 3 when there is nothing to measure.
    """
    # Imported here: scikit-learn takes a second to load, and 'validate' does not need it.
    from metaeval.audit.baseline import load_baseline
    from metaeval.audit.meta_eval import Settings
    from metaeval.audit.meta_eval import meta_eval as run_meta_eval
    from metaeval.config import Bars
    from metaeval.report.meta_eval import meta_eval_json, meta_eval_table

    config = load_config()
    targets = list(paths) or config.paths(config.meta_sets)
    loaded = load_meta_sets(targets)
    before = load_baseline(baseline) if baseline is not None else None
    settings = Settings(
        bars=Bars(min_tpr, min_tnr, min_kappa).over(config.meta_eval.bars),
        # A flag overrides the config for that metric, per-check bars included.
        check_bars={name: Bars(None if min_tpr is not None else bars.min_tpr,
                               None if min_tnr is not None else bars.min_tnr,
                               None if min_kappa is not None else bars.min_kappa)
                    for name, bars in config.meta_eval.check_bars.items()},
        seed=config.meta_eval.seed if seed is None else seed,
        resamples=config.meta_eval.resamples if resamples is None else resamples)
    if not loaded.runs:
        for error in loaded.errors:
            click.echo(str(error), err=True)
        click.echo("error: no run to measure in " + ", ".join(map(str, targets)), err=True)
        sys.exit(ExitCode.BAD_INPUT if loaded.errors else ExitCode.VOID)
    result = run_meta_eval(loaded.runs, settings, before)
    render = meta_eval_json if fmt == "json" else meta_eval_table
    click.echo(render(result, files=loaded.files, errors=loaded.errors))
    if loaded.errors:
        sys.exit(ExitCode.BAD_INPUT)
    sys.exit(ExitCode.FINDINGS if result.failed else ExitCode.OK)


@main.command("judge-audit")
@click.option("--judge", "spec", required=True,
              help="biased, steady, always-pass, package.module:attr, or a name under "
              "[tool.metaeval.judges]. With --recorded it only names the judge.")
@click.option("--items", "items_paths", multiple=True, type=click.Path(path_type=Path),
              help="Judge-item files or folders (*.ndjson); default: <meta_sets>/judge/.")
@click.option("--recorded", type=click.Path(path_type=Path),
              help="Audit from recorded verdicts (JSONL); no call is made.")
@click.option("--samples", default=1, show_default=True, type=int,
              help="Ask each question K times for self-consistency.")
@click.option("--cache", "cache_path", type=click.Path(path_type=Path),
              help="Reply cache (sqlite); default .metaeval/judge-cache.sqlite.")
@click.option("--no-cache", is_flag=True, help="Ask the judge even if a reply is cached.")
@click.option("--kappa-bar", default=0.6, show_default=True, type=float)
@click.option("--tpr-bar", default=0.8, show_default=True, type=float)
@click.option("--tnr-bar", default=0.8, show_default=True, type=float)
@click.option("--unscored-bar", default=0.1, show_default=True, type=float,
              help="Largest share of unscored verdicts on labelled items.")
@click.option("--alpha", default=0.05, show_default=True, type=float,
              help="Significance level of the probes' exact tests.")
@click.option("--write", is_flag=True,
              help="On 'may gate', add an entry to the calibration file.")
@click.option("--calibration", "calibration_path", type=click.Path(path_type=Path),
              help="Calibration file; default meta_sets/judge/calibration.json.")
@FORMAT
@user_errors
def judge_audit(spec: str, items_paths: tuple[Path, ...], recorded: Path | None, samples: int,
                cache_path: Path | None, no_cache: bool, kappa_bar: float, tpr_bar: float,
                tnr_bar: float, unscored_bar: float, alpha: float, write: bool,
                calibration_path: Path | None, fmt: str) -> None:
    """May this judge gate a release? Agreement with people, self-consistency, and
    position, length and injection probes mirrored on planted controls.

    Exit 0 may gate; 1 report only; 2 bad input; 3 a control failed (audit void).
    """
    from datetime import UTC, datetime

    from metaeval.audit.calibration import DEFAULT_PATH, write_calibration
    from metaeval.audit.judge_audit import AuditVerdict, Bars
    from metaeval.audit.judge_run import load_items, run_judge_audit
    from metaeval.judges.cache import DEFAULT_PATH as DEFAULT_CACHE
    from metaeval.report.judge_audit import audit_json, audit_text

    config = load_config()
    paths = list(items_paths) or [p / "judge" for p in config.paths(config.meta_sets)]
    bars = Bars(kappa_bar, tpr_bar, tnr_bar, unscored_bar, alpha)
    cache = None if no_cache or recorded else (cache_path or config.root / DEFAULT_CACHE)
    bar = _ProgressBar("asking the judge") if sys.stderr.isatty() else None
    try:
        audit = run_judge_audit(spec, load_items(paths), recorded=recorded, samples=samples,
                                cache=cache, bars=bars, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    click.echo(audit_json(audit) if fmt == "json" else audit_text(audit))
    if write:
        target = calibration_path or config.root / DEFAULT_PATH
        if write_calibration(target, audit, datetime.now(UTC).date()):
            click.echo(f"calibration: entry added to {target}", err=True)
        else:
            click.echo(f"calibration: nothing written ({audit.verdict.value})", err=True)
    codes = {AuditVerdict.MAY_GATE: ExitCode.OK, AuditVerdict.REPORT_ONLY: ExitCode.FINDINGS,
             AuditVerdict.VOID: ExitCode.VOID}
    sys.exit(codes[audit.verdict])


@main.command("judge-import-llmbar")
@click.argument("dataset", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--result", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="LLMBar result.json of a judge: its verdicts in both orders.")
@click.option("--items", "items_out", required=True, type=click.Path(path_type=Path),
              help="Where to write the pairwise judge items (*.ndjson).")
@click.option("--recorded", "recorded_out", type=click.Path(path_type=Path),
              help="Where to write the recorded verdicts (needs --result).")
@click.option("--prefix", default="llmbar", show_default=True, help="Item id prefix.")
@user_errors
def judge_import_llmbar(dataset: Path, result: Path | None, items_out: Path,
                        recorded_out: Path | None, prefix: str) -> None:
    """Convert an LLMBar dataset (and a judge's result file) for judge-audit."""
    from metaeval.llmbar import convert_llmbar, write_ndjson

    if recorded_out is not None and result is None:
        raise InputError("--recorded: needs --result, the judge's LLMBar result.json")
    converted = convert_llmbar(dataset, result, prefix=prefix)
    write_ndjson(items_out, converted.items)
    click.echo(f"{len(converted.items)} items -> {items_out}")
    if recorded_out is not None:
        write_ndjson(recorded_out, converted.recorded)
        click.echo(f"{len(converted.recorded)} recorded verdicts -> {recorded_out}")


class _ProgressBar:
    """A click progress bar on stderr, fed (done, total) by the library."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: click._termui_impl.ProgressBar[int] | None = None
        self.done = 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


# --- gate ------------------------------------------------------------------------------


@main.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--calibration", "calibration_path", type=click.Path(path_type=Path),
              help="Calibration file; default meta_sets/judge/calibration.json.")
@FORMAT
@user_errors
def gate(results: tuple[Path, ...], calibration_path: Path | None, fmt: str) -> None:
    """Hold result files (meta-eval, judge-audit, mutate; --format json) to the bars in
    [tool.metaeval.gate]. A missing metric fails; a judge metric is enforced only for a
    judge whose identity has a calibration entry. Exit 1 on any failure."""
    from metaeval.audit.calibration import DEFAULT_PATH, calibrated_versions
    from metaeval.gate import decide, load_results
    from metaeval.report.gate import gate_json, gate_table

    config = load_config()
    if not config.gate:
        raise InputError("no bars: add [tool.metaeval.gate] to pyproject.toml, e.g. "
                         "\"meta-eval:evaluator.kappa\" = 0.8")
    calibrated = calibrated_versions(calibration_path or config.root / DEFAULT_PATH)
    decided = decide(config.gate, load_results(list(results)), calibrated)
    click.echo(gate_json(decided) if fmt == "json" else gate_table(decided))
    sys.exit(ExitCode.FINDINGS if any(r.status.fails for r in decided) else ExitCode.OK)


# --- init ------------------------------------------------------------------------------


@main.command()
@click.option("--force", is_flag=True, help="Overwrite scaffold files that already exist.")
@click.option("--path", "root", type=click.Path(path_type=Path), default=Path("."),
              show_default=True, help="The repository to scaffold.")
@user_errors
def init(force: bool, root: Path) -> None:
    """Scaffold mutants/, meta_sets/, a grader test, [tool.metaeval] and a CI workflow.

    Idempotent: an existing file is kept unless --force; pyproject.toml is only
    appended to, and only when it has no [tool.metaeval] yet.
    """
    from metaeval.init import scaffold

    for step in scaffold(root, force=force):
        click.echo(f"{step.action.value:<11} {step.path}")
