"""Green is earned (issue 45): ``meta-eval`` exits 0 and prints ``OK`` only when it
measured something and no input was bad; a result that measured nothing is exit 3
with the reason, in the table, the JSON, the HTML page and the summary; ``gate``
refuses such a result."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from tests.audit.airline import airline_project, is_bad
from tests.importers.runs.conftest import REQUEST
from tests.loaders.conftest import meta_eval, write_csv

TASKS, TRIALS = 5, 4  # 20 runs, none labelled in its line


def rows(*, annotator: bool = True) -> list[dict[str, str]]:
    out = []
    for t in range(TASKS):
        for k in range(TRIALS):
            row = {"run_id": f"t{t:02d}-trial{k}", "check": "*",
                   "label": "fail" if is_bad(t, k) else "pass", "annotator": "ann"}
            if not annotator:
                del row["annotator"]
            out.append(row)
    return out


def write_rows(path: Path, data: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(data[0]))
        writer.writeheader()
        writer.writerows(data)


def no_ok_line(result: Result) -> None:
    assert not any(line.startswith("OK") for line in result.output.splitlines()), result.output


def test_unlabelled_runs_are_nothing_measured_exit_3_with_the_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS)
    table = meta_eval(tmp_path, monkeypatch)
    assert table.exit_code == 3, table.output
    assert "0 of 20 runs labelled: give --labels or label them" in table.output
    no_ok_line(table)
    as_json = meta_eval(tmp_path, monkeypatch, "--format", "json")
    assert as_json.exit_code == 3
    document = json.loads(as_json.output)
    assert document["ok"] is False
    assert document["reason"] == "0 of 20 runs labelled: give --labels or label them"


def test_labelled_runs_are_measured_and_exit_0_the_mirror(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS)
    write_csv(tmp_path / "labels.csv", [{**r, "rationale": ""} for r in rows()])
    result = meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv", "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.output)
    assert document["evaluator"]["n"] == 20 and "reason" not in document


def test_a_labels_file_missing_a_column_is_one_error_and_no_ok_anywhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS)
    write_rows(tmp_path / "labels.csv", rows(annotator=False))
    table = meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv")
    assert table.exit_code == 3, table.output
    assert "annotator" in table.output
    assert "0 of 20 runs labelled" in table.output
    no_ok_line(table)
    document = json.loads(meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv",
                                    "--format", "json").output)
    assert document["ok"] is False and document["reason"].startswith("0 of 20 runs labelled")


def test_an_error_beside_a_measured_result_is_exit_2_and_no_ok_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS)
    data = [{**r, "rationale": ""} for r in rows()]
    data[3]["label"] = "maybe"  # one bad row; the other 19 runs are measured
    write_csv(tmp_path / "labels.csv", data)
    table = meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv", "--html", "page.html",
                      "--summary", "summary.md")
    assert table.exit_code == 2, table.output
    # 20 runs graded; the one whose row is bad is out of the evaluator's 19.
    assert "label" in table.output and "20 runs" in table.output
    assert "1 of them with no overall human verdict" in table.output
    no_ok_line(table)
    assert "OK: every check" not in (tmp_path / "page.html").read_text()
    assert "✅" not in (tmp_path / "summary.md").read_text()
    document = json.loads(meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv",
                                    "--format", "json").output)
    assert document["ok"] is False and "bad input" in document["reason"]


def test_runs_of_a_harness_without_labels_measure_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'team'\n")
    (tmp_path / "logs.jsonl").write_text(json.dumps(REQUEST) + "\n")
    result = meta_eval(tmp_path, monkeypatch, "--runs", "anthropic:logs.jsonl")
    assert result.exit_code == 3, result.output
    assert "0 of 1 runs labelled: give --labels or label them" in result.output
    no_ok_line(result)


def test_gate_refuses_a_meta_eval_result_that_measured_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS)
    with (tmp_path / "pyproject.toml").open("a") as f:
        f.write('\n[tool.metaeval.gate]\n"meta-eval:evaluator.n" = { max = 100 }\n')
    nothing = meta_eval(tmp_path, monkeypatch, "--format", "json")
    (tmp_path / "meta.json").write_text(nothing.output)
    # A result written before "ok" carried the reason: every row n 0 is refused too.
    older = json.loads(nothing.output)
    older.pop("reason")
    older["ok"] = True
    (tmp_path / "older.json").write_text(json.dumps(older))
    for name in ("meta.json", "older.json"):
        gated = CliRunner().invoke(main, ["gate", name], catch_exceptions=False)
        assert gated.exit_code == 2, gated.output
        assert f"{name}: measured nothing" in gated.output
    write_csv(tmp_path / "labels.csv", [{**r, "rationale": ""} for r in rows()])
    measured = meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv", "--format", "json")
    (tmp_path / "meta.json").write_text(measured.output)
    gated = CliRunner().invoke(main, ["gate", "meta.json"], catch_exceptions=False)
    assert gated.exit_code == 0, gated.output


def test_gate_refuses_a_second_meta_eval_result_which_would_replace_the_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    airline_project(tmp_path, TASKS, TRIALS)
    with (tmp_path / "pyproject.toml").open("a") as f:
        f.write('\n[tool.metaeval.gate]\n"meta-eval:evaluator.n" = { max = 100 }\n')
    write_csv(tmp_path / "labels.csv", [{**r, "rationale": ""} for r in rows()])
    measured = meta_eval(tmp_path, monkeypatch, "--labels", "labels.csv", "--format", "json")
    (tmp_path / "a.json").write_text(measured.output)
    (tmp_path / "b.json").write_text(measured.output)
    gated = CliRunner().invoke(main, ["gate", "a.json", "b.json"], catch_exceptions=False)
    assert gated.exit_code == 2, gated.output
    assert "b.json: a second meta-eval result (the first: a.json)" in gated.output


def reused_id_request() -> dict[str, object]:
    """REQUEST with its second tool call reusing the first one's id."""
    text = json.dumps(REQUEST).replace('"toolu_2"', '"toolu_1"')
    loaded: dict[str, object] = json.loads(text)
    return loaded


def test_runs_keep_the_loaders_warnings_as_import_then_meta_eval_gives_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'team'\n")
    (tmp_path / "logs.jsonl").write_text(json.dumps(reused_id_request()) + "\n")
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["import", "anthropic", "logs.jsonl", "-o", "runs.jsonl"],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    imported = meta_eval(tmp_path, monkeypatch, "runs.jsonl")
    direct = meta_eval(tmp_path, monkeypatch, "--runs", "anthropic:logs.jsonl")

    def warned(result: Result) -> list[str]:
        return [line for line in result.output.splitlines()
                if line.startswith("warning:") and "'toolu_1' reused" in line]

    assert len(warned(imported)) == 1, imported.output
    assert len(warned(direct)) == 1, direct.output
    assert "logs.jsonl:1:" in warned(direct)[0]


def test_gate_refuses_a_mutate_result_in_which_no_mutant_ran(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\n[tool.metaeval.gate]\n"mutate:counts.Survived" = { max = 0 }\n')
    monkeypatch.chdir(tmp_path)
    (tmp_path / "none.json").write_text(json.dumps(
        {"counts": {"Killed": 0, "Survived": 0}, "score": 0.0, "mutants": []}))
    gated = CliRunner().invoke(main, ["gate", "none.json"], catch_exceptions=False)
    assert gated.exit_code == 2, gated.output
    assert "none.json: measured nothing (no mutant ran)" in gated.output
    (tmp_path / "ran.json").write_text(json.dumps(
        {"counts": {"Killed": 3, "Survived": 0}, "score": 1.0, "mutants": []}))
    gated = CliRunner().invoke(main, ["gate", "ran.json"], catch_exceptions=False)
    assert gated.exit_code == 0, gated.output  # the mirror: a run with mutants passes
