"""``metaeval import FORMAT PATH... -o runs.jsonl``: a harness's runs as a meta-set file.

Kept apart from ``app.py`` so that it stays small; registered there with one line.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import click

from metaeval.cli.options import FORMAT, echo, refuse_inputs_as_outputs, user_errors
from metaeval.commands.import_runs import (
    AUTO,
    ImportRequest,
    ImportStream,
    import_code,
    picked_format,
)
from metaeval.files import write_atomic
from metaeval.importers.runs import FORMATS
from metaeval.report.import_runs_render import import_json, import_text, run_jsonl

# The formats as the help lists them: read from the registry, never written here.
_LISTED = "\n\n".join(f"{unit.name}: {unit.summary}"
                       + (f" (pip install 'metaeval[{unit.extra}]')" if unit.extra else "")
                       for unit in FORMATS.values())


@click.command("import", epilog=f"Formats:\n\n{_LISTED}\n\n{AUTO}: the one format whose "
               "files these are, picked by their first bytes (and named).")
@click.argument("source_format", metavar="FORMAT",
                type=click.Choice([*sorted(FORMATS), AUTO]))
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
    """Read FORMAT files (the formats are listed below; auto picks one by sniffing)
    and write their runs as meta-set lines.

    Exit 0 when every record became a run; 2 when one is bad (it is named, and
    the good runs are still written) or none was read.
    """
    refuse_inputs_as_outputs([("--output", output)],
                             [("PATH", path, "*") for path in paths])
    if source_format == AUTO:
        source_format = picked_format(paths)
        echo(f"format: {source_format} (picked by reading the files' first bytes)", err=True)
    from metaeval.config import load_config

    # The project's run map, as meta-eval --runs applies it: import then meta-eval
    # reads each run as --runs does.
    stream = ImportStream(ImportRequest(source_format, paths, label_from,
                                        load_config().meta_eval.run_map))
    # Each line written as it is read, so memory holds one run, not the file; the
    # file is written (atomically) only once there is a first line.
    lines = (run_jsonl(line) for line in stream.lines())
    first = next(lines, None)
    if first is not None:
        write_atomic(output, itertools.chain([first], lines), follow_links=True)
    result = stream.result()
    render = import_json if fmt == "json" else import_text
    echo(render(result, str(output) if result.runs else None))
    sys.exit(import_code(result))
