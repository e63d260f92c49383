"""The ``metaeval`` command line: parse, call a command, render. Nothing else.

A user's mistake ends as exit code 2 with a message, never a traceback; so does
a file that cannot be written, after the results are shown. Ctrl-C ends any
command with 130, SIGTERM and SIGHUP with 128 + their number, each after the
same clean-up as any other exit: children killed, scratch directories removed.
An unexpected exception (a bug of ours) prints its traceback and exits 3: the
run proves nothing, and a pipeline must not read it as 0 or 1.
"""

from __future__ import annotations

import signal
import sys
import threading
import traceback
from pathlib import Path

import click

from metaeval import __version__
from metaeval.audit.bars import DEFAULT_BARS as DEFAULT_JUDGE_BARS
from metaeval.audit.measured_set import SetChoice
from metaeval.cli.findings_commands import findings
from metaeval.cli.import_commands import import_runs_command
from metaeval.cli.judge_import_commands import judge_import, judge_import_llmbar
from metaeval.cli.judge_mutants_command import judge_mutants_command
from metaeval.cli.label_commands import label
from metaeval.cli.mutate_command import mutate
from metaeval.cli.options import (
    FORMAT,
    SUMMARY,
    EnumChoice,
    ProgressBar,
    echo,
    init_shards,
    outputs_then_exit,
    refuse_inputs_as_outputs,
    user_errors,
)
from metaeval.cli.repeats import refuse_repeats
from metaeval.cli.split_command import split_command
from metaeval.commands.validate import ValidateRequest, validate_code
from metaeval.commands.validate import validate as run_validate
from metaeval.config import load_config
from metaeval.errors import ExitCode
from metaeval.files import write_atomic
from metaeval.importers.runs import FORMATS as RUN_FORMATS
from metaeval.judges.scales import ProbeSource
from metaeval.loaders.labels_files import labels_format
from metaeval.report.escape import one_line
from metaeval.report.validation import validation_json, validation_text


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised in the main thread as Ctrl-C raises KeyboardInterrupt,
    so that every ``finally`` and context manager on the way out runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class _Main(click.Group):
    """The command group, whose commands end in order when interrupted, and which
    refuses an option given twice that takes one value (``repeats``)."""

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and not ctx.resilient_parsing:
            refuse_repeats(command, click.Context(command, info_name=name, parent=ctx), rest)
        return name, command, rest

    def invoke(self, ctx: click.Context) -> object:
        before = {}
        if threading.current_thread() is threading.main_thread():
            before = {s: signal.signal(s, _terminate) for s in ENDING_SIGNALS}
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            echo("\ninterrupted", err=True)
            sys.exit(ExitCode.INTERRUPTED)
        except Terminated as e:
            echo(f"\nterminated ({signal.Signals(e.signum).name})", err=True)
            sys.exit(128 + e.signum)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as e:
            # A bug of ours, not a user's mistake: the traceback helps a report, and
            # the exit code must not read as "ok" (0) or "report only" (1) in CI.
            traceback.print_exc()
            click.echo(f"error: internal error ({type(e).__name__}); the run proves "
                       "nothing. Please report it with the traceback above.", err=True)
            sys.exit(ExitCode.VOID)
        finally:
            for s, handler in before.items():
                signal.signal(s, handler)


LABELS_FROM_FORMAT = ("FORMAT:PATH reads the labels a run format carries (FORMAT one of "
                      + (", ".join(sorted(n for n, u in RUN_FORMATS.items() if u.labels))
                         or "none yet") + "; a path that exists is a labels file).")


def labels_read(path: Path) -> Path:
    """What ``--labels PATH`` reads: the file, or the PATH of ``FORMAT:PATH``."""
    spec = labels_format(path)
    return path if spec is None else spec[1]


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="metaeval")
def main() -> None:
    """Test the tests and judge the judges of an LLM-agent evaluation harness."""


main.add_command(findings)
main.add_command(judge_import)
main.add_command(judge_import_llmbar)
main.add_command(judge_mutants_command)
main.add_command(import_runs_command)
main.add_command(label)
main.add_command(mutate)
main.add_command(split_command)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--recorded", "recorded", multiple=True, type=click.Path(path_type=Path),
              help="A judge's recorded verdicts (JSONL) to check; a .jsonl file whose first "
                   "line is one is recognised without it. Checked against the judge items "
                   "given beside it, when any.")
@click.option("--scale", "scale_text", metavar="LOW-HIGH", default=None,
              help="The recorded scores' scale (default 1-5, or [tool.metaeval.judge_audit] "
                   "scale).")
@click.option("--labels", "labels", multiple=True, type=click.Path(path_type=Path,
                                                                   dir_okay=False),
              help="A labels file (CSV or JSONL) to check, joined with the runs and judge "
                   "items given beside it; a .csv, or a .jsonl whose first row is a label, is "
                   f"recognised without it. {LABELS_FROM_FORMAT} Repeatable.")
@click.option("--runs", "runs", multiple=True, metavar="FORMAT:PATH",
              help="A harness's runs read as `metaeval import FORMAT` reads them ("
                   f"{', '.join(RUN_FORMATS)}, or auto), checked and joined with the labels; "
                   "repeatable.")
@FORMAT
@user_errors
def validate(paths: tuple[Path, ...], recorded: tuple[Path, ...], scale_text: str | None,
             labels: tuple[Path, ...], runs: tuple[str, ...], fmt: str) -> None:
    """Check meta-set, judge-item, recorded-verdict and labels files (default: the
    configured meta-sets); count what loaded and name every bad line.

    Exit 0 when every line loads, 2 when any line (or file) is bad.
    """
    from metaeval.commands.import_runs import runs_spec

    result = run_validate(paths, load_config(), ValidateRequest(
        recorded, scale_text, labels, tuple(runs_spec(r) for r in runs)))
    for warning in result.meta.warnings:  # loaded all the same: a note, never an exit code
        echo(f"warning: {one_line(str(warning))}", err=True)
    echo(validation_json(result) if fmt == "json" else validation_text(result))
    sys.exit(validate_code(result))


# --- findings --------------------------------------------------------------------------

# --- mutate ----------------------------------------------------------------------------


SET_OPTION = click.option(
    "--set", "set_choice", type=EnumChoice(SetChoice), default=None,
    help="Which items to measure: the golden set (tuned on), the held-out set (read once "
    "to decide; a judge-audit read is recorded in the ledger beside the split), or all "
    "[default: golden when a split file lies beside the items, else all].")


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
@click.option("--html", "html_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Also write the results as one HTML page with figures "
                                 "(needs the extra metaeval[report], i.e. matplotlib).")
@click.option("--show-runs", is_flag=True,
              help="List, per check, the ids of the runs it let through or wrongly failed "
                   "(the table; the JSON always has them, per category).")
@click.option("--labels", "labels", multiple=True, type=click.Path(path_type=Path,
                                                                   dir_okay=False),
              help="A labels file (CSV or JSONL: run_id, check, label, annotator[, "
                   "rationale]), joined with the runs by id; repeat for more (default: "
                   f"[tool.metaeval.meta_eval] labels). {LABELS_FROM_FORMAT}")
@click.option("--runs", "runs", multiple=True, metavar="FORMAT:PATH",
              help="A harness's runs read as `metaeval import FORMAT` reads them ("
                   f"{', '.join(RUN_FORMATS)}, or auto), measured beside META_SET...: no "
                   "converted file; repeat for more.")
@click.option("--cluster", type=click.Choice(["auto", "task", "run"]), default=None,
              help="What the intervals resample: task (a cluster bootstrap: trials of one "
                   "task together), run, or auto (tasks when runs share one and there are "
                   "10 or more; default: config, else auto).")
@click.option("--by", default="category", show_default=True,
              help="Break the results down by category, task or metadata.KEY (a key of the "
                   "runs' metadata), besides the categories.")
@SET_OPTION
@SUMMARY
@FORMAT
@user_errors
def meta_eval(paths: tuple[Path, ...], min_tpr: float | None, min_tnr: float | None,
              min_kappa: float | None, baseline: Path | None, seed: int | None,
              resamples: int | None, html_path: Path | None, show_runs: bool,
              labels: tuple[Path, ...], runs: tuple[str, ...], cluster: str | None, by: str,
              set_choice: SetChoice | None, summary_path: Path | None, fmt: str) -> None:
    """Run every check over the meta-sets (default: the configured ones) and measure
    each against the human labels: TPR, TNR, kappa with intervals, tautology flags.

    Exit 0 when every check meets its bars; 1 when one does not, regresses from
    the baseline, or is flagged a tautology; 2 for bad input (the good lines are
    still measured); 3 when there is nothing to measure.
    """
    # Imported here: scikit-learn takes a second to load, and 'validate' does not need it.
    from metaeval.commands.import_runs import runs_spec
    from metaeval.commands.meta_eval import MetaEvalRequest
    from metaeval.commands.meta_eval import meta_eval as run_meta_eval
    from metaeval.report.meta_eval_render import meta_eval_json, meta_eval_table

    if html_path is not None:
        from metaeval.report.figures import require

        require()  # before the work, not after it
    config = load_config()
    imported = tuple(runs_spec(text) for text in runs)
    refuse_inputs_as_outputs(
        [("--html", html_path), ("--summary", summary_path)],
        [*(("META_SET", p, "*.jsonl") for p in (paths or config.paths(config.meta_sets))),
         ("--baseline", baseline, ""), *(("--labels", labels_read(p), "*") for p in labels),
         *(("--runs", p, "*") for _, p in imported)])
    outcome = run_meta_eval(MetaEvalRequest(paths, min_tpr, min_tnr, min_kappa, baseline, seed,
                                            resamples, by, labels, cluster, imported,
                                            set_choice), config)
    loaded = outcome.loaded
    for warning in loaded.warnings:  # measured all the same: a note, never an exit code
        echo(f"warning: {one_line(str(warning))}", err=True)
    if outcome.result is None:
        for error in loaded.errors:
            echo(one_line(str(error)), err=True)  # one line each, whatever it quotes
        echo("error: no run to measure in " + ", ".join(map(str, outcome.targets)),
             err=True)
        sys.exit(outcome.code)
    result = outcome.result
    if fmt == "json":
        echo(meta_eval_json(result, files=loaded.files, errors=loaded.errors))
    else:
        echo(meta_eval_table(result, files=loaded.files, errors=loaded.errors,
                             show_runs=show_runs))
    from metaeval.report.audit_summary import meta_eval_summary
    from metaeval.report.summary import append_summary

    def write_html(path: Path) -> None:
        from metaeval.report.audit_html import meta_eval_html

        write_atomic(path, meta_eval_html(result, files=loaded.files, errors=loaded.errors),
                     follow_links=True)

    outputs_then_exit(outcome.code, [(html_path, write_html),
        (summary_path, lambda p: append_summary(p, meta_eval_summary(
            result, files=len(loaded.files), errors=len(loaded.errors))))])


@main.command("judge-audit")
@click.option("--judge", "judges", multiple=True,
              help="biased, steady, always-pass, package.module:attr, or a name under "
              "[tool.metaeval.judges]. With --recorded it only names the judge. Repeat it "
              "to audit several side by side; omitted, every judge a recorded log names.")
@click.option("--panel", "panels", multiple=True, metavar="A,B,...",
              help="Also audit these judges as one panel (majority of verdicts, mean of "
              "scores) beside its members (repeatable).")
@click.option("--gate", "gate_name", default=None, metavar="NAME",
              help="With several judges: exit by this judge's (or panel's) verdict "
              "[default: by the worst verdict of all].")
@click.option("--items", "items_paths", multiple=True, type=click.Path(path_type=Path),
              help="Judge-item files or folders (*.ndjson); default: <meta_sets>/judge/.")
@click.option("--recorded", multiple=True, type=click.Path(path_type=Path),
              help="Audit from recorded verdicts (JSONL); no call is made. Repeatable: "
              "the files are read as one log (a verdict in two of them is an error).")
@click.option("--samples", type=int,
              help="Ask each question K times for self-consistency [default: 1]; live "
              "judges only (with --recorded, K is what the log holds).")
@click.option("--scale", "scale_text", metavar="LOW-HIGH",
              help="With --recorded: the scale of the recorded scores (default 1-5, or "
              "[tool.metaeval.judge_audit] scale).")
@click.option("--pass-at", type=int,
              help="With --recorded: the lowest passing score (default: the top quarter).")
@click.option("--reply", "reply", metavar="RULE",
              help="With --recorded: read each record's raw reply text again by this rule "
              "(json, bare, mt-bench, arena, or a pattern), mapped through its order.")
@click.option("--cache", "cache_path", type=click.Path(path_type=Path),
              help="Reply cache (sqlite); default .metaeval/judge-cache.sqlite.")
@click.option("--no-cache", is_flag=True, help="Ask the judge even if a reply is cached.")
@click.option("--label-scale", "label_scale_text", metavar="LOW-HIGH",
              help="Range of the items' integer labels (default 1-5, or "
              "[tool.metaeval.judge_audit] label_scale).")
@click.option("--label-pass-at", type=int,
              help="Lowest integer label that is a human pass (default: the judge's "
              "pass_at on the same range, else the top quarter).")
@click.option("--kappa-bar", type=float,
              help=f"Lowest kappa that may gate [default: {DEFAULT_JUDGE_BARS.kappa:g}, or "
              "[tool.metaeval.judge_audit] kappa_bar].")
@click.option("--tpr-bar", type=float,
              help=f"Lowest TPR that may gate [default: {DEFAULT_JUDGE_BARS.tpr:g}, or tpr_bar].")
@click.option("--tnr-bar", type=float,
              help=f"Lowest TNR that may gate [default: {DEFAULT_JUDGE_BARS.tnr:g}, or tnr_bar].")
@click.option("--unscored-bar", type=float,
              help="Largest share of unscored verdicts on labelled items [default: "
              f"{DEFAULT_JUDGE_BARS.unscored:g}, or unscored_bar].")
@click.option("--alpha", type=float,
              help="Significance level of the probes' exact tests [default: "
              f"{DEFAULT_JUDGE_BARS.alpha:g}, or alpha].")
@click.option("--probes", "probes", type=EnumChoice(ProbeSource),
              help="Length and injection probes: from the item files, generated from the "
              "labelled items, or both [default: [tool.metaeval.judge_audit] probes, else "
              "files when the item files hold probes, else generated].")
@click.option("--write-probes", "write_probes", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the generated probes here (probe file format, *.ndjson) before the "
              "judge is asked.")
@click.option("--probe-budget", "probe_budget", type=click.IntRange(min=0),
              help="Most calls the probes may make to a live judge; probes are sampled "
              "deterministically to fit, cached replies are free.")
@click.option("--alt-epsilon", "alt_epsilon", type=float, default=None,
              help="The alternative annotator test's epsilon, the judge's allowed "
              "disadvantage [default: [tool.metaeval.judge_audit] alt_epsilon, else by its "
              "annotators: 0.2 experts, 0.15 skilled, 0.1 crowd (the default)].")
@click.option("--label-classes", "label_classes", metavar="A,B,...", default=None,
              help="Classes of categorical labels (e.g. which policy a response violates) "
              "[default: [tool.metaeval.judge_audit] label_classes]; --recorded only.")
@click.option("--by", "by", type=click.Choice(["category"]), default=None,
              help="Also break agreement, the position probe and the annotators' figures "
              "down by the items' category.")
@click.option("--labels", "label_files", multiple=True,
              type=click.Path(path_type=Path, dir_okay=False),
              help="A labels file (JSONL rows item_id, label, annotator, as metaeval label "
              "writes): each row one more annotator of its item (repeatable).")
@click.option("--write", is_flag=True,
              help="On 'may gate', add an entry to the calibration file.")
@click.option("--calibration", "calibration_path", type=click.Path(path_type=Path),
              help="Calibration file; default meta_sets/judge/calibration.json.")
@click.option("--html", "html_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Also write the results as one HTML page with figures "
                                 "(needs the extra metaeval[report], i.e. matplotlib).")
@SET_OPTION
@SUMMARY
@FORMAT
@user_errors
def judge_audit(judges: tuple[str, ...], panels: tuple[str, ...], gate_name: str | None,
                items_paths: tuple[Path, ...], recorded: tuple[Path, ...],
                samples: int | None, scale_text: str | None, pass_at: int | None,
                cache_path: Path | None, no_cache: bool, label_scale_text: str | None,
                label_pass_at: int | None, kappa_bar: float | None, tpr_bar: float | None,
                tnr_bar: float | None, unscored_bar: float | None, alpha: float | None,
                probes: ProbeSource | None, write_probes: Path | None, probe_budget: int | None,
                alt_epsilon: float | None, label_classes: str | None, by: str | None,
                label_files: tuple[Path, ...], write: bool, calibration_path: Path | None,
                html_path: Path | None, set_choice: SetChoice | None,
                summary_path: Path | None, fmt: str, reply: str | None = None) -> None:
    """May this judge gate a release? Agreement with people, self-consistency, and
    position, length and injection probes mirrored on planted controls.

    Exit 0 may gate; 1 report only (or tuned after a held-out read); 2 bad input; 3 the
    audit is void (a control failed, or most calls to the judge failed); 4 inconclusive
    (an interval holds its bar).
    """
    from datetime import UTC, datetime

    from metaeval.commands.judge_audit import (
        JudgeAuditRequest,
        judge_audit,
        record_calibration,
    )
    from metaeval.report.judge_audit_render import audit_json, audit_text

    if html_path is not None:
        from metaeval.report.figures import require

        require()  # before the judge is asked, not after
    config = load_config()
    items = items_paths or tuple(p / "judge" for p in config.paths(config.meta_sets))
    refuse_inputs_as_outputs(
        [("--write-probes", write_probes), ("--html", html_path), ("--summary", summary_path),
         ("--calibration", calibration_path if write else None)],
        [*(("--items", p, "*.ndjson") for p in items),
         *(("--recorded", p, "*") for p in recorded),
         *(("--labels", p, "*") for p in label_files)])
    flags = {"kappa_bar": kappa_bar, "tpr_bar": tpr_bar, "tnr_bar": tnr_bar,
             "unscored_bar": unscored_bar, "alpha": alpha}
    spec = judges[0] if len(judges) == 1 else ""
    request = JudgeAuditRequest(
        spec, items_paths, recorded, samples, scale_text, pass_at, cache_path, no_cache,
        {k: v for k, v in flags.items() if v is not None}, label_scale_text, label_pass_at,
        probes, write_probes, probe_budget, reply, alt_epsilon=alt_epsilon, by=by,
        label_classes=label_classes, label_files=label_files, set_choice=set_choice)
    if len(judges) != 1 or panels or gate_name is not None:  # several judges, side by side
        from metaeval.cli.judge_audit_many_command import audit_several

        audit_several(request, judges, panels, gate_name, config, fmt, {
            "--write": write, "--calibration": calibration_path, "--html": html_path,
            "--summary": summary_path, "--write-probes": write_probes})
        return
    bar = ProgressBar("asking the judge") if sys.stderr.isatty() else None
    try:
        result = judge_audit(request, config, bar, lambda note: echo(note, err=True))
    finally:
        if bar is not None:
            bar.close()
    audit = result.audit
    echo(audit_json(audit) if fmt == "json" else audit_text(audit))
    if write:
        target, written = record_calibration(result, calibration_path,
                                             datetime.now(UTC).date())
        if written:
            echo(f"calibration: entry added to {target}", err=True)
        else:
            why = ("bad input lines were left out" if audit.errors else
                   "tuned after a held-out read" if audit.measured is not None
                   and audit.measured.tuned_after_read else audit.verdict.value)
            echo(f"calibration: nothing written ({why})", err=True)
    for error in audit.errors:  # shown in the report too; the input still needs fixing
        echo(f"error: {error}", err=True)
    from metaeval.report.audit_summary import judge_audit_summary
    from metaeval.report.summary import append_summary

    def write_html(path: Path) -> None:
        from metaeval.report.audit_html import judge_audit_html

        write_atomic(path, judge_audit_html(audit), follow_links=True)

    outputs_then_exit(result.code, [(html_path, write_html),
        (summary_path, lambda p: append_summary(p, judge_audit_summary(audit)))])


# --- gate ------------------------------------------------------------------------------


@main.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--calibration", "calibration_path", type=click.Path(path_type=Path),
              help="Calibration file; default meta_sets/judge/calibration.json.")
@SUMMARY
@FORMAT
@user_errors
def gate(results: tuple[Path, ...], calibration_path: Path | None,
         summary_path: Path | None, fmt: str) -> None:
    """Hold result files (meta-eval, judge-audit, mutate; --format json) to the bars in
    [tool.metaeval.gate]. A missing metric fails; a judge metric is enforced only for a
    judge whose identity has a calibration entry. Exit 1 on any failure."""
    from metaeval.commands.gate import gate as run_gate
    from metaeval.commands.gate import gate_code
    from metaeval.report.gate_render import gate_json, gate_table

    refuse_inputs_as_outputs([("--summary", summary_path)],
                             [*(("RESULTS", r, "*") for r in results),
                              ("--calibration", calibration_path, "")])
    decided = run_gate(results, calibration_path, load_config())
    echo(gate_json(decided) if fmt == "json" else gate_table(decided))
    from metaeval.report.summary import append_summary, gate_summary

    outputs_then_exit(gate_code(decided), [
        (summary_path, lambda p: append_summary(p, gate_summary(decided)))])


# --- init ------------------------------------------------------------------------------


@main.command()
@click.option("--force", is_flag=True, help="Overwrite scaffold files that already exist.")
@click.option("--path", "root", type=click.Path(path_type=Path), default=Path("."),
              show_default=True, help="The repository to scaffold.")
@click.option("--package", default=None, metavar="NAME",
              help="Import name of your package, the mutate target [default: found from "
                   "pyproject.toml, else the src/ or top-level layout].")
@init_shards
@user_errors
def init(force: bool, root: Path, package: str | None, shards: int | None) -> None:
    """Scaffold mutants/, meta_sets/, a grader test, [tool.metaeval] and a CI workflow.

    Idempotent: an existing file is kept unless --force; pyproject.toml is only
    appended to, and only when it has no [tool.metaeval] yet.
    """
    from metaeval.init.scaffolding import scaffold

    done = scaffold(root, force=force, package=package, shards=shards)
    for step in done.steps:
        echo(f"{step.action.value:<11} {step.path}")
    for note in done.notes:
        echo(note, err=True)
