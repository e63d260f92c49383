from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from tests.audit.conftest import FIXTURES, META_SETS, REPO, UserMetaSet

FAST = ["--resamples", "100"]
CHECK_KEYS = {"name", "n", "passed", "failed", "unscored", "tp", "fn", "tn", "fp", "tpr", "tnr",
              "precision", "balanced_accuracy", "kappa", "tpr_ci", "tnr_ci", "kappa_ci", "flags"}


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["meta-eval", *args], catch_exceptions=False)


def test_the_repository_meta_eval_prints_the_table_and_twice_the_same_bytes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    first = run(*FAST)
    assert first.exit_code == 0, first.output
    assert "refund_issued" in first.output and "TPR [95% CI]" in first.output
    assert "near_miss/wrong_target" in first.output
    assert run(*FAST).output == first.output
    as_json = run(*FAST, "--format", "json")
    assert as_json.exit_code == 0
    assert run(*FAST, "--format", "json").output == as_json.output
    document = json.loads(as_json.output)
    assert {"checks", "evaluator", "categories"} <= set(document)
    for check in document["checks"]:
        assert CHECK_KEYS <= set(check), check["name"]
        assert check["tp"] + check["fn"] + check["tn"] + check["fp"] + check["unscored"] == \
            check["n"]
    assert "nan" not in as_json.output.lower()
    assert document["evaluator"]["name"] == "evaluator"


def test_a_malformed_line_is_named_the_rest_is_measured_and_the_exit_code_says_so(
        tmp_path: Path) -> None:
    for path in META_SETS.glob("*.jsonl"):
        shutil.copy(path, tmp_path / path.name)
    broken = tmp_path / "support_near_misses.jsonl"
    lines = broken.read_text().splitlines()
    lines[4] = lines[4].replace('"verdict": "pass"', '"verdict": "maybe"')
    broken.write_text("\n".join(lines) + "\n")
    result = run(str(tmp_path), *FAST)
    assert result.exit_code == 2
    assert f"{broken}:5: label.verdict" in result.output
    assert "refund_issued" in result.output and "45 runs" in result.output


def test_a_user_grader_by_import_path_is_measured_and_checked_for_tautology(
        user_meta_set: UserMetaSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A project of its own: it allows the fixture graders, and has no bars for the
    # repository's checks, which these meta-sets do not have.
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.metaeval]\nallowed_modules = ["{FIXTURES}"]\n')
    monkeypatch.chdir(tmp_path)
    defective = run(str(user_meta_set("answer_from_case")), *FAST, "--format", "json")
    assert defective.exit_code == 1
    check = json.loads(defective.output)["checks"][0]
    assert check["name"] == "answer_from_case"
    assert {"TAUTOLOGY", "CASE-ONLY", "SELF-COMPARISON"} <= set(check["flags"])
    assert check["ablations_moved"] == {"empty_trajectory": 0, "final_is_initial": 0,
                                        "no_answer": 0, "swapped_trajectory": 0}
    fixed = run(str(user_meta_set("answer_resolves_task", name="fixed.jsonl")), *FAST,
                "--format", "json")
    assert fixed.exit_code == 0, fixed.output
    check = json.loads(fixed.output)["checks"][0]
    assert not {"TAUTOLOGY", "CASE-ONLY", "SELF-COMPARISON"} & set(check["flags"])
    assert check["ablations_moved"]["no_answer"] > 0
    assert check["unscored"] == 2  # the runs that end in a timeout have no answer to grade


def test_a_missed_bar_exits_1_from_a_flag_or_from_the_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    flagged = run(*FAST, "--min-tnr", "0.5")
    assert flagged.exit_code == 1
    assert "BELOW-MIN-TNR" in flagged.output and "TNR 0.000 < bar 0.500" in flagged.output
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.metaeval]\nmeta_sets = ["{META_SETS}"]\n'
        "[tool.metaeval.meta_eval]\nresamples = 50\n"
        "[tool.metaeval.meta_eval.checks.refund_issued]\nmin_kappa = 0.99\n"
        "[tool.metaeval.meta_eval.checks.grounded_numbers]\nmin_tnr = 0.7\n")
    monkeypatch.chdir(tmp_path)
    configured = run("--format", "json")
    assert configured.exit_code == 1
    checks = {c["name"]: c["flags"] for c in json.loads(configured.output)["checks"]}
    assert "BELOW-MIN-TNR" in checks["grounded_numbers"]
    assert "BELOW-MIN-KAPPA" not in checks["refund_issued"]
    assert json.loads(configured.output)["settings"]["resamples"] == 50


@pytest.mark.parametrize(("toml", "message"), [
    ("[tool.metaeval.meta_eval.checks.refund_issued]\nmin_tpr = 1.5\n",
     "tool.metaeval.meta_eval.checks.refund_issued.min_tpr: got 1.5; expected a number in [0, 1]"),
    ("[tool.metaeval.meta_eval]\nmin_tpx = 0.5\n",
     "tool.metaeval.meta_eval.min_tpx: unknown key"),
    ("[tool.metaeval.meta_eval]\nresamples = 0\n",
     "tool.metaeval.meta_eval.resamples: got 0; expected an integer >= 1"),
    ("[tool.metaeval.meta_eval]\nmin_kappa = true\n",
     "tool.metaeval.meta_eval.min_kappa: got True; expected a number in [-1, 1]"),
])
def test_a_bad_meta_eval_config_is_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             toml: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(toml)
    monkeypatch.chdir(tmp_path)
    result = run()
    assert result.exit_code == 2
    assert message in result.output


def test_a_drop_since_the_baseline_exits_1(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    document = json.loads(run(*FAST, "--format", "json").output)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(document))
    assert run(*FAST, "--baseline", str(baseline)).exit_code == 0
    for check in document["checks"]:
        if check["name"] == "grounded_numbers":
            check["tnr"] = 0.9
    baseline.write_text(json.dumps(document))
    result = run(*FAST, "--baseline", str(baseline))
    assert result.exit_code == 1
    assert "grounded_numbers: TNR 0.9000 -> 0.6000 since the baseline" in result.output
    baseline.write_text('{"checks": [{"name": "max_steps"}]}')
    bad = run(*FAST, "--baseline", str(baseline))
    assert bad.exit_code == 2 and "checks[0].tpr: got None; expected a number" in bad.output


def test_no_file_is_bad_input_and_an_empty_meta_set_proves_nothing(tmp_path: Path) -> None:
    result = run(str(tmp_path))
    assert result.exit_code == 2
    assert "no .jsonl files" in result.output
    (tmp_path / "empty.jsonl").write_text("")
    empty = run(str(tmp_path))
    assert empty.exit_code == 3
    assert "no run to measure" in empty.output


def test_show_runs_lists_the_runs_each_check_let_through_or_wrongly_failed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    shown = run(*FAST, "--show-runs")
    assert shown.exit_code == 0, shown.output
    section = shown.output.split("runs each check got wrong")[1]
    # the ids come from the per-category cells the JSON holds: read them from there
    document = json.loads(run(*FAST, "--format", "json").output)
    through = sorted(i for cat in document["categories"].values()
                     for i in cat["checks"].get("answer_mentions_refund", {}).get(
                         "let_through", []))
    assert through == ["over-refusal-02"]
    assert "  answer_mentions_refund: let through 1: over-refusal-02" in section
    assert ("  lookup_before_refund: wrongly failed 1: alternative-path-02-search-only"
            in section)
    # a check that got no run wrong is not listed; without the flag, no section
    assert "refund_issued:" not in section
    assert "runs each check got wrong" not in run(*FAST).output


def test_a_user_grader_is_named_by_its_name_attribute_not_its_import_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.metaeval]\nallowed_modules = ["{FIXTURES}"]\n')
    monkeypatch.chdir(tmp_path)
    lines = []
    for path in sorted(META_SETS.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["task"]["id"] != "refund-damaged-item":
                continue
            record["task"]["checks"] = [
                {"grader": f"{FIXTURES}:answer_resolves_task"},
                {"grader": f"{FIXTURES}:always_pass", "name": "kept_as_given"}]
            # a label for the check by the name people would write
            record["label"]["criteria"] = {"answer_resolves_task": record["label"]["verdict"]}
            lines.append(json.dumps(record))
    (tmp_path / "user.jsonl").write_text("\n".join(lines) + "\n")
    result = run("user.jsonl", *FAST, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    names = [c["name"] for c in json.loads(result.output)["checks"]]
    assert names == ["answer_resolves_task", "kept_as_given"]
