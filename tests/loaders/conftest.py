"""What the loaders' tests share: a labels CSV written as a team keeps one, and
``metaeval meta-eval`` run in a project as the command line runs it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main


def write_csv(path: Path, rows: list[dict[str, str]]) -> None:
    """A labels file: one row per run, check and annotator, with a rationale column."""
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["run_id", "check", "label", "annotator",
                                               "rationale"])
        writer.writeheader()
        writer.writerows(rows)


def meta_eval(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    """``metaeval meta-eval ARGS`` in ``root``, exceptions left to fail the test."""
    monkeypatch.chdir(root)
    return CliRunner().invoke(main, ["meta-eval", *args], catch_exceptions=False)
