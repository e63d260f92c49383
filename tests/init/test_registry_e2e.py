"""A new team's first hour, end to end: a registry-based package of its own
(``registry_project``), ``metaeval init``, then ``meta-eval``, the project's
pytest, ``gate`` and ``mutate``. The three that judge the graders must give one
verdict on the team's meta-set, whatever the bar: its grader passes four of the
five answers people passed (TPR 0.8), which meets the scaffold's 0.8 and misses
0.9, and ``mutate`` must not be refused because the generated test fails."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.builders import git
from tests.init.registry_project import PACKAGE, write_project

METAEVAL = [sys.executable, "-c", "from metaeval.cli import main; main()"]


def run(root: Path, *args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    # src layout: PYTHONPATH stands in for the team's `pip install -e .`.
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    return subprocess.run(list(args), cwd=root, capture_output=True, text=True, env=env,
                          timeout=timeout)


def scaffolded(root: Path) -> subprocess.CompletedProcess[str]:
    write_project(root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the team's harness")
    init = run(root, *METAEVAL, "init")
    assert init.returncode == 0, init.stdout + init.stderr
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "metaeval init")
    return init


def verdicts(root: Path) -> dict[str, int]:
    """The exit code of each judge of the graders on the project as it stands."""
    meta = run(root, *METAEVAL, "meta-eval", "--format", "json")
    (root / "meta-eval.json").write_text(meta.stdout)
    tests = run(root, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "tests/test_metaeval_graders.py")
    gate = run(root, *METAEVAL, "gate", "meta-eval.json")
    return {"meta-eval": meta.returncode, "pytest": tests.returncode, "gate": gate.returncode}


def set_min_tpr(root: Path, value: float) -> None:
    pyproject = root / "pyproject.toml"
    text, n = re.subn(r"(?m)^min_tpr = .*$", f"min_tpr = {value}", pyproject.read_text())
    assert n == 1
    pyproject.write_text(text)


@pytest.mark.slow  # about 25 s: eight metaeval and pytest processes
def test_init_meta_eval_pytest_and_gate_give_one_verdict(tmp_path: Path) -> None:
    init = scaffolded(tmp_path)
    config = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["metaeval"]
    assert config["allowed_modules"] == [PACKAGE]  # the import name, not the project's
    assert f"package: {PACKAGE} (src/{PACKAGE})" in init.stderr
    assert (tmp_path / ".gitignore").read_text().splitlines() == [
        ".metaeval/", "metaeval-reports/", "metaeval.sarif"]
    assert "min_tpr" not in (tmp_path / "tests/test_metaeval_graders.py").read_text()
    assert verdicts(tmp_path) == {"meta-eval": 0, "pytest": 0, "gate": 0}
    team = {c["name"]: c for c in json.loads((tmp_path / "meta-eval.json").read_text())[
        "checks"]}
    assert team["answer_matches"]["tpr"] == 0.8  # the honest near-miss, as written
    set_min_tpr(tmp_path, 0.9)
    assert verdicts(tmp_path) == {"meta-eval": 1, "pytest": 1, "gate": 1}
    set_min_tpr(tmp_path, 0.8)
    # A grader refused by allowed_modules: one error a line, none about the label.
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        f'allowed_modules = ["{PACKAGE}"]', "allowed_modules = []"))
    refused = run(tmp_path, *METAEVAL, "validate", "meta_sets/team.jsonl")
    assert refused.returncode == 2
    errors = [line for line in refused.stdout.splitlines() + refused.stderr.splitlines()
              if "team.jsonl:" in line]
    assert len(errors) == 8 and all("is not in an allowed module" in e for e in errors)


@pytest.mark.slow
def test_mutate_runs_on_the_scaffolded_project(tmp_path: Path) -> None:
    scaffolded(tmp_path)
    mutate = run(tmp_path, *METAEVAL, "mutate", "--format", "json", timeout=600)
    # 3 would be the suite failing without any mutant: the generated test included.
    assert mutate.returncode in (0, 1), mutate.stdout + mutate.stderr
    result = json.loads(mutate.stdout)
    statuses = {m["status"] for m in result["mutants"]}
    assert "Killed" in statuses
    # The scorer registry refuses a second registration: executing its modules
    # again in the fork must find it as before their import, so no mutant needs
    # a pytest process of its own.
    assert [m["id"] for m in result["mutants"] if m["own_process"]] == []
    assert result["timing"]["isolation"] == "fork" and result["timing"]["deferred"] == 0
    assert result["timing"]["reloaded"] > 0  # the registry's modules did execute again
    # check() appends at import only (its test is refused before the append); with
    # the append dropped no check is registered, which a test sees.
    status = {(m["path"], m["line"], m["operator"]): m["status"] for m in result["mutants"]}
    assert status[(f"src/{PACKAGE}/registry.py", 25, "drop_call")] == "Killed"
    git(tmp_path, "diff", "--exit-code")  # the tree is as committed
