"""``metaeval split``: the golden and held-out sets, drawn once. Registered from
``app.py``; parses the flags, calls ``commands.split``, prints one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from metaeval.cli.options import FORMAT, echo, user_errors
from metaeval.config import load_config
from metaeval.errors import ExitCode


@click.command("split")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--held-out", "held_out", type=float, default=None,
              help="The share of each stratum (category and label) held out [default: 0.2; "
              "with --redraw, the split's own].")
@click.option("--seed", type=click.IntRange(min=0), default=42, show_default=True,
              help="The seed of the draw: the same seed gives the same sets anywhere.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="The split file [default: ITEMS.split.json beside the one file given].")
@click.option("--labels", "labels", multiple=True,
              type=click.Path(path_type=Path, dir_okay=False),
              help="A labels file (JSONL rows item_id, label, annotator, as metaeval label "
              "writes) whose rows label the judge items (repeatable).")
@click.option("--redraw", is_flag=True,
              help="Draw a fresh held-out set from the items labelled since the last draw; "
              "the old held-out items join the golden set.")
@FORMAT
@user_errors
def split_command(paths: tuple[Path, ...], held_out: float | None, seed: int,
                  output: Path | None, labels: tuple[Path, ...], redraw: bool,
                  fmt: str) -> None:
    """Draw the golden and held-out sets of labelled judge items (.ndjson) or meta-set
    runs (.jsonl) once, stratified by category and label, and write the split file.

    Exit 0 when written; 2 on bad input (a bad line, a split that exists, nothing
    labelled since the last draw with --redraw).
    """
    from metaeval.commands.split import split

    if redraw and click.get_current_context().get_parameter_source("seed") is not (
            click.core.ParameterSource.DEFAULT):
        raise click.UsageError("--seed: a redraw keeps the split's own seed; drop --seed")
    done = split(paths, load_config(), held_out=held_out, seed=seed, output=output,
                 again=redraw, labels=labels)
    drawn = done.split
    if fmt == "json":
        echo(json.dumps({"split": str(done.path), "golden": len(drawn.golden),
                         "held_out": len(drawn.held_out), "strata": done.strata,
                         "unlabelled": done.unlabelled, "seed": drawn.seed,
                         "held_out_fraction": drawn.held_out_fraction, "draw": drawn.draw,
                         "labelled_since": done.new}, indent=2, sort_keys=True))
    else:
        total = len(drawn.golden) + len(drawn.held_out)
        since = ("" if done.new is None else
                 f"draw {drawn.draw}: {len(drawn.held_out)} of the {done.new} item(s) "
                 "labelled since the last draw held out, the old held-out set now golden; ")
        echo(f"{since}{total} labelled: {len(drawn.golden)} golden, {len(drawn.held_out)} "
             f"held out ({done.strata} strata of category and label; seed {drawn.seed}) -> "
             f"{done.path}" + (f"; {done.unlabelled} unlabelled, not split"
                               if done.unlabelled else ""))
    sys.exit(ExitCode.OK)
