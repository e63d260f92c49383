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
