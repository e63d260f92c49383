"""A judge named in [tool.metaeval.judges], served by the loopback stub, audited twice."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main

from .conftest import Stub

ITEMS = Path(__file__).resolve().parents[2] / "meta_sets" / "judge" / "position.ndjson"


def test_configured_http_judge_is_audited_then_served_from_cache(
        stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stub.script = [(429, "busy"), (200, "A")]
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.judges.house]\n"
        f'type = "http"\nbase_url = "{stub.url}"\nmodel = "stub-model"\n'
        'api_key_env = "HOUSE_JUDGE_KEY"\nretries = 2\nbackoff = 0.001\nconcurrency = 3\n'
        'modes = ["pairwise"]\n')
    shutil.copy(ITEMS, tmp_path / "position.ndjson")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOUSE_JUDGE_KEY", "sk-never-written-anywhere")
    args = ["judge-audit", "--judge", "house", "--items", "position.ndjson", "--format", "json",
            "--probes", "files"]
    first = CliRunner().invoke(main, args)
    document = json.loads(first.stdout)
    # Always "A": the first shown wins, in both orders.
    assert document["position"]["headline"] == "FOUND — 12 of 12"
    assert document["calls"] == {"made": 24, "cached": 0, "failed": 0, "failures": []}
    assert len(stub.requests) == 25  # one 429, retried
    assert first.exit_code == 1
    second = json.loads(CliRunner().invoke(main, args).stdout)
    assert second["calls"] == {"made": 0, "cached": 24, "failed": 0, "failures": []}
    assert len(stub.requests) == 25
    assert second["position"] == document["position"]
    written = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert b"sk-never-written-anywhere" not in written
    assert "sk-never-written-anywhere" not in first.output
