"""Agent runs in the formats harnesses write, read into meta-set lines: the registry.

One module per format, each holding one ``RunFormat`` (``FORMAT``): its name, what
it reads, which files it claims (``sniff``), its mapping page under docs/ and its
reader. ``FORMATS`` lists them; the command line (``import``, ``import auto``,
``--runs FORMAT:PATH``), ``validate`` and the docs' index are read from it, so
adding a format is its module, its docs page and its tests, and one line here.
No module here imports a format's library until a file of that format is read.
"""

from __future__ import annotations

from pathlib import Path

from metaeval.errors import InputError
from metaeval.importers.common import file_head
from metaeval.importers.runs import (
    anthropic,
    inspect_log,
    langfuse,
    langsmith,
    mlflow_traces,
    openai_agents,
    openinference,
    otel,
)
from metaeval.importers.runs.common import ImportedRun, Reader, RunFormat

__all__ = ["FORMATS", "HEAD", "ImportedRun", "Reader", "RunFormat", "reader", "run_format",
           "sniffed"]

FORMATS: dict[str, RunFormat] = {f.name: f for f in (
    inspect_log.FORMAT,
    anthropic.FORMAT,
    otel.FORMAT,
    openai_agents.FORMAT,
    openinference.FORMAT,
    langsmith.FORMAT,
    langfuse.FORMAT,
    mlflow_traces.FORMAT,
)}
"""Every run format, by its name on the command line."""

HEAD = 65536
"""How many bytes of a file ``sniffed`` reads to tell its format."""


def run_format(name: str) -> RunFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise InputError(f"format: got {name!r}; expected one of "
                         f"{', '.join(sorted(FORMATS))}") from None


def reader(name: str) -> tuple[Reader, tuple[str, ...]]:
    """The reader of the format ``name`` and the suffixes a directory expands to."""
    unit = run_format(name)
    return unit.read, unit.suffixes


def sniffed(path: Path) -> list[RunFormat]:
    """The formats that claim ``path`` by its first bytes (none, one, or, for a file
    two formats could read, several: the caller names them and asks for one)."""
    head = file_head(path, HEAD)
    return [unit for unit in FORMATS.values() if unit.sniff(head, path)]
