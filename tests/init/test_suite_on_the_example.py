"""A team declares a suite that applies to every run on init's example meta-set, with
runs labelled per check or overall only: the scaffolded grader test, meta-eval and
the bars agree, and are green at init's bars (issue 47). An overall fail does not
say which check failed, so it measures the evaluator, never the suite's check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main

SUITE = """
[[tool.metaeval.meta_eval.suite]]
name = "never_cancels"
grader = "no_tool_called"
params = { tool = "cancel_order" }
"""


def team(root: Path, *, overall_only: bool) -> Path:
    (root / "shop").mkdir()
    (root / "shop/__init__.py").write_text("")
    assert CliRunner().invoke(main, ["init", "--path", str(root), "--package", "shop"]
                              ).exit_code == 0
    with (root / "pyproject.toml").open("a") as f:
        f.write(SUITE)
    if overall_only:
        path = root / "meta_sets" / "example.jsonl"
        runs = [json.loads(line) for line in path.read_text().splitlines()]
        for run in runs:
            run["label"].pop("criteria")
        path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    return root


@pytest.mark.parametrize("overall_only", [False, True], ids=["per-check", "overall-only"])
def test_a_suite_on_every_run_keeps_init_green_and_says_what_measured_each_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overall_only: bool) -> None:
    root = team(tmp_path, overall_only=overall_only)
    monkeypatch.chdir(root)
    done = CliRunner().invoke(main, ["meta-eval", "--format", "json"],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    document = json.loads(done.output)
    rows = {c["name"]: c for c in document["checks"]}
    # The example's one overall pass measures the suite check; its three near misses,
    # labelled fail overall, do not: none says the agent cancelled anything.
    assert rows["never_cancels"]["labels"] == {"own": 0, "overall_pass": 1,
                                               "not_measured": 3}
    assert rows["never_cancels"]["n"] == 1
    own = 0 if overall_only else 4
    assert rows["refund_issued"]["labels"] == {
        "own": own, "overall_pass": 1 if overall_only else 0,
        "not_measured": 3 if overall_only else 0}
    assert document["evaluator"]["n"] == 4 and document["evaluator"]["labels"] is None
    table = CliRunner().invoke(main, ["meta-eval"], catch_exceptions=False).output
    assert "never_cancels" in table and "0/1/3" in table
    assert "TNR bar 0.800 not checked: no human-fail case" in table
    assert table.rstrip().splitlines()[-1].startswith("OK:")
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "tests"], cwd=root, capture_output=True, text=True, timeout=120)
    assert tests.returncode == 0, tests.stdout + tests.stderr


def test_a_near_miss_labelled_per_check_still_fails_the_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The mirror: a person who says the suite check failed on a run where it passed
    # makes a false positive that the bars catch.
    root = team(tmp_path, overall_only=False)
    path = root / "meta_sets" / "example.jsonl"
    runs = [json.loads(line) for line in path.read_text().splitlines()]
    runs[1]["label"]["criteria"]["never_cancels"] = "fail"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    monkeypatch.chdir(root)
    done = CliRunner().invoke(main, ["meta-eval", "--format", "json"], catch_exceptions=False)
    assert done.exit_code == 1, done.output
    row = {c["name"]: c for c in json.loads(done.output)["checks"]}["never_cancels"]
    assert (row["fp"], row["labels"]["own"]) == (1, 1)
    assert "BELOW-MIN-TNR" in row["flags"]
