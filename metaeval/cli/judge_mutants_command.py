"""``metaeval judge-mutants``: its flags (judge-audit's, plus ``--operators`` and
``--max-calls``), the cost said before a live judge is asked, the result rendered.
Apart from ``app.py`` so that it stays small."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from metaeval.cli.options import (
    FORMAT,
    SUMMARY,
    echo,
    outputs_then_exit,
    refuse_inputs_as_outputs,
    user_errors,
)
from metaeval.config import load_config


@click.command("judge-mutants")
@click.option("--judge", "spec", required=True,
              help="A name under [tool.metaeval.judges] (live), or with --recorded the "
              "name of the log's judge.")
@click.option("--items", "items_paths", multiple=True, type=click.Path(path_type=Path),
              help="Judge-item files or folders (*.ndjson); default: <meta_sets>/judge/.")
@click.option("--recorded", multiple=True, type=click.Path(path_type=Path),
              help="Recorded verdicts (JSONL, with 'raw'); reply-rule and decision mutants "
              "re-read them, no call is made. Repeatable.")
@click.option("--reply", "reply", metavar="RULE",
              help="With --recorded: the rule the raw replies are read by (json, bare, "
              "mt-bench, arena, or a pattern); the rule the reply mutants break.")
@click.option("--scale", "scale_text", metavar="LOW-HIGH",
              help="With --recorded: the scale of the recorded scores (default 1-5).")
@click.option("--pass-at", type=int,
              help="With --recorded: the lowest passing score (default: the top quarter).")
@click.option("--samples", type=int,
              help="Live: ask each question K times [default: 1]; decision mutants on "
              "samples need K >= 2.")
@click.option("--labels", "label_files", multiple=True,
              type=click.Path(path_type=Path, dir_okay=False),
              help="A labels file (JSONL rows item_id, label, annotator): more labels.")
@click.option("--label-scale", "label_scale_text", metavar="LOW-HIGH",
              help="Range of the items' integer labels (default 1-5).")
@click.option("--label-pass-at", type=int, help="Lowest integer label that is a human pass.")
@click.option("--operators", "operators", default="", metavar="NAME,...",
              help="Only these judge operators (comma-separated); default: all.")
@click.option("--max-calls", "max_calls", type=int, default=None,
              help="Most calls template mutants and the judge may make [default: 200]; a "
              "run that would make more is refused before any call.")
@click.option("--cache", "cache_path", type=click.Path(path_type=Path),
              help="Reply cache (sqlite); default .metaeval/judge-cache.sqlite.")
@click.option("--no-cache", is_flag=True, help="Keep replies in memory only.")
@click.option("--findings", "findings_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Compare the survivors with this findings file: only a new survivor (or "
              "an expired acceptance) fails the run; accept with 'metaeval findings accept "
              "--file'.")
@click.option("--update-baseline", is_flag=True,
              help="Write the survivors into the --findings file (new ones open; killed "
              "ones dropped; decisions kept).")
@click.option("--sarif", "sarif_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the open survivors as SARIF 2.1.0.")
@SUMMARY
@FORMAT
@user_errors
def judge_mutants_command(spec: str, items_paths: tuple[Path, ...], recorded: tuple[Path, ...],
                          reply: str | None, scale_text: str | None, pass_at: int | None,
                          samples: int | None, label_files: tuple[Path, ...],
                          label_scale_text: str | None, label_pass_at: int | None,
                          operators: str, max_calls: int | None, cache_path: Path | None,
                          no_cache: bool, findings_path: Path | None, update_baseline: bool,
                          sarif_path: Path | None, summary_path: Path | None,
                          fmt: str) -> None:
    """Can your labels catch a broken judge? Make mutants of a judge (a rubric line
    dropped, a reply rule loosened, a pass mark moved), audit each against the same
    labels, and report each killed, survived or equivalent on these items.

    Exit 0 every mutant killed or equivalent; 1 one survived; 2 bad input (or over
    --max-calls); 3 nothing measured (the judge unreachable, no mutant made).
    """
    from metaeval.commands.judge_audit_values import JudgeAuditRequest
    from metaeval.commands.judge_mutants import (
        DEFAULT_MAX_CALLS,
        JudgeMutantsRequest,
        judge_mutants,
    )
    from metaeval.files import write_atomic
    from metaeval.report.judge_mutants_render import (
        mutants_json,
        mutants_summary,
        mutants_text,
    )
    from metaeval.report.sarif import sarif
    from metaeval.report.summary import append_summary

    names = tuple(n.strip() for n in operators.split(",") if n.strip())
    audit = JudgeAuditRequest(spec, items_paths, recorded, samples, scale_text, pass_at,
                              cache_path, no_cache, {}, label_scale_text, label_pass_at,
                              reply=reply, label_files=label_files)
    request = JudgeMutantsRequest(audit, names,
                                  DEFAULT_MAX_CALLS if max_calls is None else max_calls,
                                  findings_path, update_baseline)
    refuse_inputs_as_outputs(
        [("--sarif", sarif_path), ("--summary", summary_path)],
        [*(("--items", p, "*.ndjson") for p in items_paths),
         *(("--recorded", p, "*") for p in recorded),
         *(("--labels", p, "*") for p in label_files)])
    result = judge_mutants(request, load_config(), lambda note: echo(note, err=True))
    echo(mutants_json(result) if fmt == "json" else mutants_text(result))
    for error in result.judge.errors:
        echo(f"error: {error}", err=True)
    today = datetime.now(UTC).date()
    outputs_then_exit(result.code, [
        (sarif_path, lambda p: write_atomic(p, sarif(result.tracked, today),
                                            follow_links=True)),
        (summary_path, lambda p: append_summary(p, mutants_summary(result)))])
