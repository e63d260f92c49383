"""Strategies shared by the fuzz tests: a JSON writer that can also write what
``json.dumps`` refuses to, odd values, and "break exactly one field" of a valid record.

A record is plain Python data (dicts, lists, str, int, float, bool, None). A
``Raw`` inside it is written verbatim, so a test can place ``NaN``, ``1e309``, a
400-digit number, a thousand ``[`` or a repeated key exactly where a field was.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hypothesis import strategies as st

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Raw:
    """JSON text written as is, where a value would be."""

    text: str


def dump(value: object, *, ascii_only: bool = True) -> str:
    """``value`` as one line of JSON text; ``Raw`` verbatim. With ``ascii_only``
    false, strings are written as UTF-8 text (a lone surrogate then makes the line
    invalid UTF-8 once encoded with ``surrogatepass``)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ", ".join(f"{dump(str(k), ascii_only=ascii_only)}: "
                               f"{dump(v, ascii_only=ascii_only)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump(v, ascii_only=ascii_only) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


def encode(text: str) -> bytes:
    """The line as bytes; a lone surrogate becomes the invalid UTF-8 it would be."""
    return text.encode("utf-8", "surrogatepass")


# --- values ------------------------------------------------------------------------------

# Characters that have broken loaders and printers before: NUL, right-to-left
# override, BOM, zero-width space, line and paragraph separators, quotes and
# backslashes, an astral-plane character, and the digits U+0664 and U+FF14.
ODD = "\x00\u202e\u200f\ufeff\u200b\u2028\u2029\"\\\n\t\r\x1b\U0001f600\u0664\uff14é"
CHARS = st.characters(codec="utf-8") | st.sampled_from(ODD)
texts = st.text(CHARS, max_size=24)
names = st.text(CHARS, min_size=1, max_size=16)
"""A non-empty string: ids, tool names."""
idents = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)

finite_floats = st.floats(allow_nan=False, allow_infinity=False)
json_leaves = (st.none() | st.booleans() | st.integers(-(10**6), 10**6) | finite_floats
               | texts | st.integers(10**399, 10**400))
json_values = st.recursive(
    json_leaves, lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(texts, inner, max_size=3), max_leaves=8)
json_objects = st.dictionaries(texts, json_values, max_size=4)

# Values a loader must refuse wherever they appear in a line: the JSON reader
# takes none of them.
POISON = (
    Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), Raw("1e309"), Raw("-1e309"),
    Raw("[" * 1000 + "]" * 1000), Raw('{"a": ' * 1000 + "1" + "}" * 1000),
    Raw("[" * 70 + "]" * 70), Raw("[" * 5000), Raw('{"k": 1, "k": 2}'),
    Raw('"\\ud800"'), Raw('"a\\udfffb"'), "\ud800", "x\udc00",
    Raw("1" * 5000),
)
poison = st.sampled_from(POISON)

# Values of the wrong type or out of range for most fields, but readable JSON.
ODD_VALUES: tuple[object, ...] = (
    None, True, False, 0, -1, 6, 99, 10**400, -(10**400), 1e308, -0.0, 0.5, "", " ",
    "\x00", "\u202e", "\ufeff", "\u0664", "\uff14", [], {}, [None], {"": None}, "pass ", "PASS",
    Raw("1E400"), Raw("0e0"), Raw("-0"), "x" * 5000,
)
odd_values = st.sampled_from(ODD_VALUES) | json_values


def nested(depth: int) -> object:
    """A list nested ``depth`` deep, as a value (not Raw): some depths load."""
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


# --- breaking exactly one field ----------------------------------------------------------


@dataclass(frozen=True)
class Break:
    """One change to a valid record: ``replace`` a value, ``drop`` a key, ``rename``
    a key, or add an ``unknown`` key next to it. ``must_fail``: the change makes
    the record invalid whatever the rest is, so a loader that takes it is wrong."""

    kind: str
    path: Path
    new: object = None
    must_fail: bool = False


OPEN = "*"
"""In a schema's keys: the object takes unknown keys (only the required ones count)."""

Schema = Callable[[dict[str, object], Path], "Mapping[str, bool] | None"]
"""For a record and the path of an object in it: the object's keys (True:
required) when the format closes it (an unknown key is an error); None for
free-form objects (states, tool arguments, criteria)."""


def key_paths(value: object, prefix: Path = ()) -> list[Path]:
    """The path of every key of every object in ``value``."""
    found: list[Path] = []
    if isinstance(value, dict):
        for k, v in value.items():
            found.append((*prefix, k))
            found.extend(key_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found.extend(key_paths(v, (*prefix, i)))
    return found


def at(record: object, path: Path) -> object:
    for part in path:
        record = record[part]  # type: ignore[index]
    return record


def typo(key: str) -> st.SearchStrategy[str]:
    """Near misses of ``key``: one character dropped, doubled or swapped."""
    options = {key[:i] + key[i + 1:] for i in range(len(key))}
    options |= {key[:i] + key[i] + key[i:] for i in range(len(key))}
    options |= {key[:i] + key[i + 1] + key[i] + key[i + 2:] for i in range(len(key) - 1)}
    options |= {key.upper(), key + " ", "\ufeff" + key}
    return st.sampled_from(sorted(o for o in options if o))


def unknown_keys(near: str) -> st.SearchStrategy[str]:
    return typo(near) | names | st.sampled_from(["\ud800", "\x00", "k" * 10_000, "__proto__"])


@st.composite
def breaks(draw: st.DrawFn, record: dict[str, object], schema: Schema) -> Break:
    """One way to break ``record``; ``must_fail`` from ``schema`` and the value."""
    paths = key_paths(record)
    path = draw(st.sampled_from(paths))
    parent, key = path[:-1], str(path[-1])
    keys = schema(record, parent)
    kind = draw(st.sampled_from(["replace", "replace", "poison", "drop", "rename", "unknown"]))
    if kind == "poison":
        return Break("replace", path, draw(poison), must_fail=True)
    if kind == "replace":
        new = draw(odd_values)
        return Break("replace", path, new, must_fail=_is_poison(new))
    if kind == "drop":
        return Break("drop", path, must_fail=bool(keys and keys.get(key)))
    new_key = draw(unknown_keys(key))
    siblings = at(record, parent)
    assert isinstance(siblings, dict)
    if new_key in siblings:  # a key the object has already: no new key, only one fewer
        return Break("drop", path, must_fail=bool(keys and keys.get(key)))
    closed = keys is not None and OPEN not in keys and new_key not in keys
    must_fail = closed or _is_poison(new_key) or (
        kind == "rename" and bool(keys and keys.get(key)))
    return Break(kind, path, new_key, must_fail=must_fail)


def _is_poison(value: object) -> bool:
    return (isinstance(value, Raw) and value in POISON) or (
        isinstance(value, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in value))


def apply(record: dict[str, object], brk: Break) -> dict[str, object]:
    """A deep copy of ``record`` with ``brk`` made; key order is kept."""
    out = copy.deepcopy(record)
    parent = at(out, brk.path[:-1])
    key = brk.path[-1]
    if isinstance(parent, list) and isinstance(key, int):
        assert brk.kind == "replace"
        parent[key] = brk.new
        return out
    assert isinstance(parent, dict)
    if brk.kind == "replace":
        parent[key] = brk.new
    elif brk.kind == "drop":
        del parent[key]
    elif brk.kind == "unknown":
        parent[str(brk.new)] = 1
    else:  # rename, in place
        items = [(str(brk.new) if k == key else k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)
    return out


bad_bytes = st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf",
                             b"\xc0\xaf", b"\xf4\x90\x80\x80"])


@st.composite
def corrupted(draw: st.DrawFn, line: bytes) -> bytes:
    """``line`` with bytes that are not UTF-8 (or a NUL, or a BOM) put somewhere."""
    where = draw(st.integers(0, len(line)))
    return line[:where] + draw(bad_bytes) + line[where:]


raw_lines = st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" "))


def blank(line: bytes) -> bool:
    """Whether a JSON Lines reader skips ``line`` as empty (UTF-8 whitespace only)."""
    try:
        return not line.decode("utf-8").strip()
    except UnicodeDecodeError:
        return False
