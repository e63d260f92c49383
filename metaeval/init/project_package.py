"""The user's own package, as ``metaeval init`` finds it: what ``targets`` names.

Looked for in the order a build would say it: the package list of the build
backend's config in ``pyproject.toml`` (setuptools, hatch, poetry, flit), the
``[project] name``, then the layout (one package under ``src/``, else one
top-level directory with an ``__init__.py``). What a config names counts only
if it is on disk. Nothing is imported: files and directories are only looked at.
When nothing (or more than one candidate of a layout) is found, the error asks
for ``--package NAME``.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from metaeval.data_paths import SOURCE_LIMIT, read_bounded
from metaeval.errors import InputError

# Directories that hold a project's tests, docs and tooling, never its package.
NOT_PACKAGES = frozenset({"test", "tests", "testing", "docs", "doc", "examples", "example",
                          "benchmarks", "scripts", "tools", "mutants", "meta_sets", "build",
                          "dist", "site-packages", "node_modules"})
ASK = "metaeval init --package NAME"


@dataclass(frozen=True, slots=True)
class Package:
    """One importable package (or module) of the user's project."""

    name: str
    """The import name: ``shop``, or a module's ``shop_cli``."""
    path: str
    """Relative to the project root, ``/``-separated: ``src/shop`` or ``shop_cli.py``;
    what ``[tool.metaeval.mutate] targets`` holds."""


def _importable(root: Path, base: str, name: str) -> Package | None:
    """``name`` (dotted for a subpackage) as a package directory or a module under
    ``root/base``; None when neither is on disk."""
    parts = name.split(".")
    if not name or not all(p.isidentifier() for p in parts):
        return None
    where = root / base if base else root
    directory = where.joinpath(*parts)
    relative = "/".join([*([base] if base else []), *parts])
    if (directory / "__init__.py").is_file():
        return Package(name, relative)
    if directory.with_suffix(".py").is_file():
        return Package(name, relative + ".py")
    return None


def _found(root: Path, bases: Iterable[str], name: str) -> Package | None:
    return next((p for base in bases if (p := _importable(root, base, name))), None)


def _top_level(names: Iterable[str]) -> list[str]:
    """``["shop", "shop.api", "other"]`` -> ``["shop", "other"]``: a subpackage is
    mutated with its parent's directory."""
    names = list(dict.fromkeys(names))
    return [n for n in names if not any(n.startswith(other + ".") for other in names)]


def _table(data: dict[str, object], *keys: str) -> dict[str, object]:
    for key in keys:
        value = data.get(key)
        if not isinstance(value, dict):
            return {}
        data = value
    return data


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _setuptools(root: Path, pyproject: dict[str, object]) -> list[Package]:
    config = _table(pyproject, "tool", "setuptools")
    package_dir = config.get("package-dir")
    base = package_dir.get("", "") if isinstance(package_dir, dict) else ""
    bases = [str(base)] if base else ["", "src"]
    listed = _strings(config.get("packages")) + _strings(config.get("py-modules"))
    found = [p for name in _top_level(listed) if (p := _found(root, bases, name))]
    if found:
        return found
    search = _table(config, "packages", "find")
    if not search:
        return []
    include = _strings(search.get("include")) or ["*"]
    exclude = _strings(search.get("exclude"))
    packages = []
    for where in _strings(search.get("where")) or ["."]:
        for name in _candidates(root / where):
            if (any(fnmatch.fnmatchcase(name, pattern) for pattern in include)
                    and not any(fnmatch.fnmatchcase(name, pattern) for pattern in exclude)):
                base = "" if where in ("", ".") else where.strip("/")
                if (package := _importable(root, base, name)) is not None:
                    packages.append(package)
    return packages


def _hatch(root: Path, pyproject: dict[str, object]) -> list[Package]:
    wheel = _table(pyproject, "tool", "hatch", "build", "targets", "wheel")
    found = []
    for path in _strings(wheel.get("packages")):
        base, _, name = path.strip("/").rpartition("/")
        if (package := _importable(root, base, name.removesuffix(".py"))) is not None:
            found.append(package)
    return found


def _poetry(root: Path, pyproject: dict[str, object]) -> list[Package]:
    listed = _table(pyproject, "tool", "poetry").get("packages")
    found = []
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, dict) and isinstance(include := item.get("include"), str):
            base = item.get("from", "")
            name = include.replace("/", ".").removesuffix(".py")
            if (package := _importable(root, str(base).strip("/"), name)) is not None:
                found.append(package)
    return found


def _flit(root: Path, pyproject: dict[str, object]) -> list[Package]:
    name = _table(pyproject, "tool", "flit", "module").get("name")
    package = _found(root, ["", "src"], name) if isinstance(name, str) else None
    return [package] if package is not None else []


def _project_name(root: Path, pyproject: dict[str, object]) -> list[Package]:
    names = [_table(pyproject, "project").get("name"),
             _table(pyproject, "tool", "poetry").get("name")]
    for name in names:
        if isinstance(name, str):
            # The distribution "Shop-Guards" is imported as shop_guards.
            module = re.sub(r"[-.]+", "_", name).lower()
            if (package := _found(root, ["", "src"], module)) is not None:
                return [package]
    return []


def _candidates(directory: Path) -> list[str]:
    """Directories under ``directory`` that are packages and not tests or tooling."""
    if not directory.is_dir():
        return []
    return sorted(p.name for p in directory.iterdir()
                  if p.is_dir() and p.name.isidentifier() and p.name not in NOT_PACKAGES
                  and not p.name.startswith((".", "_")) and (p / "__init__.py").is_file())


def _layout(root: Path, base: str) -> list[Package]:
    where = root / base if base else root
    names = _candidates(where)
    if len(names) > 1:
        raise InputError(f"{where}: found several packages ({', '.join(names)}); choose the "
                         f"one to mutate: {ASK}")
    return [p for name in names if (p := _importable(root, base, name)) is not None]


def find_packages(root: Path, pyproject: dict[str, object], given: str | None = None
                  ) -> tuple[Package, ...]:
    """The project's packages, or ``given`` (``--package``) checked to exist; an
    ``InputError`` that asks for ``--package`` when none is found."""
    if given is not None:
        package = _found(root, ["", "src"], given)
        if package is None:
            raise InputError(f"--package: got {given!r}; expected the import name of a package "
                             f"directory with __init__.py (or a module .py) under {root} or "
                             f"{root / 'src'}")
        return (package,)
    for finder in (_setuptools, _hatch, _poetry, _flit, _project_name):
        found = finder(root, pyproject)
        if found:
            return tuple(dict.fromkeys(found))
    for base in ("src", ""):
        found = _layout(root, base)
        if found:
            return tuple(found)
    raise InputError(f"{root}: no package found (no package named in pyproject.toml, no "
                     f"src/ layout, no top-level directory with an __init__.py); name it: {ASK}")


def first_function(root: Path, package: Package) -> str | None:
    """``package.module:name`` of the first public top-level function of the package,
    files in name order, read with ``ast`` (never imported); None when it has none."""
    path = root / package.path
    files = [path] if path.is_file() else sorted(path.rglob("*.py"))
    for file in files:
        try:
            # A regular file of bounded size only: a fifo named like a module would
            # hang init, /dev/zero linked in would fill the memory.
            tree = ast.parse(read_bounded(file.resolve(), SOURCE_LIMIT, str(file)).decode())
        except (OSError, InputError, RuntimeError, SyntaxError, ValueError):  # not UTF-8...
            continue
        for node in tree.body:
            if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                    and not node.name.startswith("_")):
                return f"{_module(package, file.relative_to(path))}:{node.name}"
    return None


def _module(package: Package, inner: Path) -> str:
    """The import name of ``inner``, a file of ``package`` relative to its directory."""
    if package.path.endswith(".py"):
        return package.name
    parts = [p for p in inner.with_suffix("").parts if p != "__init__"]
    return ".".join([package.name, *parts])
