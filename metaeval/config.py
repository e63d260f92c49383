"""``[tool.metaeval]`` in the nearest ``pyproject.toml``, and the defaults.

Flags override what is read here. A bad value is an InputError naming the
file, the key, the value and what was expected.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from metaeval.errors import InputError

DEFAULT_META_SETS = ("meta_sets",)
DEFAULT_FINDINGS = "mutants/findings.json"


@dataclass(frozen=True, slots=True)
class Config:
    """Settings of one project; paths are relative to ``root``."""

    root: Path
    meta_sets: tuple[str, ...] = DEFAULT_META_SETS
    findings: str = DEFAULT_FINDINGS
    mutate_targets: tuple[str, ...] = ()
    """``[tool.metaeval.mutate] targets``: files, directories or ``module:qualname``."""
    mutate_operators: tuple[str, ...] = ()
    """``[tool.metaeval.mutate] operators``: restrict rewrite operators (empty: all)."""

    def paths(self, names: tuple[str, ...]) -> list[Path]:
        return [self.root / name for name in names]


def find_pyproject(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(start: Path | None = None) -> Config:
    """The config of the project around ``start`` (default: the current directory)."""
    start = (start or Path.cwd()).resolve()
    pyproject = find_pyproject(start)
    if pyproject is None:
        return Config(start)
    try:
        with pyproject.open("rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise InputError(f"{pyproject}: cannot read: {e}") from e
    section = data.get("tool", {}).get("metaeval", {})
    if not isinstance(section, dict):
        raise InputError(f"{pyproject}: tool.metaeval: got {section!r}; expected a table")
    meta_sets = section.get("meta_sets", list(DEFAULT_META_SETS))
    if not isinstance(meta_sets, list) or not all(isinstance(m, str) for m in meta_sets):
        raise InputError(f"{pyproject}: tool.metaeval.meta_sets: got {meta_sets!r}; "
                         "expected a list of paths")
    findings = section.get("findings", DEFAULT_FINDINGS)
    if not isinstance(findings, str) or not findings:
        raise InputError(f"{pyproject}: tool.metaeval.findings: got {findings!r}; "
                         "expected a path")
    mutate_targets, mutate_operators = _mutate_section(pyproject, section.get("mutate", {}))
    return Config(pyproject.parent, tuple(meta_sets), findings, mutate_targets, mutate_operators)


def _mutate_section(pyproject: Path, section: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``targets`` and ``operators`` of ``[tool.metaeval.mutate]``, validated."""
    # Imported here so reading the config of a project that never mutates stays light.
    from metaeval.mutation.operators import OPERATORS

    if not isinstance(section, dict):
        raise InputError(f"{pyproject}: tool.metaeval.mutate: got {section!r}; expected a table")
    targets = section.get("targets", [])
    if not isinstance(targets, list) or not all(isinstance(t, str) and t for t in targets):
        raise InputError(f"{pyproject}: tool.metaeval.mutate.targets: got {targets!r}; "
                         "expected a list of paths or 'package.module:qualname' strings")
    operators = section.get("operators", [])
    if not isinstance(operators, list) or not all(isinstance(o, str) for o in operators):
        raise InputError(f"{pyproject}: tool.metaeval.mutate.operators: got {operators!r}; "
                         "expected a list of operator names")
    for name in operators:
        if name not in OPERATORS:
            raise InputError(f"{pyproject}: tool.metaeval.mutate.operators: got {name!r}; "
                             f"expected one of {', '.join(OPERATORS)}")
    return tuple(targets), tuple(operators)
