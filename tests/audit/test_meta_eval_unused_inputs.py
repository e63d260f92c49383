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
    # The 10 odd trials, each measured (an overall pass) or said not to be (a fail).
    assert row["name"] == "never_update_passengers"
    assert row["n"] + row["labels"]["not_measured"] == 10 and row["n"] > 0


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


def lines_naming(output: str, text: str) -> list[str]:
    return [line for line in output.splitlines() if text in line]


def test_a_suite_grader_that_cannot_load_is_said_once_and_its_label_rows_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS, "", suite=suite("").replace(
        'grader = "no_tool_called"', 'grader = "team_graders:never_refunds"'))
    text = (tmp_path / "pyproject.toml").read_text().replace(
        "[tool.metaeval]\n", "[tool.metaeval]\nallowed_modules = ['team_graders']\n")
    (tmp_path / "pyproject.toml").write_text(text)
    labels(tmp_path)
    result = meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv")
    assert result.exit_code == 2, result.output
    assert len(lines_naming(result.output, "team_graders")) == 1, result.output
    assert "and 19 more runs" in result.output
    assert lines_naming(result.output, "labels.csv") == [
        "labels.csv: 20 label rows not joined: their runs did not load"], result.output


@pytest.mark.parametrize("source", [["nope.jsonl"], ["--runs", "anthropic:nope.jsonl"]])
def test_a_source_that_cannot_load_is_said_once_and_its_label_rows_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: list[str]) -> None:
    airline_project(tmp_path, TASKS, TRIALS)
    labels(tmp_path)
    result = meta_eval(tmp_path, monkeypatch, *source, "--labels", "labels.csv")
    assert result.exit_code == 2, result.output
    assert len(lines_naming(result.output, "nope.jsonl")) == 2, result.output  # + "no run in"
    assert lines_naming(result.output, "labels.csv") == [
        "labels.csv: 20 label rows not joined: their runs did not load"], result.output


def test_a_label_row_for_a_run_that_is_not_there_is_still_named_the_mirror(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS)
    labels(tmp_path)
    with (tmp_path / "labels.csv").open("a") as f:
        f.write("t00-trail0,*,pass,ann,\n")
    result = meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv")
    assert result.exit_code == 2, result.output
    assert "labels.csv:22: run_id: got 't00-trail0'; expected the id of a loaded run" \
        in result.output
