"""A judge that cannot be reached is not a bad judge: an audit whose calls mostly
failed is void (exit 3) and names the cause, against a real loopback server that
has been stopped (connection refused)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main

from .conftest import serving

ITEMS = Path(__file__).resolve().parents[2] / "meta_sets" / "judge" / "position.ndjson"


def _configure(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.judges.house]\n"
        f'type = "http"\nbase_url = "{url}"\nmodel = "stub-model"\n'
        'retries = 0\nconcurrency = 2\nmodes = ["pairwise"]\n')
    shutil.copy(ITEMS, tmp_path / "position.ndjson")
    monkeypatch.chdir(tmp_path)
    return ["judge-audit", "--judge", "house", "--items", "position.ndjson", "--no-cache",
            "--probes", "files"]


def test_a_stopped_judge_server_voids_the_audit_and_names_the_refusal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with serving() as stopped:
        url = stopped.url
    # The block has ended: nothing listens on that port any more.
    args = _configure(tmp_path, url, monkeypatch)
    result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code == 3, result.output
    document = json.loads(result.stdout)
    assert document["verdict"] == "void"
    assert document["calls"]["failed"] > 0 and document["calls"]["made"] == document[
        "calls"]["failed"]
    cause = document["reasons"][0]
    assert cause.startswith("the judge could not be reached: ")
    assert f"{document['calls']['failed']} of {document['calls']['failed']} calls failed" in cause
    assert "refused" in cause.lower(), cause
    assert f"x{document['calls']['failed']}" in cause  # one distinct error, counted

    table = CliRunner().invoke(main, args)
    assert table.exit_code == 3
    assert "verdict: void" in table.output and "could not be reached" in table.output


def test_a_judge_that_answers_is_not_void(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with serving() as stub:
        stub.script = [(200, "A")]  # always the first shown: biased, but reached
        result = CliRunner().invoke(main, [*_configure(tmp_path, stub.url, monkeypatch),
                                           "--format", "json"])
    document = json.loads(result.stdout)
    assert result.exit_code == 1, result.output
    assert document["verdict"] == "report only"
    assert document["calls"]["failed"] == 0
    assert not any("could not be reached" in r for r in document["reasons"])
