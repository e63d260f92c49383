"""`metaeval validate` knows labels files: a CSV is checked row by row (not read as
JSON), a labelling page's file is not taken for a meta-set, and labels are joined
with the runs given beside them (meta-set files or ``--runs FORMAT:PATH``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from tests.audit.airline import airline_run
from tests.importers.runs.conftest import REQUEST


def _validate(tmp_path: Path, *args: str) -> Result:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n")
    return CliRunner().invoke(main, ["validate", *args], catch_exceptions=False)


def _runs(tmp_path: Path) -> Path:
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(airline_run(t, 0, bad=t % 2 == 0, checks=True)) + "\n"
                            for t in range(3)))
    return path


def test_a_labels_csv_is_checked_row_by_row_and_joined_with_the_runs(
        tmp_path: Path) -> None:
    runs = _runs(tmp_path)
    labels = tmp_path / "labels.csv"
    labels.write_text("run_id,check,label,annotator\n"
                      "t00-trial0,*,fail,ann\n"
                      "t01-trial0,no_tool_called,pass,ann\n"
                      "t01-trial0,*,pass,bo\n"
                      "t09-trial0,*,pass,ann\n"
                      "t02-trial0,no_tool_caled,fail,ann\n"
                      "t02-trial0,*,maybe,ann\n")
    result = _validate(tmp_path, str(runs), str(labels))
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert lines[:-1] == [
        f"{labels}:5: run_id: got 't09-trial0'; expected the id of a loaded run; did you "
        "mean 't02-trial0' or 't01-trial0'?",
        f"{labels}:6: check: got 'no_tool_caled'; expected '*' (the overall verdict) or a "
        "check of run 't02-trial0': no_tool_called; did you mean 'no_tool_called'?",
        f"{labels}:7: label: got 'maybe'; expected 'pass', 'fail' or 'unsure'"]
    assert "not valid JSON" not in result.output
    assert lines[-1] == "3 runs, 3 labels by 2 annotators loaded from 2 files; 3 bad lines"
    # The same file alone: each row on its own is checked, and no run to join with.
    alone = _validate(tmp_path, "--labels", str(labels))
    assert [line.split(": ")[0] for line in alone.output.splitlines()[:-1]] == [
        f"{labels}:7"]


def test_a_label_page_file_is_not_read_as_a_meta_set_and_its_history_is_checked(
        tmp_path: Path) -> None:
    labels = tmp_path / "ann.jsonl"
    rows = [{"run_id": "t00-trial0", "check": "*", "label": "pass", "annotator": "ann",
             "at": "2026-12-06T20:00:00Z"},
            {"item_id": "pair-1", "label": "a", "annotator": "ann", "shown": "ba"},
            {"run_id": "t00-trial0", "check": "*", "label": "fail", "annotator": "ann",
             "was": "pass", "at": "2026-12-06T20:01:00Z"}]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    good = _validate(tmp_path, str(labels))
    assert good.exit_code == 0, good.output
    assert good.output == "3 labels by 1 annotator loaded from 1 file; 0 bad lines\n"
    # A change that names a label not in force, and a torn last line (said, not an error).
    labels.write_text(labels.read_text() + json.dumps({**rows[2], "was": "unsure"}) + "\n"
                      + '{"run_id": "t00')
    bad = _validate(tmp_path, str(labels), "--format", "json")
    assert bad.exit_code == 2
    document = json.loads(bad.stdout)
    assert [(e["line"], e["field"]) for e in document["errors"]] == [(4, "was")]
    assert "expected 'fail', the label of check '*' of run 't00-trial0' in force at" in (
        document["errors"][0]["message"])
    assert (document["labels"], document["annotators"]) == (3, 1)
    assert "a torn last line" in bad.stderr


def test_labels_are_joined_with_a_harness_log_given_by_runs(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(REQUEST) + "\n")
    labels = tmp_path / "labels.csv"
    labels.write_text("run_id,check,label,annotator\nrefund-7,*,fail,ann\nrefund-8,*,pass,ann\n")
    result = _validate(tmp_path, "--runs", f"anthropic:{log}", "--labels", str(labels))
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"{labels}:3: run_id: got 'refund-8'; expected the id of a loaded run; did you mean "
        "'refund-7'?",
        "1 run, 1 label by 1 annotator loaded from 2 files; 1 bad line"]


def test_a_harness_log_takes_the_projects_suite_before_its_labels_are_joined(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A suite declared once applies to the runs of --runs as meta-eval --runs gives
    # it to them: a label naming the suite's check joins (it was refused, 'none').
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(REQUEST) + "\n")
    labels = tmp_path / "labels.csv"
    labels.write_text("run_id,check,label,annotator\nrefund-7,never_cancels,pass,ann\n")
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval]\n[[tool.metaeval.meta_eval.suite]]\nname = 'never_cancels'\n"
        "grader = 'no_tool_called'\nparams = { tool = 'cancel_order' }\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["validate", "--runs", f"anthropic:{log}", "--labels",
                                       str(labels)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output == "1 run, 1 label by 1 annotator loaded from 2 files; 0 bad lines\n"
