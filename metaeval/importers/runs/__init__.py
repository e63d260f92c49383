"""Agent runs in the formats harnesses write, read into meta-set lines.

One module per format, each with a mapping page under docs/: ``inspect``
(inspect_ai eval logs, through inspect_ai's own reader, the ``metaeval[inspect]``
extra), ``anthropic`` (logged Anthropic Messages requests), ``otel``
(OpenTelemetry GenAI spans, an OTLP JSON export). ``reader`` names the function
that reads a format; this package never imports a format's library until a
file of that format is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from metaeval.errors import InputError
from metaeval.importers.runs.common import ImportedRun
from metaeval.untrusted_json import LoadError

__all__ = ["FORMATS", "Reader", "reader"]

Reader = Callable[[Iterable[Path], list[LoadError]], Iterator[ImportedRun]]
"""Reads every file given; each bad record one ``LoadError``, the good runs yielded."""


def _inspect(paths: Iterable[Path], errors: list[LoadError]) -> Iterator[ImportedRun]:
    from metaeval.importers.runs.inspect_log import read_inspect

    return read_inspect(paths, errors)


def _anthropic(paths: Iterable[Path], errors: list[LoadError]) -> Iterator[ImportedRun]:
    from metaeval.importers.runs.anthropic import read_anthropic

    return read_anthropic(paths, errors)


def _otel(paths: Iterable[Path], errors: list[LoadError]) -> Iterator[ImportedRun]:
    from metaeval.importers.runs.otel import read_otel

    return read_otel(paths, errors)


FORMATS: dict[str, tuple[Reader, tuple[str, ...]]] = {
    "inspect": (_inspect, (".eval", ".json")),
    "anthropic": (_anthropic, (".jsonl",)),
    "otel": (_otel, (".jsonl", ".json")),
}
"""Each format's reader and the file suffixes a directory given for it expands to."""


def reader(name: str) -> tuple[Reader, tuple[str, ...]]:
    try:
        return FORMATS[name]
    except KeyError:
        raise InputError(f"format: got {name!r}; expected one of "
                         f"{', '.join(sorted(FORMATS))}") from None
