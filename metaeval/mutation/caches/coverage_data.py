"""A coverage map's fields read back from a file: the coverage cache another run
left under ``.metaeval/``, or the ``--coverage`` file another CI job traced.

Either file is data, and its numbers decide results: a test's duration sets the
time limit of each mutant it runs (``-1e9`` seconds turns a survivor into a
detected Timeout, ``1e308`` or ``NaN`` makes the limit unreachable), and an index
into a record's tests that points past them crashes the selection. So every
field is checked here, type and range, before any of it reaches the runner:
durations within ``limits.SECONDS``, line numbers within ``limits.LINE``, test
indices within the record's own tests, ids and names strings. The first bad
field is a ``JsonInputError`` naming it; the caller decides what that means (a
cold cache with a warning, or exit 2 for a file given on the command line).

This module only reads values already parsed by ``untrusted_json``: it opens no
file, hashes none and never imports or calls anything a value names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from metaeval.contract import JsonValue
from metaeval.errors import shown
from metaeval.mutation.caches.source_shape import Function, Shape
from metaeval.mutation.limits import LINE, SECONDS, Range
from metaeval.mutation.wire import CodeRun
from metaeval.untrusted_json import JsonInputError, join_field

REQUIRED = ("salt", "tests", "digests", "shapes", "ran")
"""The fields every map has (``others``, the untraced tests' times, may be absent)."""


@dataclass(frozen=True, slots=True)
class MapFields:
    """A coverage map's fields, each checked."""

    salt: str
    tests: dict[str, float]
    """Passed test id to its duration in seconds."""
    others: dict[str, float]
    """Skipped and untraced tests' durations."""
    digests: dict[str, str]
    shapes: dict[str, Shape]
    ran: tuple[CodeRun, ...]


def _bad(field: str, value: object, expected: str) -> JsonInputError:
    return JsonInputError(field, f"got {shown(value)}; expected {expected}")


def _text(value: JsonValue, field: str, expected: str = "a string") -> str:
    if not isinstance(value, str):
        raise _bad(field, value, expected)
    return value


def _number(value: JsonValue, field: str, allowed: Range) -> int | float:
    if not allowed.holds(value):
        raise _bad(field, value, allowed.expected)
    assert isinstance(value, int | float)
    return value


def _object(value: JsonValue, field: str, expected: str) -> dict[str, JsonValue]:
    if not isinstance(value, dict):
        raise _bad(field, value, expected)
    return value


def _list(value: JsonValue, field: str, expected: str) -> list[JsonValue]:
    if not isinstance(value, list):
        raise _bad(field, value, expected)
    return value


def durations(value: JsonValue, field: str) -> dict[str, float]:
    """An object of test id to seconds."""
    found = _object(value, field, "an object of test id to seconds")
    return {test: float(_number(seconds, join_field(field, test), SECONDS))
            for test, seconds in found.items()}


def code_run(value: JsonValue, field: str) -> CodeRun:
    """One record of the code a function's tests ran (``CodeRun.to_json``)."""
    data = _object(value, field, "a record of code a test ran")
    for name in ("module", "file", "line", "name", "tests"):
        if name not in data:
            raise JsonInputError(join_field(field, name), "missing; expected in every record "
                                 "of code a test ran")
    tests = tuple(_text(t, f"{field}.tests[{i}]", "a test id")
                  for i, t in enumerate(_list(data["tests"], f"{field}.tests",
                                              "a list of test ids")))
    # An index is checked against this record's own tests: one past them would
    # be an IndexError in the middle of a run (``coverage.Coverage.from_runs``).
    indices = Range(0, len(tests) - 1, f"an index into this record's {len(tests)} tests",
                    integer=True)
    groups = []
    for g, group in enumerate(_list(data.get("lines", []), f"{field}.lines",
                                    "a list of [line numbers, test indices]")):
        where = f"{field}.lines[{g}]"
        pair = _list(group, where, "[line numbers, test indices]")
        if len(pair) != 2:
            raise _bad(where, group, "[line numbers, test indices]")
        numbers = tuple(int(_number(n, f"{where}[0][{i}]", LINE)) for i, n in
                        enumerate(_list(pair[0], f"{where}[0]", "a list of line numbers")))
        chosen = tuple(int(_number(t, f"{where}[1][{i}]", indices)) for i, t in
                       enumerate(_list(pair[1], f"{where}[1]", "a list of test indices")))
        groups.append((numbers, chosen))
    # Absent in a map written before it was recorded: the function's own tests only.
    at_import = data.get("at_import", False)
    if not isinstance(at_import, bool):
        raise _bad(f"{field}.at_import", at_import, "true or false")
    return CodeRun(_text(data["module"], f"{field}.module", "a module name"),
                   _text(data["file"], f"{field}.file", "a file name"),
                   int(_number(data["line"], f"{field}.line", LINE)),
                   _text(data["name"], f"{field}.name", "a function's name"),
                   tests, tuple(groups), at_import)


def shape(value: JsonValue, field: str) -> Shape:
    """A file's shape (``Shape.to_json``): its skeleton's digest and its functions."""
    data = _object(value, field, "a file's shape")
    functions = _object(data.get("functions"), f"{field}.functions",
                        "an object of function name to [start, end, digest]")
    found: dict[str, Function] = {}
    for name, entry in functions.items():
        where = join_field(f"{field}.functions", name)
        parts = _list(entry, where, "[start line, end line, digest]")
        if len(parts) != 3:
            raise _bad(where, entry, "[start line, end line, digest]")
        found[name] = Function(int(_number(parts[0], f"{where}[0]", LINE)),
                               int(_number(parts[1], f"{where}[1]", LINE)),
                               _text(parts[2], f"{where}[2]", "a digest"))
    return Shape(_text(data.get("skeleton"), f"{field}.skeleton", "a digest"), found)


def map_fields(document: JsonValue) -> MapFields:
    """Every field of a coverage map (``CoverageMap.document``), checked; the first
    bad one is a ``JsonInputError`` naming it."""
    data = _object(document, "", "an object written by metaeval mutate")
    for name in REQUIRED:
        if name not in data:
            raise JsonInputError(name, "missing; expected in every coverage map metaeval "
                                 "writes")
    digests = _object(data["digests"], "digests", "an object of file name to its sha256")
    shapes = _object(data["shapes"], "shapes", "an object of file name to its shape")
    return MapFields(
        _text(data["salt"], "salt", "[format, metaeval version, packages, pytest arguments]"),
        durations(data["tests"], "tests"), durations(data.get("others", {}), "others"),
        {name: _text(d, join_field("digests", name), "a sha256") for name, d in digests.items()},
        {name: shape(s, join_field("shapes", name)) for name, s in shapes.items()},
        tuple(code_run(r, f"ran[{i}]")
              for i, r in enumerate(_list(data["ran"], "ran",
                                          "a list of the code each test ran"))))


def known_shapes(fields: MapFields) -> Mapping[str, tuple[str, Shape]]:
    """The map's shapes with their files' digests, for files it has both of."""
    return {name: (fields.digests[name], s) for name, s in fields.shapes.items()
            if name in fields.digests}
