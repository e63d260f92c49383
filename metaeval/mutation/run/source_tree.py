"""Whether a ``metaeval mutate`` run wrote into the project's source tree.

metaeval never writes the source tree: its mutants live in memory. The
project's tests can: a test that rewrites a source or data file while mutants
run changes what every later (and every concurrent) test sees, and nothing
restores it. Such a run proves nothing, so it is a void run naming the files.

``snapshot`` is taken before the first test process starts, ``written`` after
the last one ends. The files watched are those git tracks under the root, or,
outside a git repository, every ``*.py`` file and ``pyproject.toml`` there;
metaeval's own and tool directories (``.git``, ``.metaeval``, virtual
environments, caches) are left out. A file counts as written when its size,
modification time or inode changed, or it is gone: one stat a file, no hash, so a
tree of thousands of files costs milliseconds; a test that writes a file back
as it was is still a test that wrote into the tree while others ran. Files
created by the tests are not looked at. This module reads, never writes.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SKIPPED = frozenset({".git", ".metaeval", ".venv", "venv", ".tox", ".nox", "__pycache__",
                     ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules",
                     "site-packages", "build", "dist"})
"""Directories never watched: metaeval's own, version control's, tools' caches
and environments, where a run writes by design."""

Stamp = tuple[int, int, int]
"""A file's size, modification time (ns) and inode."""


@dataclass(frozen=True, slots=True)
class TreeState:
    """The watched files of a project before a run."""

    root: Path
    files: Mapping[str, Stamp]
    """Path in the project (posix) to its stamp."""


def _tracked(root: Path) -> list[str] | None:
    """The files git tracks under ``root``, relative to it; None outside a repository."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True,
                             check=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return [name for name in out.stdout.decode("utf-8", "surrogateescape").split("\0")
            if name]


def _sources(root: Path) -> list[str]:
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED and not d.startswith(".")]
        here = Path(directory)
        found.extend((here / name).relative_to(root).as_posix() for name in files
                     if name.endswith(".py") or name == "pyproject.toml")
    return found


def _stamp(path: Path) -> Stamp | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


def snapshot(root: Path) -> TreeState:
    """The stamps of the files watched under ``root`` (see the module's docstring)."""
    names = _tracked(root)
    if names is None:
        names = _sources(root)
    files = {name: stamp for name in names
             if not SKIPPED.intersection(Path(name).parts[:-1])
             and (stamp := _stamp(root / name)) is not None}
    return TreeState(root, files)


def written(before: TreeState) -> tuple[str, ...]:
    """The watched files changed or removed since ``before``, sorted."""
    return tuple(sorted(name for name, stamp in before.files.items()
                        if _stamp(before.root / name) != stamp))


def tree_written(before: TreeState) -> str:
    """Why the run is void when its tests wrote into the tree, naming the files; ""
    when they did not."""
    changed = written(before)
    if not changed:
        return ""
    # A file name is the project's text: one a terminal would act on is shown escaped.
    shown = ", ".join(n if n.isprintable() else repr(n) for n in changed[:20])
    if len(changed) > 20:
        shown += f" and {len(changed) - 20} more"
    return (f"the tests wrote into the source tree while the mutants ran, so the run proves "
            f"nothing: {shown} changed. Restore {'it' if len(changed) == 1 else 'them'} "
            "(git diff shows what changed) and make the tests write under a temporary "
            "directory (pytest's tmp_path)")
