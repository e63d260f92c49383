from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.config import Bars, load_config
from metaeval.contract import JsonValue
from metaeval.testing import assert_graders

REPO = Path(__file__).resolve().parents[1]
META_SETS = REPO / "meta_sets"


def test_the_repository_graders_meet_their_bars_on_the_meta_set() -> None:
    bars = load_config(REPO).meta_eval.check_bars
    assert set(bars) >= {"refund_issued", "max_steps", "grounded_numbers"}
    result = assert_graders(project=REPO)  # the bars of the repository's pyproject.toml
    assert {c.name for c in result.checks} == set(bars)


def test_a_mutant_in_a_grader_is_killed_by_the_meta_set(monkeypatch: pytest.MonkeyPatch) -> None:
    # the mutant: state_includes matches every row, so a refund to the wrong order passes
    def matches_anything(actual: JsonValue, expected: JsonValue) -> bool:
        return True

    monkeypatch.setattr("metaeval.graders.state_checks.includes", matches_anything)
    with pytest.raises(AssertionError, match=r"refund_issued: BELOW-MIN-TNR BELOW-MIN-KAPPA"):
        assert_graders(META_SETS, checks={"refund_issued": Bars(0.95, 0.95, 0.9)})


def test_forbidden_warnings_and_bad_input_fail(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="NO-SIGNAL"):
        assert_graders([META_SETS], forbid={"NO-SIGNAL"})
    with pytest.raises(ValueError, match="forbid: got"):
        assert_graders(META_SETS, forbid={"NO-SINGAL"})
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    with pytest.raises(AssertionError, match="bad meta-set input"):
        assert_graders(bad)
    with pytest.raises(AssertionError, match="does not have"):
        assert_graders(META_SETS, checks={"no_such_check": Bars(min_tpr=0.5)})


def _capital(run_id: str, answer: str, human: str) -> str:
    return json.dumps({
        "id": run_id, "category": "near_miss" if human == "fail" else "pass",
        "task": {"id": run_id, "checks": [{"grader": "answer_contains", "text": "Vienna",
                                           "name": "says_vienna"}]},
        "trajectory": [{"type": "message", "role": "user", "content": "Capital of Austria?"},
                       {"type": "message", "role": "assistant", "content": answer}],
        "label": {"verdict": human, "criteria": {"says_vienna": human}}}) + "\n"


# Five answers people passed, one of which ("Wien") the check fails: TPR 0.8 by
# construction; two it must fail.
NEAR_MISSES = "".join([
    *(_capital(f"ok-{i}", f"It is Vienna ({i}).", "pass") for i in range(4)),
    _capital("local-name", "Wien.", "pass"),
    _capital("wrong-1", "Salzburg.", "fail"), _capital("wrong-2", "Graz.", "fail")])


def _project(tmp_path: Path, meta_eval: str) -> Path:
    (tmp_path / "meta_sets").mkdir(parents=True)
    (tmp_path / "meta_sets" / "capitals.jsonl").write_text(NEAR_MISSES)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.metaeval]\nmeta_sets = ["meta_sets"]\n[tool.metaeval.meta_eval]\n{meta_eval}')
    return tmp_path


@pytest.mark.parametrize(("meta_eval", "fails"), [
    ("min_tpr = 0.8\n", False),
    ("min_tpr = 0.9\n", True),
    ("min_tpr = 0.8\n[tool.metaeval.meta_eval.checks.says_vienna]\nmin_tpr = 0.85\n", True),
    ("untested = \"fail\"\n", False),
])
def test_the_bars_are_the_configs_as_meta_eval_reads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, meta_eval: str, fails: bool) -> None:
    root = _project(tmp_path, meta_eval)
    monkeypatch.chdir(root)
    command = CliRunner().invoke(main, ["meta-eval", "--resamples", "50"])
    assert command.exit_code == (1 if fails else 0), command.output
    if fails:
        with pytest.raises(AssertionError, match=r"says_vienna: BELOW-MIN-TPR \(TPR 0\.800"):
            assert_graders(project=root)
    else:
        result = assert_graders(project=root)
        assert [c.measured.tpr.value for c in result.checks] == [0.8]


def test_arguments_override_the_config_as_flags_do(tmp_path: Path) -> None:
    root = _project(tmp_path, "min_tpr = 0.9\n")
    assert_graders(root / "meta_sets", project=root, min_tpr=0.8)
    assert_graders(root / "meta_sets", project=root,
                   checks={"says_vienna": Bars(min_tpr=0.5)})
    # A per-check bar given wins over a bar for every check given.
    with pytest.raises(AssertionError, match="BELOW-MIN-TPR"):
        assert_graders(root / "meta_sets", project=root, min_tpr=0.5,
                       checks={"says_vienna": Bars(min_tpr=0.85)})


def test_the_configs_suite_checks_and_bars_for_a_missing_check_are_read(
        tmp_path: Path) -> None:
    root = _project(tmp_path, "min_tpr = 0.8\n[[tool.metaeval.meta_eval.suite]]\n"
                              'name = "no_lookup"\ngrader = "no_tool_called"\n'
                              'params = { tool = "lookup" }\n')
    result = assert_graders(project=root)
    assert sorted(c.name for c in result.checks) == ["no_lookup", "says_vienna"]
    stray = _project(tmp_path / "stray", "[tool.metaeval.meta_eval.checks.says_viena]\n"
                                         "min_tpr = 0.5\n")
    with pytest.raises(AssertionError, match="did you mean 'says_vienna'"):
        assert_graders(project=stray)


def test_graders_measured_on_nothing_fail_the_test_not_pass_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 45: runs with no label measure nothing; the generated grader test must not
    # pass on them (meta-eval exits 3 on the same runs).
    from tests.audit.airline import airline_project

    airline_project(tmp_path, 3, 2)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AssertionError, match="nothing measured: 0 of 6 runs labelled"):
        assert_graders()
    airline_project(tmp_path / "labelled", 3, 2)
    runs = tmp_path / "labelled" / "runs" / "airline.jsonl"
    lines = [json.loads(x) for x in runs.read_text().splitlines()]
    for line in lines:
        line["label"] = {"verdict": "pass" if "update_reservation_flights" in json.dumps(
            line["trajectory"]) else "fail"}
    runs.write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.chdir(tmp_path / "labelled")
    assert assert_graders().evaluator.measured.n == 6  # the mirror: labelled, measured
