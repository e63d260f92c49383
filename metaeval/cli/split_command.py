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
@click.option("--held-out", "held_out", type=float, default=0.2, show_default=True,
              help="The share of each stratum (category and label) held out.")
@click.option("--seed", type=click.IntRange(min=0), default=42, show_default=True,
              help="The seed of the draw: the same seed gives the same sets anywhere.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="The split file [default: ITEMS.split.json beside the one file given].")
@FORMAT
@user_errors
def split_command(paths: tuple[Path, ...], held_out: float, seed: int, output: Path | None,
                  fmt: str) -> None:
    """Draw the golden and held-out sets of labelled judge items (.ndjson) or meta-set
    runs (.jsonl) once, stratified by category and label, and write the split file.

    Exit 0 when written; 2 on bad input (a bad line, a split that exists).
    """
    from metaeval.commands.split import split

    done = split(paths, load_config(), held_out=held_out, seed=seed, output=output)
    if fmt == "json":
        echo(json.dumps({"split": str(done.path), "golden": len(done.split.golden),
                         "held_out": len(done.split.held_out), "strata": done.strata,
                         "unlabelled": done.unlabelled, "seed": seed,
                         "held_out_fraction": held_out}, indent=2, sort_keys=True))
    else:
        total = len(done.split.golden) + len(done.split.held_out)
        echo(f"{total} labelled: {len(done.split.golden)} golden, {len(done.split.held_out)} "
             f"held out ({done.strata} strata of category and label; seed {seed}) -> "
             f"{done.path}" + (f"; {done.unlabelled} unlabelled, not split"
                               if done.unlabelled else ""))
    sys.exit(ExitCode.OK)
