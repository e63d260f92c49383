from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from metaeval.audit.check_measures import MetaEvalResult, Settings, meta_eval
from metaeval.cli import main
from metaeval.importing import AllowedModules
from metaeval.loaders.meta_set import MetaSet, load_meta_sets

REPO = Path(__file__).resolve().parents[2]
META_SETS = REPO / "meta_sets"
FIXTURES = "tests.fixtures.user_graders"
# What a project using these graders declares in [tool.metaeval] allowed_modules.
ALLOW_FIXTURES = AllowedModules((FIXTURES,))
# The answer a case file might store next to the task: the classic defect grades this.
CASE_ANSWER = "I've refunded $49.99 for order A-1182."


def judge_audit(*args: str) -> Result:
    """``metaeval judge-audit ARGS`` in this process, as the command line runs it."""
    return CliRunner().invoke(main, ["judge-audit", *args])


def judge_audit_json(*args: str) -> dict[str, Any]:
    """``metaeval judge-audit ARGS --format json``: its document, once the audit has
    reached a verdict (exit 0 or 1), so bad input, a crash or a void run fails here."""
    result = judge_audit(*args, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.fixture(scope="session")
def repo_meta_set() -> MetaSet:
    loaded = load_meta_sets([META_SETS])
    assert not loaded.errors
    return loaded


@pytest.fixture(scope="session")
def repo_result(repo_meta_set: MetaSet) -> MetaEvalResult:
    """The repository's meta-eval with a small bootstrap, measured once for every test."""
    return meta_eval(repo_meta_set.runs, Settings(resamples=100))


def _refund_runs() -> list[dict[str, object]]:
    runs = []
    for path in sorted(META_SETS.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            run = json.loads(line)
            if run["task"]["id"] == "refund-damaged-item":
                runs.append(run)
    return runs


UserMetaSet = Callable[..., Path]


@pytest.fixture
def user_meta_set(tmp_path: Path) -> UserMetaSet:
    """Write the repository's refund runs with user graders (by import path) as checks."""

    def write(*graders: str, builtins: bool = False, name: str = "user.jsonl") -> Path:
        lines = []
        for run in _refund_runs():
            task = run["task"]
            assert isinstance(task, dict)
            task["criteria"]["answer"] = CASE_ANSWER
            specs = [{"grader": f"{FIXTURES}:{g}", "name": g} for g in graders]
            task["checks"] = (task["checks"] if builtins else []) + specs
            label = run["label"]
            assert isinstance(label, dict)
            if not builtins:
                # The labeller says each user grader's check holds as the run does: an
                # overall fail alone would not say which check failed.
                label["criteria"] = {g: label["verdict"] for g in graders}
            lines.append(json.dumps(run))
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n")
        return path

    return write
