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
    """A ``MutateResult`` rendered: the files it asked for written, and what that
    added. Shown in order: ``before``, the run's table (when ``run`` is set),
    ``after``, ``write_errors``; then ``findings_error`` if any, else ``code``.
    The result's own values are read from it, not copied."""

    result: MutateResult
    code: ExitCode
    """The result's, or 2 when a file could not be written (a void run keeps its 3)."""
    report: Path | None = None
    """The mutation-testing report written, relative to the current directory
    when it lies under it (as it is shown); None when it could not be written."""
    after: tuple[Message, ...] = ()
    """The result's lines after the table, then the survivors against the findings
    file and the files written."""
    write_errors: tuple[OutputError, ...] = ()
    """The result's files that could not be written (findings file, shard manifest,
    timings), then the report, HTML and SARIF files (exit code 2); shown after
    the table, which they never hold back."""

    @property
    def root(self) -> Path:
        return self.result.root

    @property
    def before(self) -> tuple[Message, ...]:
        """The plan's notes."""
        return self.result.before

    @property
    def run(self) -> MutationRun | None:
        """``None`` when nothing ran: nothing to mutate, or the run proved nothing."""
        return self.result.run

    @property
    def comparison(self) -> Comparison | None:
        """The survivors against the findings file, when they were tracked."""
        return None if self.result.tracked is None else self.result.tracked.comparison

    @property
    def findings_error(self) -> InputError | None:
        """The findings file could not be read. The run and its report stand, so the
        table is still shown before this error."""
        return self.result.findings_error


def _own(path: Path, root: Path) -> bool:
    """Whether ``path`` is in metaeval's own directory, ``.metaeval/``, where a
    symbolic link is never written through (the report's default lives there)."""
    return path.absolute().is_relative_to(root.absolute() / ".metaeval")


def finish(result: MutateResult, *, html: Path | None = None) -> MutateOutcome:
    """Write the report and SARIF files of ``result`` and say what it found; ``html``:
    the report as a page too, the standard viewer inlined (``--html``)."""
    if result.run is None:
        return MutateOutcome(result, result.code, after=result.after,
                             write_errors=result.write_errors)
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
    return MutateOutcome(result, code, report, tuple(after), tuple(failed))
