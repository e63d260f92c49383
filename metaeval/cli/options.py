"""Parts shared by the commands of the command line: common options, the
handling of a user's mistake, a checked number type, the progress bar, and the
files written after the results are shown. Knows about click; nothing else does
but ``metaeval.cli``."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from enum import Enum
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NoReturn, ParamSpec, TypeVar

import click

from metaeval.errors import ExitCode, InputError, OutputError
from metaeval.files import check_output
from metaeval.mutation.isolation.options import Executor
from metaeval.mutation.limits import Range
from metaeval.report.escape import defuse

P = ParamSpec("P")
R = TypeVar("R")
E = TypeVar("E", bound=Enum)

FORMAT = click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
                      show_default=True, help="Table for people, stable JSON for machines.")


SUMMARY = click.option("--summary", "summary_path", default=None,
                       type=click.Path(path_type=Path, dir_okay=False),
                       help="Append a short Markdown summary here, e.g. "
                            "\"$GITHUB_STEP_SUMMARY\" for the checks page.")


Write = tuple[Path | None, Callable[[Path], None]]


def echo(text: str, *, err: bool = False) -> None:
    """Print ``text`` on stdout (or stderr) as ``escape.defuse`` leaves it: no line a
    CI runner would run as a workflow command, no control character but the line
    break. Every line the command line prints goes through here; the renderers have
    escaped each field from data already, so none can start a line of its own."""
    click.echo(defuse(text), err=err)


def outputs_then_exit(code: ExitCode, writes: Sequence[Write],
                      earlier: Sequence[OutputError] = ()) -> NoReturn:
    """Write each requested file (its path set) after the results were shown; one line
    per file that cannot be written, and exit 2 then (a void run keeps its 3)."""
    failed = list(earlier)
    for path, write in writes:
        if path is None:
            continue
        try:
            write(path)
        except OutputError as e:
            failed.append(e)
    for error in failed:
        echo(f"error: {error}", err=True)
    if failed and code is not ExitCode.VOID:
        code = ExitCode.BAD_INPUT
    sys.exit(code)


Input = tuple[str, Path | None, str]
"""A command's input: its flag, its path (None: not given), and for a directory
the pattern of the files the command reads in it (``*.ndjson``)."""


def refuse_inputs_as_outputs(outputs: Sequence[tuple[str, Path | None]],
                             inputs: Sequence[Input]) -> None:
    """An ``InputError`` when an output already exists as one of the inputs (the same
    file, through a link or a hard link alike, or a file the command reads in an
    input directory): ``--write-probes items.ndjson`` would replace the labelled
    items with the probes made from them; or when two outputs name one file. Each
    output is checked as its write will be (``files.check_output``: a folder, a
    fifo, a link inside the repository is an ``OutputError``). Checked before any
    work starts, so nothing is written when one output cannot be."""
    read: dict[tuple[int, int], str] = {}
    for flag, path, pattern in inputs:
        if path is None:
            continue
        for file in (sorted(path.rglob(pattern)) if path.is_dir() else [path]):
            try:
                info = os.stat(file)
            except OSError:
                continue  # a missing input is the loader's to say
            read.setdefault((info.st_dev, info.st_ino), flag)
    written: dict[str, str] = {}
    for flag, path in outputs:
        if path is None:
            continue
        # Two outputs on one file: the second would replace the first (exit 0).
        where = os.path.realpath(path)
        if where in written:
            raise InputError(f"{flag} {path}: is also the output of {written[where]}; "
                             "expected a file of its own for each output")
        written[where] = flag
        check_output(path)
        try:
            info = os.stat(path)
        except OSError:
            continue  # not there yet: nothing of the inputs' to lose
        source = read.get((info.st_dev, info.st_ino))
        if source is not None:
            raise InputError(f"{flag} {path}: is also an input ({source}); refusing to "
                             "overwrite it")


def user_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn an InputError, or a file that cannot be written, into its message and
    exit code 2."""

    @wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except (InputError, OutputError) as e:
            echo(f"error: {e}", err=True)
            sys.exit(ExitCode.BAD_INPUT)

    return run


if TYPE_CHECKING:
    _FloatParam = click.ParamType[float]
    _CountParam = click.ParamType[int | None]
    _Choice = click.Choice[Any]
else:  # generic only from click 8.2 on; the project allows 8.1
    _FloatParam = _CountParam = click.ParamType
    _Choice = click.Choice


class EnumChoice(_Choice, Generic[E]):
    """One of an enum's values, handed to the command as the member: the choices are
    the enum's own, never a list that repeats them (and drifts when one is added)."""

    def __init__(self, kind: type[E]) -> None:
        super().__init__([member.value for member in kind])
        self.kind = kind

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> E:
        if isinstance(value, self.kind):  # a default given as the member
            return value
        return self.kind(super().convert(value, param, ctx))


class InRange(_FloatParam):
    """A finite number within a ``limits.Range``: click's FloatRange lets nan and inf by."""

    name = "number"

    def __init__(self, limits: Range) -> None:
        self.limits = limits

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            number = math.nan
        if not self.limits.holds(number):
            self.fail(f"got {value!r}; expected {self.limits.expected}", param, ctx)
        return number


class ShowCount(_CountParam):
    """``--show N`` or ``--show all``: how many survivors' diffs to print; None for all."""

    name = "N|all"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> int | None:
        if value is None or isinstance(value, int):
            return value
        text = str(value).strip()
        if text == "all":
            return None
        if text.isdigit() and len(text) <= 9:
            return int(text)
        self.fail(f"got {value!r}; expected a count of 0 or more, or 'all'", param, ctx)


class ProgressBar:
    """A click progress bar on stderr, fed (done, total) by the library."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: click._termui_impl.ProgressBar[int] | None = None
        self.done = 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def _shard(ctx: click.Context, param: click.Parameter, value: str | None
           ) -> tuple[int, int] | None:
    from metaeval.mutation.run.shards import parse_shard

    if value is None:
        return None
    try:
        return parse_shard(value)
    except InputError as e:
        raise click.BadParameter(str(e).removeprefix("--shard: "), ctx, param) from None


def shard_options(command: Callable[P, R]) -> Callable[P, R]:
    """``metaeval mutate``'s options for shards: ``--shard``, ``--shard-out``,
    ``--timings``, ``--write-timings``, ``--merge``, and the shared baseline's
    ``--trace-only``, ``--write-coverage`` and ``--coverage``."""
    file = click.Path(path_type=Path, dir_okay=False)
    for option in reversed([
        click.option("--shard", "shard", metavar="K/N", default=None, callback=_shard,
                     help="Run only the K-th of N shares of the mutants, balanced by "
                          "time; every shard plans the same mutants."),
        click.option("--shard-out", "shard_out", type=click.Path(path_type=Path,
                                                                 file_okay=False),
                     default=None, help="Directory for the shard's manifest, "
                                        "shard-K-of-N.json (default: the report's)."),
        click.option("--timings", "timings_path", type=file, default=None,
                     help="JSON of mutant id to seconds that --shard balances by "
                          "(default: a stable hash of the ids)."),
        click.option("--write-timings", "write_timings", type=file, default=None,
                     help="After a finished run, write each mutant's seconds here "
                          "(for --timings)."),
        click.option("--merge", "merge_dirs", multiple=True, default=(),
                     type=click.Path(path_type=Path),
                     help="Merge the shard manifests under DIR (repeatable) into one "
                          "run's outputs and exit code; runs no mutant."),
        click.option("--trace-only", is_flag=True,
                     help="Trace the baseline, run no mutant, and write the coverage map "
                          "to --write-coverage FILE, for the shards' --coverage."),
        click.option("--write-coverage", "write_coverage", type=file, default=None,
                     help="Where --trace-only writes the coverage map, with the plan's hash."),
        click.option("--coverage", "coverage_path", type=file, default=None,
                     help="Reuse this --trace-only coverage map instead of tracing the "
                          "suite (refused when traced for another plan)."),
    ]):
        command = option(command)
    return command


def executor_options(command: Callable[P, R]) -> Callable[P, R]:
    """``metaeval mutate``'s options for where the mutants run: ``--executor`` and
    ``--ray-address``."""
    for option in reversed([
        click.option("--executor", "executor", type=EnumChoice(Executor),
                     default=Executor.LOCAL.value, show_default=True,
                     help="Where the mutants run: this machine, or a Ray cluster in "
                          "small batches (pip install 'metaeval[ray]')."),
        click.option("--ray-address", "ray_address", metavar="ADDR", default=None,
                     help="With --executor ray: the cluster to join, host:port or "
                          "ray://host:port (default: start one here for the run)."),
    ]):
        command = option(command)
    return command


init_shards = click.option(
    "--shards", type=click.IntRange(2, 256), default=None, metavar="N",
    help="Write a workflow that splits mutation testing over N shards (2 to 256): a "
         "baseline job, an N-job matrix, and a merge job that gates.")
