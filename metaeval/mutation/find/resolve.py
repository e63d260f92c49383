"""Targets to files: what ``metaeval mutate`` is asked to mutate, found on disk.

A target is a file, a directory (searched recursively for ``*.py``, leaving out
tests, hidden directories and virtual environments), ``file.py:qualname`` or
``package.module:qualname`` (found on disk under the project root, its ``src/``
or ``sys.path``, never imported). Also how a source file is read and split into
lines as Python counts them. No libcst here: the child side may use it.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.errors import InputError

# Directories a recursive search never enters: they hold tests, tooling or
# someone else's code, never the project's controls.
_SKIPPED_DIRS = frozenset({
    "tests", "test", "testing", "__pycache__", "venv", "env", "site-packages",
    "node_modules", "build", "dist",
})


@dataclass(frozen=True, slots=True)
class Target:
    """One resolved target: a file, optionally narrowed to one qualname and what it holds."""

    path: Path
    qualname: str | None = None
    spec: str = ""
    """The target as the user wrote it, for messages."""


# --- resolving targets ---------------------------------------------------------------


def resolve_targets(specs: Sequence[str], root: Path) -> list[Target]:
    """Turn CLI arguments or ``[tool.metaeval.mutate] targets`` into files.

    Relative paths are taken from ``root``. Raises ``InputError`` naming the
    target when it is neither an existing path nor a resolvable ``module:qualname``.
    """
    targets: list[Target] = []
    seen: set[tuple[Path, str | None]] = set()
    for spec in specs:
        for target in _resolve_one(spec, root):
            key = (target.path, target.qualname)
            if key not in seen:
                seen.add(key)
                targets.append(target)
    return targets


_EXPECTED = "expected a .py file, a directory, 'package.module:qualname' or 'file.py:qualname'"


def _resolve_one(spec: str, root: Path) -> list[Target]:
    path = _under(root, spec)
    if path.is_file():
        if path.suffix != ".py":
            raise InputError(f"mutate target {spec!r} is not a Python file; {_EXPECTED}")
        return [Target(path.resolve(), None, spec)]
    if path.is_dir():
        return [Target(p, None, spec) for p in python_files(path.resolve())]
    # ``rpartition``: a Windows path (``C:\\src\\gate.py:check``) has its own colon.
    where, sep, qualname = spec.rpartition(":")
    if not sep or not where:
        raise InputError(f"mutate target {spec!r} does not exist; {_EXPECTED}")
    if not qualname:
        raise InputError(f"mutate target {spec!r}: empty qualname; {_EXPECTED}")
    if not all(part.isidentifier() or part == "<locals>" for part in qualname.split(".")):
        raise InputError(f"mutate target {spec!r}: {qualname!r} is not a qualname; {_EXPECTED}")
    if where.endswith(".py") or "/" in where or "\\" in where:
        file = _under(root, where)
        if not file.is_file() or file.suffix != ".py":
            raise InputError(f"mutate target {spec!r}: {where!r} is not a Python file; "
                             f"{_EXPECTED}")
        return [Target(file.resolve(), qualname, spec)]
    return [Target(find_module_file(where, root, spec), qualname, spec)]


def _under(root: Path, text: str) -> Path:
    path = Path(text)
    return path if path.is_absolute() else root / path


def find_module_file(module: str, root: Path, spec: str = "") -> Path:
    """The file of dotted ``module``, looked up under ``root``, ``root/src``, then ``sys.path``."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        raise InputError(f"mutate target {spec or module!r}: {module!r} is not a module name; "
                         "expected 'package.module:qualname'")
    bases = [root, root / "src", *(Path(p) for p in sys.path if p)]
    for base in bases:
        candidate = base.joinpath(*parts)
        for path in (candidate.with_suffix(".py"), candidate / "__init__.py"):
            if path.is_file():
                return path.resolve()
    raise InputError(f"mutate target {spec or module!r}: module {module!r} not found under "
                     f"{str(root)!r}, its src/ or sys.path")


def python_files(directory: Path) -> list[Path]:
    """``*.py`` under ``directory`` in sorted order, without tests, hidden dirs or venvs."""
    found: list[Path] = []
    for current, dirs, files in os.walk(directory):
        here = Path(current)
        dirs[:] = sorted(
            d for d in dirs
            if not d.startswith(".") and d not in _SKIPPED_DIRS
            and not (here / d / "pyvenv.cfg").exists()
        )
        found.extend(here / f for f in sorted(files) if f.endswith(".py") and not _is_test_file(f))
    return sorted(found)


def _is_test_file(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def module_name(path: Path, root: Path) -> str:
    """The dotted name ``path`` is imported as: walk up while ``__init__.py`` marks a package."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    directory = path.parent
    while (directory / "__init__.py").is_file() and directory != directory.parent:
        parts.insert(0, directory.name)
        directory = directory.parent
    return ".".join(parts) if parts else path.parent.name


def relative_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in posix form; absolute when it lies outside."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


# --- finding mutants -----------------------------------------------------------------


def read_source(path: Path) -> str:
    try:
        # utf-8-sig: a byte-order mark is not code, and libcst would refuse it.
        return path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from e


def source_lines(source: str) -> list[str]:
    # Only the newlines Python itself knows: str.splitlines would also split on
    # form feeds and U+2028, and put libcst's line numbers off by one.
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", source)

