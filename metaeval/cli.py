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
    """Check meta-set files (default: the configured meta-sets); name every bad line.

    Exit 0 when every line loads, 2 when any line (or file) is bad.
    """
    config = load_config()
    targets = list(paths) or config.paths(config.meta_sets)
    result = load_meta_sets(targets)
    click.echo(validation_json(result) if fmt == "json" else validation_text(result))
    sys.exit(ExitCode.BAD_INPUT if result.errors else ExitCode.OK)
