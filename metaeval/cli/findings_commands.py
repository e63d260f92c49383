"""``metaeval findings``: the tracked surviving mutants, read and written by the
user between runs (list, show, accept with a reason, prune, diff, export). The
last run's survivors (``findings_file.LAST_RUN_FILE``) are listed, shown and accepted
beside the file's entries before ``--update-baseline`` records them."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from metaeval import vcs
from metaeval.cli.options import FORMAT, echo, refuse_inputs_as_outputs, user_errors
from metaeval.config import load_config
from metaeval.errors import ExitCode, InputError, OutputError
from metaeval.files import write_atomic
from metaeval.mutation.findings_file import (
    LAST_RUN_FILE,
    Findings,
    FindingStatus,
    FindingsView,
    accept_in,
    diff_findings,
    parse_date,
    with_last_run,
)
from metaeval.mutation.findings_file import load as load_findings
from metaeval.mutation.findings_file import save as save_findings
from metaeval.report.escape import one_line
from metaeval.report.findings_render import (
    finding_text,
    findings_diff_text,
    findings_json,
    findings_table,
    prune_text,
    view_notes,
)
from metaeval.report.sarif import sarif

FINDINGS_FILE = click.option("--file", "findings_file", type=click.Path(path_type=Path),
                             default=None, help="The findings file [default: from config, "
                             "else mutants/findings.json].")


def _findings_path(findings_file: Path | None, *, read_only: bool = True) -> Path:
    """The findings file: ``--file``, else the configured one. A ``--file`` that does not
    exist is refused where it is only read: without --file a missing default file is no
    findings yet, but a file named and not found is a mistake, not an empty list."""
    if findings_file is not None:
        if read_only and not findings_file.exists():
            raise InputError(f"--file: {findings_file}: no such findings file; expected an "
                             "existing file (without --file, a missing default file reads "
                             "as no findings)")
        return findings_file
    config = load_config()
    return _shown(config.root / config.findings)


def _shown(path: Path) -> Path:
    """``path`` relative to the current directory when it lies under it."""
    return path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path


def _view(path: Path, *, missing_ok: bool = True) -> FindingsView:
    """The findings file and the last run's survivors it does not hold yet. A last
    run's file that cannot be read is a warning: the findings file still stands."""
    tracked = load_findings(path, missing_ok=missing_ok)
    last_file = load_config().root / LAST_RUN_FILE
    try:
        last = load_findings(last_file)
    except InputError as e:
        echo(f"warning: {e}; the last run's survivors are left out", err=True)
        return FindingsView(tracked)
    return with_last_run(tracked, last)


@click.group()
def findings() -> None:
    """Tracked surviving mutants: list, show, accept with a reason, prune, diff, export."""


@findings.command("list")
@FINDINGS_FILE
@FORMAT
@user_errors
def findings_list(findings_file: Path | None, fmt: str) -> None:
    """Every tracked finding, and the last run's survivors not tracked yet. Exit 1
    when any is open (or accepted but expired)."""
    path = _findings_path(findings_file)
    view = _view(path)
    today = vcs.today()
    every, untracked = view.every, frozenset(e.fingerprint for e in view.untracked)
    if fmt == "json":
        echo(findings_json(every, today, untracked))
    else:
        echo(findings_table(every, today, untracked))
        for note in view_notes(view, path, _stale_count(view.tracked)):
            echo(note)
    is_open = any(e.effective_status(today) is FindingStatus.OPEN for e in every.entries)
    sys.exit(ExitCode.FINDINGS if is_open else ExitCode.OK)


def _stale_count(tracked: Findings) -> int | None:
    """How many tracked entries are stale; None, with a note, when the plan cannot be
    made (no targets configured, a bad target): the list stands without it."""
    if not tracked.entries:
        return 0
    from metaeval.commands.stale_findings import planned, stale_entries  # brings libcst

    try:
        return len(stale_entries(tracked, planned(load_config())))
    except InputError as e:
        echo(f"note: stale findings not counted: {e}", err=True)
        return None


@findings.command("show")
@click.argument("ref")
@FINDINGS_FILE
@user_errors
def findings_show(ref: str, findings_file: Path | None) -> None:
    """One finding (by fingerprint, a unique prefix of one, or mutant id), with its
    diff; the last run's survivors are found too, before the findings file holds them."""
    path = _findings_path(findings_file)
    view = _view(path)
    entry = view.find(ref)
    echo(finding_text(entry, vcs.today(), untracked=not view.is_tracked(entry),
                      findings_file=path))


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
    """Accept a finding with a reason, so it no longer fails a run; a survivor of the
    last run that the file does not hold yet is added to it, accepted."""
    path = _findings_path(findings_file, read_only=False)  # accept may start the file
    until = parse_date(until_text, "--until") if until_text else None
    tracked, entry = accept_in(_view(path), ref, reason, by or vcs.user_name(path.parent),
                               until)
    save_findings(tracked, path)
    expiry = f" until {entry.until}" if entry.until else ""
    echo(f"accepted {one_line(entry.fingerprint[:12])} ({one_line(entry.mutant_id)}){expiry}: "
         f"{one_line(entry.reason)}")


@findings.command("prune")
@click.argument("paths", nargs=-1)
@click.option("--write", is_flag=True,
              help="Remove the stale findings from the file (default: a dry run that "
                   "lists them).")
@FINDINGS_FILE
@user_errors
def findings_prune(paths: tuple[str, ...], write: bool, findings_file: Path | None) -> None:
    """List the findings whose file or function is no longer targeted (or whose mutant
    is no longer made), as 'metaeval mutate' would plan it now (PATHS, else the
    configured targets); --write removes them. Exit 1 when a dry run finds one."""
    from metaeval.commands.stale_findings import planned, pruned, stale_entries

    path = _findings_path(findings_file)
    tracked = load_findings(path, missing_ok=False)
    stale = stale_entries(tracked, planned(load_config(), paths))
    if write and stale:
        save_findings(pruned(tracked, stale), path)
    echo(prune_text(stale, path, written=write))
    sys.exit(ExitCode.FINDINGS if stale and not write else ExitCode.OK)


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
