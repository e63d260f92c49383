"""Suites as the config declares them: checks declared once, read from TOML.

A suite check is written once, in ``[[tool.metaeval.meta_eval.suite]]`` or in a
suite file that ``[tool.metaeval.meta_eval] suite_files`` names, and applied to
every run its selector picks (``metaeval.loaders.suites`` applies it). This module only
reads and checks the declarations: their keys (unknown keys are errors with a
"did you mean"), their types, that every value is one JSON can hold, and that a
suite file lies inside the project. It never builds a grader (the feature layer
does, naming the declaration when a grader refuses its parameters) and never
reads a run.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import InputError
from metaeval.keys import cut, reject_unknown

SUITE_KEYS = ("grader", "metadata", "name", "params", "params_from", "tasks")
"""The keys of one suite check."""
SUITE_FILE_KEYS = ("format_version", "map", "suite")
"""The top-level keys of a suite file."""
SUITE_FILE_VERSION = 1
PARAM_ROOTS = ("task.", "metadata.")
"""Where a parameter may be read from in a run: its task (``task.id``,
``task.instruction``, ``task.criteria.KEY``) or its free metadata."""
TASK_FIELDS = ("task.id", "task.instruction")
MAP_KEYS = ("category_from", "conversation_from", "criteria_from", "final_state_from",
            "initial_state_from", "instruction_from", "task_from")
"""The keys of a suite's ``map``: which field of an imported record fills which part
of the run (its category, task id and instruction, criteria, states), and which
names the conversation a per-call record belongs to."""


@dataclass(frozen=True, slots=True)
class RunMap:
    """Where an imported run's parts are read from: each a dotted path in the run as
    its importer wrote it (the same paths as ``params_from``: ``metadata.KEY`` for
    what the format carries beyond the run). Empty: the importer's own reading.
    ``where`` names each key's declaration in messages."""

    paths: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    where: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def get(self, key: str) -> str | None:
        return self.paths.get(key)


NO_MAP = RunMap()


@dataclass(frozen=True, slots=True)
class SuiteCheck:
    """One check declared once: its grader and fixed parameters, which runs it applies
    to, and which parameters each run supplies.

    ``tasks`` is a glob over task ids (``*`` every run); ``metadata`` holds dotted
    keys whose values a run's metadata must equal; ``params_from`` maps a parameter
    to the dotted path in the run it is read from (``task.criteria.expected``,
    ``metadata.tool``). ``where`` names the declaration in messages.
    """

    grader: str
    name: str = ""
    params: JsonObject = field(default_factory=dict)
    tasks: str = "*"
    metadata: JsonObject = field(default_factory=dict)
    params_from: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    where: str = ""

    @property
    def label(self) -> str:
        """The name labels and reports use: ``name``, else the grader's."""
        return self.name or self.grader


def _json(value: object, where: str) -> JsonValue:
    """``value`` (read from TOML) when JSON can hold it: TOML's dates, times, ``inf``
    and ``nan`` cannot reach a grader that was written for JSON runs."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
    elif isinstance(value, list):
        return [_json(v, f"{where}[{i}]") for i, v in enumerate(value)]
    elif isinstance(value, dict):
        return {str(k): _json(v, f"{where}.{k}") for k, v in value.items()}
    raise InputError(f"{where}: got {cut(repr(value), 80)}; expected a value JSON can hold "
                     "(a string, number, boolean, array or table; no date, time, inf or nan)")


OPERATORS = ("exists", "in", "not")
"""A selector value that is a table of one of these keys tests, not equals:
``{ in = [...] }`` one of the values, ``{ exists = true }`` the key is there (or,
false, is not), ``{ not = X }`` X (a value or another test) does not hold."""


def operator(wanted: JsonValue) -> str | None:
    """The test a selector value asks for, or None for plain equality."""
    if isinstance(wanted, dict) and len(wanted) == 1:
        (key,) = wanted
        if key in OPERATORS:
            return key
    return None


def _selector(wanted: JsonValue, where: str) -> None:
    test = operator(wanted)
    if test is None:
        return
    assert isinstance(wanted, dict)
    value = wanted[test]
    if test == "in" and not isinstance(value, list):
        raise InputError(f"{where}.in: got {cut(repr(value), 80)}; expected a list of values")
    if test == "exists" and not isinstance(value, bool):
        raise InputError(f"{where}.exists: got {cut(repr(value), 80)}; expected true or false")
    if test == "not":
        _selector(value, f"{where}.not")


def _string(table: Mapping[str, object], key: str, where: str, default: str | None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        got = "nothing" if value is None else cut(repr(value), 80)
        raise InputError(f"{where}.{key}: got {got}; expected a non-empty string")
    return value


def _table(table: Mapping[str, object], key: str, where: str) -> dict[str, object]:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise InputError(f"{where}.{key}: got {cut(repr(value), 80)}; expected a table")
    return value


def _path(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.startswith(PARAM_ROOTS) or (
            value.startswith("task.") and value not in TASK_FIELDS
            and not value.startswith("task.criteria.")) or "" in value.split("."):
        raise InputError(f"{where}: got {cut(repr(value), 80)}; expected a dotted path in the "
                         "run: task.id, task.instruction, task.criteria.KEY or metadata.KEY")
    return value


def _map(raw: object, where: str) -> dict[str, tuple[str, str]]:
    """A ``map`` table: each key to its path and where it was declared."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}: got {cut(repr(raw), 80)}; expected a table of "
                         f"{', '.join(MAP_KEYS)}")
    reject_unknown(raw, MAP_KEYS, where)
    return {str(k): (_path(v, f"{where}.{k}"), f"{where}.{k}") for k, v in raw.items()}


def read_map(root: Path, section: Mapping[str, object], where: str) -> RunMap:
    """The run map of ``[tool.metaeval.meta_eval.map]`` and of each suite file's
    ``map``; one key declared twice is an error naming both places."""
    found = _map(section.get("map", {}), f"{where}.map")
    files = section.get("suite_files", [])
    for i, name in enumerate(files if isinstance(files, list) else []):
        data = _suite_data(root, name, f"{where}.suite_files[{i}]")[0]
        for key, (path, at) in _map(data.get("map", {}), f"{name}: map").items():
            if key in found:
                raise InputError(f"{at}: also declared at {found[key][1]}; expected one "
                                 "declaration a key")
            found[key] = (path, at)
    return RunMap(MappingProxyType({k: p for k, (p, _) in found.items()}),
                  MappingProxyType({k: w for k, (_, w) in found.items()}))


def suite_check(raw: object, where: str) -> SuiteCheck:
    """One declaration, checked; every error names ``where`` and the key."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}: got {cut(repr(raw), 80)}; expected a table with a grader")
    reject_unknown(raw, SUITE_KEYS, where)
    grader = _string(raw, "grader", where, None)
    name = _string(raw, "name", where, grader)
    params = _json(_table(raw, "params", where), f"{where}.params")
    selector = _json(_table(raw, "metadata", where), f"{where}.metadata")
    assert isinstance(params, dict) and isinstance(selector, dict)
    for key, wanted in selector.items():
        _selector(wanted, f"{where}.metadata.{key}")
    if "grader" in params or "name" in params:
        raise InputError(f"{where}.params: got a key 'grader' or 'name'; expected the "
                         "grader's parameters only (grader and name are keys of the check)")
    params_from = {str(k): _path(v, f"{where}.params_from.{k}")
                   for k, v in _table(raw, "params_from", where).items()}
    both = sorted(set(params) & set(params_from))
    if both:
        raise InputError(f"{where}.params_from.{both[0]}: also in params; expected each "
                         "parameter fixed or read from the run, not both")
    return SuiteCheck(grader, name, params, _string(raw, "tasks", where, "*"), selector,
                      MappingProxyType(params_from), where)


def _entries(raw: object, where: str) -> list[SuiteCheck]:
    if not isinstance(raw, list):
        raise InputError(f"{where}: got {cut(repr(raw), 80)}; expected an array of tables "
                         "([[...suite]])")
    checks = [suite_check(entry, f"{where}[{i}]") for i, entry in enumerate(raw)]
    return checks


def _suite_file(root: Path, name: object, where: str) -> list[SuiteCheck]:
    data, path = _suite_data(root, name, where)
    return _entries(data.get("suite", []), f"{path}: suite")


def _suite_data(root: Path, name: object, where: str) -> tuple[dict[str, object], Path]:
    if not isinstance(name, str) or not name:
        raise InputError(f"{where}: got {cut(repr(name), 80)}; expected a path")
    path = (root / name).resolve()
    if not path.is_relative_to(root.resolve()):
        raise InputError(f"{where}: got {name!r}; expected a path inside the project "
                         f"({root})")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"{where}: {name!r}: cannot read: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 (byte {e.start}); expected a TOML file") from e
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as e:
        raise InputError(f"{path}: not valid TOML: {cut(str(e), 120)}") from e
    reject_unknown(data, SUITE_FILE_KEYS, str(path))
    if data.get("format_version", SUITE_FILE_VERSION) != SUITE_FILE_VERSION:
        raise InputError(f"{path}: format_version: got {data['format_version']!r}; "
                         f"expected {SUITE_FILE_VERSION}")
    return data, path


def read_suite(root: Path, section: Mapping[str, object], where: str) -> tuple[SuiteCheck, ...]:
    """Every suite check of ``[tool.metaeval.meta_eval]`` (``section``, at ``where``):
    those written inline under ``suite``, then those of each file of ``suite_files``
    (paths relative to ``root``, the project). Two checks of one name are an error."""
    checks = _entries(section.get("suite", []), f"{where}.suite")
    files = section.get("suite_files", [])
    if not isinstance(files, list):
        raise InputError(f"{where}.suite_files: got {cut(repr(files), 80)}; expected a list "
                         "of paths")
    for i, name in enumerate(files):
        checks += _suite_file(root, name, f"{where}.suite_files[{i}]")
    seen: dict[str, str] = {}
    for check in checks:
        if check.label in seen:
            raise InputError(f"{check.where}: a check named {check.label!r} is already "
                             f"declared at {seen[check.label]}; expected one declaration a "
                             "name (set name to tell them apart)")
        seen[check.label] = check.where
    return tuple(checks)
