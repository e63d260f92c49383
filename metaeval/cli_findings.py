"""``metaeval findings``: the tracked surviving mutants, read and written by the
user between runs (list, show, accept with a reason, diff, export)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from metaeval import vcs
from metaeval.cli_parts import FORMAT, echo, refuse_inputs_as_outputs, user_errors
from metaeval.config import load_config
from metaeval.errors import ExitCode, InputError, OutputError
from metaeval.files import write_atomic
from metaeval.findings import FindingStatus, accept, diff_findings, parse_date
from metaeval.findings import load as load_findings
from metaeval.findings import save as save_findings
from metaeval.report.escape import one_line
from metaeval.report.findings import (
    finding_text,
    findings_diff_text,
    findings_json,
    findings_table,
)
from metaeval.report.sarif import sarif

FINDINGS_FILE = click.option("--file", "findings_file", type=click.Path(path_type=Path),
                             default=None, help="The findings file [default: from config, "
                             "else mutants/findings.json].")


def _findings_path(findings_file: Path | None) -> Path:
    if findings_file is not None:
        return findings_file
    config = load_config()
    return config.root / config.findings


@click.group()
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
    echo(text)
    is_open = any(e.effective_status(today) is FindingStatus.OPEN for e in tracked.entries)
    sys.exit(ExitCode.FINDINGS if is_open else ExitCode.OK)


@findings.command("show")
@click.argument("ref")
@FINDINGS_FILE
@user_errors
def findings_show(ref: str, findings_file: Path | None) -> None:
    """One finding (by fingerprint, a unique prefix of one, or mutant id), with its diff."""
    tracked = load_findings(_findings_path(findings_file), missing_ok=False)
    echo(finding_text(tracked.find(ref), vcs.today()))


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
    echo(f"accepted {one_line(entry.fingerprint[:12])} ({one_line(entry.mutant_id)}){expiry}: "
         f"{one_line(entry.reason)}")


@findings.command("diff")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@user_errors
def findings_diff(old: Path, new: Path) -> None:
    """Compare two findings files. Exit 1 when NEW adds an open finding."""
    d = diff_findings(load_findings(old), load_findings(new, missing_ok=False))
    echo(findings_diff_text(d))
    added_open = any(e.status is FindingStatus.OPEN for e in d.added)
    sys.exit(ExitCode.FINDINGS if added_open else ExitCode.OK)


@findings.command("export")
@click.option("--sarif", "sarif_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the open findings as SARIF 2.1.0 here.")
@click.option("--html", "html_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Write every tracked finding as one HTML page that opens offline (the "
                   "mutation-testing-elements viewer; accepted ones show as Ignored).")
@FINDINGS_FILE
@user_errors
def findings_export(sarif_file: Path | None, html_file: Path | None,
                    findings_file: Path | None) -> None:
    """Export the open findings as SARIF 2.1.0 for code-scanning upload, and every
    tracked finding as an HTML report. At least one of --sarif and --html."""
    if sarif_file is None and html_file is None:
        raise InputError("findings export: nothing to write; give --sarif PATH, --html PATH "
                         "or both")
    path = _findings_path(findings_file)
    refuse_inputs_as_outputs([("--sarif", sarif_file), ("--html", html_file)],
                             [("--file", path, "")])
    tracked = load_findings(path)
    failed: list[OutputError] = []
    if sarif_file is not None:
        try:
            write_atomic(sarif_file, sarif(tracked, vcs.today()), follow_links=True)
            echo(f"wrote {sarif_file}")
        except OutputError as e:
            failed.append(e)
    if html_file is not None:
        from metaeval.report.mutation_html import findings_report, mutation_html

        report = findings_report(tracked, load_config().root, vcs.today(), str(path))
        try:
            write_atomic(html_file, mutation_html(report, "metaeval findings"),
                         follow_links=True)
            echo(f"wrote {html_file}")
        except OutputError as e:
            failed.append(e)
    if failed:  # each file that could be written was; say every one that was not
        for error in failed[:-1]:
            echo(f"error: {error}", err=True)
        raise failed[-1]
