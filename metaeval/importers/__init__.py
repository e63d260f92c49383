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

from metaeval.importers import alpaca_eval, arena_hard, mt_bench
from metaeval.importers.common import JudgeLogFormat, LogOptions

__all__ = ["JUDGE_FORMATS", "JudgeLogFormat", "LogOptions"]

JUDGE_FORMATS: dict[str, JudgeLogFormat] = {f.name: f for f in (
    mt_bench.PAIR,
    mt_bench.SINGLE,
    arena_hard.FORMAT,
    alpaca_eval.FORMAT,
)}
"""Every published judge-log format, by its ``judge-import`` name: the command line
builds one command a format from it (``codes`` and ``annotations`` take options of
their own, and stay written out)."""
