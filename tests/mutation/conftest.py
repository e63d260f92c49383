"""Fixtures for mutation tests: a throwaway git copy of the fixture shop project."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from metaeval.mutation.run.options import Isolation

METAEVAL = str(Path(sys.executable).parent / "metaeval")
SUBPROCESS_SLOW = pytest.param(Isolation.SUBPROCESS, marks=pytest.mark.slow,
                               id="Isolation.SUBPROCESS")
"""The subprocess-isolation case of a test run in both isolations: a pytest process
per mutant, the slow half; CI runs it (``pytest -m slow``), the default run keeps
the fork case."""
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "mutate_project"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t",
                           *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout


def copy_shop(destination: Path) -> Path:
    """The fixture project as a committed git repository of its own."""
    project = destination / "shop_project"
    shutil.copytree(FIXTURE, project, ignore=shutil.ignore_patterns("__pycache__"))
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "fixture")
    return project


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under ``root`` (the .git directory aside) and its sha256."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_shop(tmp_path_factory.mktemp("shop"))


def small_project(root: Path, files: dict[str, str], operators: list[str]) -> Path:
    """A project of ``files`` (name to source, dedented) at ``root``, with a
    pyproject.toml that puts it on the path and mutates every non-test module in it
    with ``operators``."""
    targets = [name for name in files if not name.startswith("test_")]
    (root / "pyproject.toml").write_text(dedent(f"""\
        [tool.pytest.ini_options]
        pythonpath = ['.']

        [tool.metaeval.mutate]
        targets = {json.dumps(targets)}
        operators = {json.dumps(operators)}
        """), encoding="utf-8")
    for name, source in files.items():
        (root / name).write_text(dedent(source), encoding="utf-8")
    return root


def mutate_json(root: Path, *args: str, timeout: float = 60, cache: bool = False
                ) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    """``metaeval mutate --format json`` in ``root`` (report in root/r.json), with
    ``--no-cache`` unless ``cache``: its JSON output, and the finished process."""
    done = subprocess.run([METAEVAL, "mutate", "--format", "json",
                           *(() if cache else ("--no-cache",)),
                           "--report", str(root / "r.json"), *args],
                          cwd=root, capture_output=True, text=True, timeout=timeout)
    try:
        return json.loads(done.stdout), done
    except json.JSONDecodeError:
        pytest.fail(f"no JSON from metaeval mutate (exit {done.returncode}):\n"
                    f"{done.stdout}\n{done.stderr}")
