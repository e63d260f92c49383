"""Suites: checks declared once in the config (or a suite file it names), applied to
every run a selector picks, with parameters read from each run; one row per check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from metaeval.cli import main
from metaeval.config import load_config
from metaeval.errors import InputError
from tests.audit.airline import SUITE, airline_project, is_bad
from tests.loaders.conftest import meta_eval

TASKS, TRIALS = 50, 4


def project(tmp_path: Path, suite: str = SUITE, *, labels: bool = True,
            checks: tuple[str, ...] = ("never_update_passengers", "flight_booked")) -> Path:
    """The airline project, its runs labelled by people unless not ``labels``: overall
    and for each of ``checks`` (an overall fail alone does not say which check failed)."""
    runs = airline_project(tmp_path, TASKS, TRIALS, suite=suite)
    if labels:
        path = tmp_path / "runs" / "airline.jsonl"
        lines = []
        for i, run in enumerate(runs):
            # people fail the near misses, and (a disagreement) the first trial of task 7
            task, trial = divmod(i, TRIALS)
            fail = is_bad(task, trial) or (task, trial) == (7, 0)
            verdict = "fail" if fail else "pass"
            run["label"] = {"verdict": verdict, "criteria": dict.fromkeys(checks, verdict)}
            lines.append(json.dumps(run))
        path.write_text("\n".join(lines) + "\n")
    return tmp_path


def test_one_declared_check_serves_every_task_and_makes_one_row(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = meta_eval(project(tmp_path), monkeypatch, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.output)
    rows = {c["name"]: c for c in document["checks"]}
    assert sorted(rows) == ["flight_booked", "never_update_passengers"]
    assert rows["flight_booked"]["n"] == rows["never_update_passengers"]["n"] == TASKS * TRIALS
    # the other side: what each check must say, from the table that wrote the runs
    human, booked = [], []
    for task in range(TASKS):
        for trial in range(TRIALS):
            human.append("fail" if is_bad(task, trial) or (task, trial) == (7, 0) else "pass")
            booked.append("fail" if is_bad(task, trial) else "pass")
    assert rows["flight_booked"]["kappa"] == pytest.approx(
        cohen_kappa_score(human, booked), abs=1e-4)
    # positive = human pass: the one disagreement (people fail, the grader passes) is an FP
    assert (rows["flight_booked"]["fp"], rows["flight_booked"]["fn"]) == (1, 0)


def test_a_parameter_the_run_lacks_is_an_error_on_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path)
    path = root / "runs" / "airline.jsonl"
    lines = path.read_text().splitlines()
    third = json.loads(lines[2])
    del third["task"]["criteria"]["expected_flight"]
    lines[2] = json.dumps(third)
    path.write_text("\n".join(lines) + "\n")
    result = meta_eval(root, monkeypatch)
    assert result.exit_code == 2
    assert ("runs/airline.jsonl:3: task.criteria.expected_flight: missing; the suite check "
            "'flight_booked' (") in result.output
    assert "reads its parameter 'args' from here" in result.output
    assert f"meta-eval: {TASKS * TRIALS - 1} runs" in result.output  # the rest is measured


def test_a_value_from_the_run_the_grader_refuses_names_the_run_and_the_declaration(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path)
    path = root / "runs" / "airline.jsonl"
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    first["task"]["criteria"]["expected_flight"] = "HAT001"  # a string, not an object
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n")
    result = meta_eval(root, monkeypatch)
    assert result.exit_code == 2
    line = next(x for x in result.output.splitlines() if "airline.jsonl:1:" in x)
    assert "the suite check 'flight_booked'" in line
    assert "tool.metaeval.meta_eval.suite[1].params.args" in line


def test_selectors_pick_runs_by_task_glob_and_metadata(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = """
[[tool.metaeval.meta_eval.suite]]
grader = "no_tool_called"
params = { tool = "update_reservation_passengers" }
tasks = "airline-1*"
metadata = { model = "m-large" }
"""
    document = json.loads(meta_eval(project(tmp_path, suite, checks=("no_tool_called",)),
                                    monkeypatch, "--format", "json").output)
    (row,) = document["checks"]
    # tasks 10-19, the odd trials (m-large): 10 tasks x 2 trials
    assert (row["name"], row["n"]) == ("no_tool_called", 20)


def test_a_suite_check_named_like_a_check_in_the_run_is_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path)
    path = root / "runs" / "airline.jsonl"
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    first["task"]["checks"] = [{"grader": "max_steps", "value": 9, "name": "flight_booked"}]
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n")
    result = meta_eval(root, monkeypatch)
    assert result.exit_code == 2
    assert ("runs/airline.jsonl:1: task.checks: a check named 'flight_booked' is in this run "
            "and in the suite") in result.output


def test_a_suite_file_declares_the_same_checks(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path, 'suite_files = ["suites/airline.toml"]\n')
    (root / "suites").mkdir()
    (root / "suites" / "airline.toml").write_text(
        "format_version = 1\n" + SUITE.replace("tool.metaeval.meta_eval.suite", "suite"))
    document = json.loads(meta_eval(root, monkeypatch, "--format", "json").output)
    assert [c["name"] for c in document["checks"]] == ["flight_booked",
                                                      "never_update_passengers"]


@pytest.mark.parametrize(("suite", "message"), [
    ('[[tool.metaeval.meta_eval.suite]]\ngrader = "no_tool_called"\nparam = {}\n',
     "tool.metaeval.meta_eval.suite[0].param: unknown key; expected one of grader, metadata, "
     "name, params, params_from, tasks; did you mean 'params' or 'params_from'?"),
    ('[[tool.metaeval.meta_eval.suite]]\nname = "x"\n',
     "tool.metaeval.meta_eval.suite[0].grader: got nothing; expected a non-empty string"),
    ('[[tool.metaeval.meta_eval.suite]]\ngrader = "max_steps"\nparams_from = '
     '{ value = "final_state.steps" }\n',
     "suite[0].params_from.value: got 'final_state.steps'; expected a dotted path in the run"),
    ('[[tool.metaeval.meta_eval.suite]]\ngrader = "max_steps"\nparams = { value = 3 }\n'
     'params_from = { value = "metadata.steps" }\n',
     "suite[0].params_from.value: also in params"),
    ('[[tool.metaeval.meta_eval.suite]]\ngrader = "max_steps"\nparams = { value = inf }\n',
     "suite[0].params.value: got inf; expected a value JSON can hold"),
    ('[[tool.metaeval.meta_eval.suite]]\ngrader = "max_steps"\nparams = { value = 1979-05-27 }\n',
     "expected a value JSON can hold"),
    ('[[tool.metaeval.meta_eval.suite]]\ngrader = "max_steps"\n'
     '[[tool.metaeval.meta_eval.suite]]\ngrader = "max_steps"\n',
     "suite[1]: a check named 'max_steps' is already declared at"),
    ('suite_files = ["../outside.toml"]\n',
     "suite_files[0]: got '../outside.toml'; expected a path inside the project"),
    ('suite_files = ["missing.toml"]\n', "suite_files[0]: 'missing.toml': cannot read"),
    ('cluster = "trial"\n', "cluster: got 'trial'; expected one of 'auto', 'task', 'run'"),
])
def test_a_bad_declaration_is_a_config_error(tmp_path: Path, suite: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.metaeval.meta_eval]\n{suite}")
    with pytest.raises(InputError) as caught:
        load_config(tmp_path)
    assert message in str(caught.value)


def test_no_suite_no_change(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval.meta_eval]\nmin_tpr = 0.5\n")
    assert load_config(tmp_path).meta_eval.suite == ()


def test_validate_applies_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path)
    path = root / "runs" / "airline.jsonl"
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    first["label"]["criteria"] = {"flight_booked": "pass"}  # names a suite check
    second = json.loads(lines[1])
    del second["task"]["criteria"]["expected_flight"]
    lines[:2] = [json.dumps(first), json.dumps(second)]
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, ["validate"], catch_exceptions=False)
    assert result.exit_code == 2
    bad = [x for x in result.output.splitlines() if "airline.jsonl:" in x]
    assert len(bad) == 1 and "airline.jsonl:2: task.criteria.expected_flight: missing" in bad[0]


@pytest.mark.parametrize(("selector", "n"), [
    ('{ model = { in = ["m-large", "m-none"] } }', 20),
    ('{ model = { not = "m-large" } }', 20),
    ('{ model = { not = { in = ["m-large"] } } }', 20),
    ('{ model = { exists = true } }', 40),
    ('{ nothing = { exists = false } }', 40),
    ('{ model = { in = [] } }', 0),
])
def test_selectors_test_membership_presence_and_negation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, selector: str, n: int) -> None:
    suite = f"""
[[tool.metaeval.meta_eval.suite]]
grader = "no_tool_called"
params = {{ tool = "update_reservation_passengers" }}
tasks = "airline-1*"
metadata = {selector}
"""
    result = meta_eval(project(tmp_path, suite, checks=("no_tool_called",)), monkeypatch,
                       "--format", "json")
    document = json.loads(result.output)
    if n == 0:  # selects nothing: named, never a quiet pass
        assert result.exit_code == 2
        assert any("no run's value meets {\"in\": []}" in e
                   for e in document["errors"])
        return
    (row,) = document["checks"]
    assert (row["name"], row["n"]) == ("no_tool_called", n)


def test_a_selector_test_of_the_wrong_shape_is_named(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    suite = """
[[tool.metaeval.meta_eval.suite]]
grader = "no_tool_called"
params = { tool = "x" }
metadata = { model = { in = "m-large" } }
"""
    result = meta_eval(project(tmp_path, suite, checks=("no_tool_called",)), monkeypatch)
    assert result.exit_code == 2
    assert ("tool.metaeval.meta_eval.suite[0].metadata.model.in: got 'm-large'; expected a "
            "list of values") in result.output
