"""``metaeval import FORMAT PATH... -o runs.jsonl``: a harness's runs as a meta-set file.

Kept apart from ``app.py`` so that it stays small; registered there with one line.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from metaeval.cli.options import FORMAT, echo, refuse_inputs_as_outputs, user_errors
from metaeval.commands.import_runs import ImportRequest, import_code, import_runs
from metaeval.files import write_atomic
from metaeval.importers.runs import FORMATS
from metaeval.report.import_runs_render import import_json, import_text, runs_jsonl


@click.command("import")
@click.argument("source_format", metavar="FORMAT", type=click.Choice(sorted(FORMATS)))
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The meta-set file to write (JSON Lines, one run a line).")
@click.option("--label-from", metavar="SCORER", default=None,
              help="Make the harness's score SCORER each run's label (inspect: C/I, "
                   "true/false, 1/0); without it the runs are unlabelled.")
@FORMAT
@user_errors
def import_runs_command(source_format: str, paths: tuple[Path, ...], output: Path,
                        label_from: str | None, fmt: str) -> None:
    """Read FORMAT files (inspect: inspect_ai eval logs, .eval or .json; anthropic:
    logged Messages API requests, JSON Lines; otel: OTLP JSON span exports) and
    write their runs as meta-set lines.

    Exit 0 when every record became a run; 2 when one is bad (it is named, and
    the good runs are still written) or none was read.
    """
    refuse_inputs_as_outputs([("--output", output)],
                             [("PATH", path, "*") for path in paths])
    result = import_runs(ImportRequest(source_format, paths, label_from))
    if result.lines:
        write_atomic(output, runs_jsonl(result), follow_links=True)
    render = import_json if fmt == "json" else import_text
    echo(render(result, str(output) if result.lines else None))
    sys.exit(import_code(result))
