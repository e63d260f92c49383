"""The ``metaeval`` command line: parse, call the library, render. Nothing else.

A user's mistake ends as exit code 2 with a message, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import ParamSpec, TypeVar

import click

from metaeval import __version__
from metaeval.config import load_config
from metaeval.errors import ExitCode, InputError
from metaeval.judge_items import ITEM_SUFFIX, with_judge_items
from metaeval.meta_set import load_meta_sets
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
    audit = run_judge_audit(spec, load_items(paths), recorded=recorded, samples=samples,
                            cache=cache, bars=bars)
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
