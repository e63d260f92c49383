"""Every input is used or refused (issue 45 items 3 and 6), on ``meta-eval``: a suite
selector that picks no run and a ``--by`` key no run holds are errors naming what the
runs hold instead; one source that fails to load is said once, and the label rows
that fail only because of it are one line, never listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.audit.airline import airline_project, is_bad
from tests.loaders.conftest import meta_eval, write_csv

TASKS, TRIALS = 5, 4


def labels(root: Path) -> None:
    write_csv(root / "labels.csv", [
        {"run_id": f"t{t:02d}-trial{k}", "check": "*",
         "label": "fail" if is_bad(t, k) else "pass", "annotator": "ann", "rationale": ""}
        for t in range(TASKS) for k in range(TRIALS)])


def suite(selector: str) -> str:
    return f"""
[[tool.metaeval.meta_eval.suite]]
name = "never_update_passengers"
grader = "no_tool_called"
params = {{ tool = "update_reservation_passengers" }}
{selector}
"""


@pytest.mark.parametrize(("selector", "said"), [
    # TOML nests an unquoted dotted key: {"model": {"size": "large"}}, which no run holds.
    ('metadata = { model.size = "large" }',
     "metadata 'model': no run holds {\"size\": \"large\"}"),
    ('metadata = { modle = "m-large" }', "did you mean 'model'?"),
    ('tasks = "hotel-*"', "tasks 'hotel-*' matches none of the 5 task ids"),
])
def test_a_suite_selector_that_picks_no_run_is_an_error_naming_what_runs_hold(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, selector: str, said: str) -> None:
    airline_project(tmp_path, TASKS, TRIALS, suite=suite(selector))
    labels(tmp_path)
    result = meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv")
    assert result.exit_code == 2, result.output
    assert "never_update_passengers" in result.output and "selects none of the 20 runs" \
        in result.output
    assert said in result.output
    assert "OK:" not in result.output


def test_a_suite_selector_that_picks_runs_is_used_the_mirror(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS, suite=suite(
        'metadata = { "model" = "m-large" }\ntasks = "airline-*"'))
    labels(tmp_path)
    result = meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv", "--format", "json")
    assert result.exit_code in (0, 1), result.output
    (row,) = json.loads(result.output)["checks"]
    assert row["name"] == "never_update_passengers" and row["n"] == 10  # odd trials


def test_by_a_metadata_key_no_run_holds_is_an_error_not_one_missing_group(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS)
    labels(tmp_path)
    result = meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv", "--by",
                       "metadata.trail")
    assert result.exit_code == 2, result.output
    assert "--by: got 'metadata.trail'; no run's metadata holds 'trail'" in result.output
    assert "did you mean 'trial'?" in result.output
    assert "(missing)" not in result.output
    held = meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv", "--by", "metadata.trial")
    assert held.exit_code in (0, 1), held.output
    assert "per metadata.trial" in held.output
