"""Fixtures for mutation tests: a throwaway git copy of the fixture shop project."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

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
