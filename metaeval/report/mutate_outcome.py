"""What ``metaeval mutate`` writes and says after a run: the mutation-testing
report, the SARIF file, and the survivors against the findings file.

``finish`` takes the command's ``MutateResult`` and renders it into files and
lines: the report is written whenever a run finished (a void one too), the SARIF
file when asked for. A file that cannot be written never loses the run: it is in
``write_errors`` and the exit code is 2 (a void run keeps its 3). This module
never plans or runs a mutant (``commands.mutate`` does) and never prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from metaeval import vcs
from metaeval.commands.mutate_values import Message, MutateResult
from metaeval.errors import ExitCode, InputError, OutputError
from metaeval.files import write_atomic
from metaeval.mutation.findings_file import Comparison
from metaeval.mutation.run.runner import MutationRun
from metaeval.report.findings_render import comparison_text
from metaeval.report.mutation import mutation_report
from metaeval.report.mutation_html import mutation_html
from metaeval.report.sarif import sarif


@dataclass(frozen=True, slots=True)
class MutateOutcome:
    """What one request did. Shown in order: ``before``, the run's table (when
    ``run`` is set), ``after``, ``write_errors``; then ``findings_error`` if any,
    else ``code``."""

    code: ExitCode
    root: Path
    before: tuple[Message, ...]
    """The plan's notes."""
    run: MutationRun | None = None
    """``None`` when nothing ran: nothing to mutate, or the run proved nothing."""
    report: Path | None = None
    """The mutation-testing report written, relative to the current directory
    when it lies under it (as it is shown); None when it could not be written."""
    after: tuple[Message, ...] = ()
    """Lines after the table: why the run is void, or the survivors against the
    findings file and the files written."""
    comparison: Comparison | None = None
    """The survivors against the findings file, when they were tracked."""
    findings_error: InputError | None = None
    """The findings file could not be read. The run and its report stand, so the
    table is still shown before this error."""
    write_errors: tuple[OutputError, ...] = ()
    """The report, findings or SARIF files that could not be written (exit code 2);
    shown after the table, which they never hold back."""


def _own(path: Path, root: Path) -> bool:
    """Whether ``path`` is in metaeval's own directory, ``.metaeval/``, where a
    symbolic link is never written through (the report's default lives there)."""
    return path.absolute().is_relative_to(root.absolute() / ".metaeval")


def finish(result: MutateResult, *, html: Path | None = None) -> MutateOutcome:
    """Write the report and SARIF files of ``result`` and say what it found; ``html``:
    the report as a page too, the standard viewer inlined (``--html``)."""
    if result.run is None:
        return MutateOutcome(result.code, result.root, result.before, after=result.after)
    failed: list[OutputError] = []
    report = result.report_file
    document = mutation_report(result.run, result.root)
    if report is not None:
        try:
            write_atomic(report, json.dumps(document, indent=2) + "\n",
                         follow_links=not _own(report, result.root))
        except OutputError as e:
            failed.append(e)
            report = None
    after = list(result.after)
    if html is not None:
        try:
            write_atomic(html, mutation_html(document), follow_links=True)
            after.append(Message(f"report: HTML in {html}"))
        except OutputError as e:
            failed.append(e)
    if report is not None and report.is_relative_to(Path.cwd()):
        report = report.relative_to(Path.cwd())
    failed += result.write_errors
    tracked = result.tracked
    if tracked is not None:
        after.append(Message(comparison_text(tracked.comparison, tracked.findings_file,
                                             recorded=tracked.written)))
        if tracked.written:
            after.append(Message(f"findings: wrote {tracked.findings_file}"))
        if tracked.sarif is not None and result.sarif_path is not None:
            what = "new survivors" if tracked.new_only else "open survivors"
            try:
                write_atomic(result.sarif_path, sarif(tracked.sarif, vcs.today()),
                             follow_links=True)
                after.append(Message(f"findings: SARIF of the {what} in {result.sarif_path}"))
            except OutputError as e:
                failed.append(e)
    code = result.code
    if failed and code is not ExitCode.VOID:
        code = ExitCode.BAD_INPUT
    return MutateOutcome(code, result.root, result.before, result.run, report, tuple(after),
                         tracked.comparison if tracked is not None else None,
                         result.findings_error, tuple(failed))

