"""Importers of published judge logs: one module per format, each with its mapping
table (source field -> metaeval field) in its docstring and in docs/judge-own.md.

Each turns a log as its tool wrote it into judge items (``"label": null``: the logs
carry no human label) and recorded verdicts in the positional form, so orders,
codes and scales are mapped here, never by hand. A record that cannot be mapped is
a file:line error, and nothing is written; an importer never guesses.
"""
