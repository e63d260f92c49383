"""``metaeval meta-eval --set``: the runs of the split's golden or held-out set are the
ones measured (the count is read from the split file here, not from the result), every
report names the set, and a run the split does not name is said, not measured."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main

SOURCE = Path(__file__).parents[2] / "meta_sets" / "support_near_misses.jsonl"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n")
    shutil.copy(SOURCE, tmp_path / "runs.jsonl")
    assert _run("split", "runs.jsonl", "--held-out", "0.3").exit_code == 0
    return tmp_path / "runs.jsonl"


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _sets(runs: Path) -> tuple[set[str], set[str]]:
    data = json.loads(runs.with_name("runs.split.json").read_text())
    return set(data["golden"]), set(data["held_out"])


def test_every_report_measures_and_names_the_set(runs: Path) -> None:
    golden, held = _sets(runs)
    assert golden and held
    for name, ids in (("golden", golden), ("held-out", held)):
        done = _run("meta-eval", "runs.jsonl", "--set", name, "--format", "json",
                    "--html", "page.html", "--summary", "summary.md")
        document = json.loads(done.stdout)
        assert document["evaluator"]["n"] == len(ids), name
        assert document["set"]["name"] == name and document["set"]["measured"] == len(ids)
        said = f"set: {name} ({len(ids)} of its {len(ids)} runs found"
        assert said in (runs.parent / "page.html").read_text()
        assert said in (runs.parent / "summary.md").read_text()
        assert said in _run("meta-eval", "runs.jsonl", "--set", name).stdout
    default = json.loads(_run("meta-eval", "runs.jsonl", "--format", "json").stdout)
    assert default["set"]["name"] == "golden" and default["evaluator"]["n"] == len(golden)
    every = json.loads(_run("meta-eval", "runs.jsonl", "--set", "all", "--format",
                            "json").stdout)
    assert every["evaluator"]["n"] == len(golden) + len(held)
    # The held-out set of a meta-eval is no judge's read: no ledger is kept for it.
    assert not runs.with_name("runs.ledger.jsonl").exists()


def test_a_run_the_split_does_not_name_is_said_and_left_out(runs: Path) -> None:
    golden, _ = _sets(runs)
    first = json.loads(runs.read_text().splitlines()[0])
    first["id"] = "labelled-since"
    with runs.open("a") as f:
        f.write(json.dumps(first) + "\n")
    document = json.loads(_run("meta-eval", "runs.jsonl", "--format", "json").stdout)
    assert document["set"]["not_in_split"] == {"count": 1, "ids": ["labelled-since"]}
    assert document["evaluator"]["n"] == len(golden)
    assert "1 labelled run(s) not in the split, left out" in _run("meta-eval",
                                                                  "runs.jsonl").stdout


def test_no_split_measures_all_and_says_so(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n")
    shutil.copy(SOURCE, tmp_path / "runs.jsonl")
    done = _run("meta-eval", "runs.jsonl")
    assert "set: all (every run in the files; no split file" in done.stdout
    refused = _run("meta-eval", "runs.jsonl", "--set", "golden")
    assert refused.exit_code == 2 and "no split file beside the items" in refused.output
