"""Readers of foreign formats: one module per format, each with a documented field
mapping (source field -> metaeval field) in its docstring and in the docs.

The modules here read published judge logs (docs/judge-own.md): each turns a log
as its tool wrote it into judge items (``"label": null``: the logs carry no human
label) and recorded verdicts in the positional form, so orders, codes and scales
are mapped here, never by hand. ``runs/`` reads agent runs (eval logs, message
logs, span exports) into meta-set lines (docs/import/). A record that cannot be
mapped is an error naming it; an importer never guesses, and never calls or
imports code named in the data it reads.
"""

from __future__ import annotations

from pathlib import Path

from metaeval.errors import InputError
from metaeval.importers import alpaca_eval, arena_hard, mt_bench
from metaeval.importers.common import JudgeLogFormat, LogOptions, file_head

__all__ = ["JUDGE_FORMATS", "JUDGE_HEAD", "JudgeLogFormat", "LogOptions", "picked_judge_format"]

JUDGE_FORMATS: dict[str, JudgeLogFormat] = {f.name: f for f in (
    mt_bench.PAIR,
    mt_bench.SINGLE,
    arena_hard.FORMAT,
    alpaca_eval.FORMAT,
)}
"""Every published judge-log format, by its ``judge-import`` name: the command line
builds one command a format from it (``codes`` and ``annotations`` take options of
their own, and stay written out)."""

JUDGE_HEAD = 1 << 20
"""How many bytes of a log ``picked_judge_format`` reads: a judge log's first record
holds whole prompts and judgments (18 KB a line in FastChat's), so more than a run
format's head."""


def picked_judge_format(path: Path) -> JudgeLogFormat:
    """The one judge-log format that claims ``path`` by its first record's keys; an
    ``InputError`` naming the file when none does, or several do (name it instead)."""
    head = file_head(path, JUDGE_HEAD)
    claims = [unit.name for unit in JUDGE_FORMATS.values() if unit.sniff(head, path)]
    if len(claims) == 1:
        return JUDGE_FORMATS[claims[0]]
    found = (f"{' and '.join(claims)} all read it" if claims else
             "no judge-log format recognises its first record")
    raise InputError(f"judge-import auto: {path}: {found}; expected a log of one of "
                     f"{', '.join(sorted(JUDGE_FORMATS))} (name the format instead of auto)")
