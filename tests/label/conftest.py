"""Runs and items for the labelling page's tests, written as a team would have them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metaeval.contract import JsonObject
from tests.audit.airline import airline_run
from tests.builders import config_project

RUNS = 5
PAIRS = 5


def write_lines(path: Path, rows: list[JsonObject]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def pair(i: int) -> JsonObject:
    return {"id": f"pair-{i}", "prompt": f"How long is the return window? ({i})",
            "response_a": f"30 days from delivery ({i}).", "response_b": "No idea.",
            "label": None, "category": "returns"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with five runs (even ones call the forbidden tool) and five pairs."""
    write_lines(tmp_path / "runs.jsonl",
                [airline_run(t, 0, bad=t % 2 == 0, checks=True) for t in range(RUNS)])
    write_lines(tmp_path / "items.ndjson", [pair(i) for i in range(PAIRS)])
    config_project(tmp_path, "[tool.metaeval]\nmeta_sets = ['.']\n")
    return tmp_path
