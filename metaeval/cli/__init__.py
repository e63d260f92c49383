"""The ``metaeval`` command line: ``app`` holds the click group and the commands
that fit on a page; the others have a module each. Parse, call a command,
render; nothing else."""

from metaeval.cli.app import main as main
