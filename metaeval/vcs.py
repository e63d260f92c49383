"""What git says about the project: the current commit, for findings' first and
last seen. Read-only: this module never changes the repository."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

UNKNOWN = "unknown"


def _git(root: Path, *args: str) -> str:
    """What a read-only git command prints, or "unknown" when git cannot say."""
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                             check=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    return out.stdout.strip() or UNKNOWN


def head_commit(root: Path) -> str:
    """The commit checked out at ``root``, or "unknown" outside a git repository."""
    return _git(root, "rev-parse", "HEAD")


def user_name(root: Path) -> str:
    """Who is accepting a finding: git's user.name, else "unknown"."""
    return _git(root, "config", "user.name")


def today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def remote_url(root: Path, remote: str = "origin") -> str:
    """The URL of ``remote`` of the repository at ``root``, or "unknown"."""
    return _git(root, "remote", "get-url", remote)


def tracked(path: Path) -> bool:
    """Whether git tracks the file at ``path`` in the repository that holds it; False
    outside a repository, for a file git does not know, or when git cannot say."""
    try:
        out = subprocess.run(["git", "--literal-pathspecs", "ls-files", "--error-unmatch",
                              "--", path.name], cwd=path.parent, capture_output=True,
                             timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0
