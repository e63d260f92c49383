"""Read a previous ``metaeval meta-eval --format json`` result as a baseline.

Loading only: it turns the file into ``BaselineCheck`` values by check name
and never judges them. A malformed baseline is an InputError naming the file,
the field and the bad value.
"""

from __future__ import annotations

from pathlib import Path

from metaeval.audit.check_measures import BaselineCheck
from metaeval.errors import InputError, shown
from metaeval.untrusted_json import JsonInputError, read_json_file


def _number(entry: dict[str, object], key: str, where: str) -> float:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{where}.{key}: got {shown(value)}; expected a number")
    return float(value)


def _check(entry: object, where: str) -> tuple[str, BaselineCheck]:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise InputError(f"{where}: got {shown(entry)}; expected an object with a 'name'")
    flags = entry.get("flags", [])
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise InputError(f"{where}.flags: got {shown(flags)}; expected a list of strings")
    return entry["name"], BaselineCheck(_number(entry, "tpr", where), _number(entry, "tnr", where),
                                        _number(entry, "kappa", where), tuple(flags))


def load_baseline(path: Path) -> dict[str, BaselineCheck]:
    """Checks (and the evaluator, under its name) of a previous JSON result."""
    try:
        document = read_json_file(path)
    except (OSError, JsonInputError) as e:
        raise InputError(f"{path}: cannot read the baseline: {e}; expected the JSON that "
                         "'metaeval meta-eval --format json' writes") from e
    checks = document.get("checks") if isinstance(document, dict) else None
    if not isinstance(document, dict) or not isinstance(checks, list):
        raise InputError(f"{path}: checks: missing or not a list; expected the JSON that "
                         "'metaeval meta-eval --format json' writes")
    result = dict(_check(entry, f"{path}: checks[{i}]") for i, entry in enumerate(checks))
    if "evaluator" in document:
        name, check = _check(document["evaluator"], f"{path}: evaluator")
        result[name] = check
    return result
