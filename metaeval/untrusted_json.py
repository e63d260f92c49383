"""Read JSON that other people wrote: data files, result files, the caches under ``.metaeval/``.

``json.loads`` alone is not fit for text we did not write. It recurses once per
nesting level, so a line of a thousand ``[`` raises ``RecursionError`` and loses
the whole file; a key repeated in one object silently keeps its last value; it
reads ``NaN``, ``Infinity`` and ``1e999`` (as infinity); and it returns lone
surrogates (``"\\ud800"``) that pass every check and then crash the first print.
Here each of these is a ``JsonInputError`` naming the field, and no text makes
``parse_json`` raise anything else.

JSON Lines files are read as bytes and split on newlines first, then each line
is decoded and parsed on its own: one line that is not UTF-8, not JSON or too
deep is a file:line error, and the other lines still load. A UTF-8 byte order
mark before the first line is skipped.

This module only reads: it never imports or calls anything a file names.
"""

from __future__ import annotations

import codecs
import errno
import itertools
import json
import math
import os
import re
import stat
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

from metaeval.contract import JsonValue
from metaeval.data_paths import kind_of, read_bounded
from metaeval.errors import InputError, clipped, shown

MAX_DEPTH = 64
"""Nesting levels a value may have; each ``[`` or ``{`` is one.

The bound protects more than the parser. Code that reads a loaded value later
walks it recursively too: the state diff over ``initial_state`` and
``final_state`` nests a generator per level, and ``repr`` and ``json.dumps``
recurse when a report or an error shows the value. They run on a stack that
click, pytest or the runner has already made a hundred or more frames deep,
under Python's limit of 1,000. At 64 levels even a walk of three frames a level
stays far below that limit, and records are far shallower: a meta-set line
holds its states at level 2 and tool arguments at level 4, and real states
rarely nest ten levels more.
"""

# A string runs to its closing quote, or to the end of an unterminated text: a
# scan that failed there would start again at every escaped quote inside,
# quadratic in the length of the text.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_STRING_OR_BRACKET = re.compile(_STRING.pattern + r"|[\[\]{}]", re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_ONE_KIND = str.maketrans("{}", "[]")
# Only text with a \uD800-\uDFFF escape can hold a lone surrogate: strict UTF-8
# decoding refuses an encoded one. The escape of a valid pair matches too; the
# walk that follows then finds nothing wrong.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonInputError(InputError):
    """A JSON text we cannot take; ``field`` is the dotted path at fault ("" for
    the text as a whole), ``message`` says what was found and what was expected."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


# --- one JSON text ----------------------------------------------------------------------


def _check_depth(text: str, max_depth: int) -> None:
    if text.count("[") + text.count("{") <= max_depth:
        return  # too few brackets to nest too deep: the common case, and cheap
    # The brackets outside strings, each pass taking away the innermost pairs: a
    # balanced text is empty after as many passes as it nests deep. All in C: a
    # walk of every token in Python took 0.36 s on a run's 14 MB result cache.
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_ONE_KIND)
    for _ in range(max_depth):
        if not brackets:
            return
        fewer = brackets.replace("[]", "")
        if len(fewer) == len(brackets):
            break  # unbalanced: not JSON, and the walk below says where it got deep
        brackets = fewer
    if not brackets:
        return
    # Too deep (or unbalanced): where, token by token.
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token == "[" or token == "{":
            depth += 1
            if depth > max_depth:
                raise json.JSONDecodeError(f"nested deeper than {max_depth} levels", text,
                                           match.start())
        elif token == "]" or token == "}":
            depth -= 1  # a string token changes nothing


def _no_constant(name: str) -> JsonValue:
    raise ValueError(f"{name} is not a JSON number")


class _Reader:
    """One parse: remembers the objects that had a key twice, and whether a
    number was too large for a float, so that the walk can name where."""

    def __init__(self) -> None:
        self.repeated: dict[int, str] = {}
        self._kept: list[dict[str, JsonValue]] = []  # alive, so no other object gets its id
        self.infinite = False

    def object(self, pairs: list[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen and id(obj) not in self.repeated:
                    self.repeated[id(obj)] = key
                    self._kept.append(obj)
                seen.add(key)
        return obj

    def number(self, text: str) -> float:
        value = float(text)
        self.infinite = self.infinite or not math.isfinite(value)
        return value


def join_field(path: str, key: str) -> str:
    """``path.key`` for an error's field, the key bounded and escaped where it has
    to be: a key is data too, and may be 10 MB long or hold a control character."""
    part = clipped(key, 40) if key.isprintable() else shown(key, 40)
    return f"{path}.{part}" if path else part


def _bad_string(text: str) -> str | None:
    """Why a string cannot be taken, or None."""
    surrogate = _SURROGATE.search(text)
    if surrogate is None:
        return None
    return (f"got {shown(text)} with a lone surrogate {surrogate.group()!r} at character "
            f"{surrogate.start()}; expected valid Unicode text (\\ud800-\\udfff escapes "
            "come only in pairs)")


def _walk(value: JsonValue, reader: _Reader) -> None:
    """Find the first repeated key, lone surrogate or infinite number; iterative,
    so that it needs no stack of its own."""
    stack: list[tuple[str, JsonValue]] = [("", value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            if id(node) in reader.repeated:
                raise JsonInputError(join_field(path, reader.repeated[id(node)]),
                                     "the key appears twice in one object; expected each key "
                                     "once (the last would silently win)")
            for key, child in reversed(node.items()):
                where = join_field(path, key)
                problem = _bad_string(key)
                if problem is not None:
                    raise JsonInputError(where, f"key {problem}")
                stack.append((where, child))
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", child) for i, child in reversed(list(enumerate(node))))
        elif isinstance(node, str):
            problem = _bad_string(node)
            if problem is not None:
                raise JsonInputError(path, problem)
        elif isinstance(node, float) and not math.isfinite(node):
            raise JsonInputError(path, "got a number too large for a float (it reads as "
                                 "infinity); expected a finite number")


def parse_json(text: str, *, max_depth: int = MAX_DEPTH) -> JsonValue:
    """One JSON text to a value, or ``JsonInputError``: never another exception.
    ``max_depth`` is lower for JSON held in a string inside a value already read."""
    reader = _Reader()
    try:
        _check_depth(text, max_depth)
        value: JsonValue = json.loads(text, object_pairs_hook=reader.object,
                                      parse_float=reader.number, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:  # RecursionError: a stack already deep
        raise JsonInputError("", f"not valid JSON: {clipped(str(e), 200)}") from e
    if reader.repeated or reader.infinite or _SURROGATE_ESCAPE.search(text):
        _walk(value, reader)
    return value


DATA_LIMIT = 1 << 30
"""Bytes of one data, cache or result file: far past any real one, and a file
that is not one (``/dev/zero`` linked in as a cache) never eats the memory."""


def _read_regular(path: Path) -> bytes:
    """The bytes of the regular file at ``path``, links followed (a user's linked
    meta-set is read); a device, fifo or file past ``DATA_LIMIT`` is a
    ``JsonInputError``, an ``OSError`` is left to the caller."""
    try:
        real = path.resolve()
    except RuntimeError as e:  # a link loop on Python 3.11; later ones raise OSError
        raise OSError(errno.ELOOP, str(e), str(path)) from e
    try:
        return read_bounded(real, DATA_LIMIT, str(path))
    except JsonInputError:
        raise
    except InputError as e:
        raise JsonInputError("", str(e).removeprefix(f"{path}: ")) from e


def read_regular(path: Path) -> bytes:
    """The bytes of a data file the user named, at most ``DATA_LIMIT`` of them, links
    followed; a device, fifo or larger file is a ``JsonInputError``, an ``OSError``
    is left to the caller."""
    return _read_regular(path)


def open_regular(path: Path) -> BinaryIO:
    """The regular file at ``path`` open for reading, links followed; a device, fifo
    or directory is a ``JsonInputError`` before a byte is read (opened without
    blocking, so a fifo never waits for a writer). No size bound: JSON Lines are
    read a line at a time. An ``OSError`` is left to the caller."""
    try:
        real = path.resolve()
    except RuntimeError as e:  # a link loop on Python 3.11; later ones raise OSError
        raise OSError(errno.ELOOP, str(e), str(path)) from e
    fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise JsonInputError("", f"{str(path)!r} is {kind_of(mode)}; expected a regular "
                                 "file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_json_file(path: Path) -> JsonValue:
    """A file holding one JSON document; an ``OSError`` is left to the caller (a
    missing cache is not an error, a missing findings file may be)."""
    return parse_json(_decoded(_read_regular(path).removeprefix(codecs.BOM_UTF8)))


def _decoded(data: bytes) -> str:
    """UTF-8 text, or a ``JsonInputError`` naming the line and column of the bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise JsonInputError("", f"not UTF-8: byte {data[e.start]:#04x} at line {line} column "
                             f"{column}; expected UTF-8 text") from e


# --- JSON Lines: one record a line, errors by file and line ----------------------------


@dataclass(frozen=True, slots=True)
class LoadError:
    """One problem in one line of one file (line 0: the file itself)."""

    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        field = f" {self.field}:" if self.field else ""
        return f"{where}:{field} {self.message}"


@dataclass(frozen=True, slots=True)
class Record:
    """One parsed line of a JSON Lines file."""

    path: Path
    line: int
    value: JsonValue

    @property
    def source(self) -> str:
        """``file:line``, for messages that point back to the record."""
        return f"{self.path}:{self.line}"

    def error(self, field: str, message: str) -> LoadError:
        return LoadError(str(self.path), self.line, field, message)


def read_jsonl(path: Path, errors: list[LoadError],
               torn: list[LoadError] | None = None) -> Iterator[Record]:
    """Every good line of one file; each bad one becomes an error in ``errors``.
    Lines are yielded as they are read, so that the caller's own errors about a
    record and this reader's errors come out in the order of the lines; the file is
    read a line at a time, so a large one is never held whole.

    ``torn``: for a file written a line at a time (a labels file), a bad last line
    with no newline at its end is a write that never finished, not a mistake in the
    file: it goes to ``torn`` (to be said and left out) instead of ``errors``."""
    try:
        with open_regular(path) as f:
            yield from _records(path, f, errors, torn)
    except (OSError, JsonInputError) as e:
        errors.append(LoadError(str(path), 0, "", f"cannot read: {e}"))


def _records(path: Path, lines: Iterable[bytes], errors: list[LoadError],
             torn: list[LoadError] | None = None) -> Iterator[Record]:
    for number, line in enumerate(lines, start=1):
        # The same lines as split(b"\n") of the whole file: only "\n" ends a line.
        ended = line.endswith(b"\n")
        raw = line[:-1] if ended else line
        if number == 1:
            raw = raw.removeprefix(codecs.BOM_UTF8)
        bad = errors if ended or torn is None else torn
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            bad.append(_torn(path, number, raw) if bad is torn else LoadError(
                str(path), number, "", f"not UTF-8: byte {raw[e.start]:#04x} at column "
                f"{e.start + 1}; expected UTF-8 text"))
            continue
        if not text.strip():
            continue
        try:
            value = parse_json(text)
        except JsonInputError as e:
            bad.append(_torn(path, number, raw) if bad is torn
                       else LoadError(str(path), number, e.field, e.message))
            continue
        yield Record(path, number, value)


def _torn(path: Path, number: int, raw: bytes) -> LoadError:
    return LoadError(str(path), number, "", (
        f"a torn last line ({len(raw)} bytes with no newline at the end, not valid JSON: a "
        "write that never finished): left out; it began "
        f"{shown(raw[:40].decode(errors='replace'))}"))


def read_json_or_lines(path: Path, errors: list[LoadError]) -> Iterator[Record]:
    """One JSON document over many lines (line 0), or JSON Lines, told apart by the
    first line that is not blank: alone ``{`` or ``[`` opens a pretty-printed
    document, which is read whole (at most ``DATA_LIMIT`` bytes) and is one error
    when bad (its NaN or its byte that is not UTF-8 named once, not a line at a
    time); anything else is JSON Lines, read a line at a time as ``read_jsonl``."""
    try:
        with open_regular(path) as f:
            head: list[bytes] = []
            for line in f:
                head.append(line)
                if line.strip():
                    break
            opening = head[-1].strip().removeprefix(codecs.BOM_UTF8) if head else b""
            if opening not in (b"{", b"["):
                yield from _records(path, itertools.chain(head, f), errors)
                return
            data = b"".join(head) + f.read(DATA_LIMIT + 1 - sum(map(len, head)))
        if len(data) > DATA_LIMIT:
            raise JsonInputError("", f"{str(path)!r} holds more than {DATA_LIMIT} bytes; "
                                 f"expected at most {DATA_LIMIT}")
        value = parse_json(_decoded(data.removeprefix(codecs.BOM_UTF8)))
    except (OSError, JsonInputError) as e:
        errors.append(LoadError(str(path), 0, "", f"cannot read: {e}"))
        return
    yield Record(path, 0, value)


class FirstUse:
    """Where each key (an id, or a tuple) was first used across the files read, so
    that a repeat is refused with a pointer to the first."""

    def __init__(self) -> None:
        self._at: dict[Hashable, str] = {}

    def earlier(self, key: Hashable, source: str) -> str | None:
        """Where ``key`` was used before ``source``; None when this is its first use."""
        first = self._at.setdefault(key, source)
        return None if first == source else first


def repeated_id(record: Record, value: str, first: str) -> LoadError:
    """The error for an id that an earlier record already has."""
    return record.error("id", f"got {shown(value)}; expected an id not already used "
                              f"(first at {first})")


T = TypeVar("T")


def load_unique(files: Iterable[Path], errors: list[LoadError],
                parse: Callable[[Record, list[LoadError]], T | None],
                key: Callable[[T], Hashable],
                repeated: Callable[[Record, T, str], LoadError]) -> list[T]:
    """Every record of every file that ``parse`` accepts and whose ``key`` no earlier
    record used, in file and line order. ``parse`` appends its own errors about a
    record and returns None for a bad one; a repeated key is the error ``repeated``
    makes (given the record, its value and where the key was first used), so a
    record is never counted twice. Errors land in ``errors`` in line order."""
    return list(iter_unique(files, errors, parse, key, repeated))


def iter_unique(files: Iterable[Path], errors: list[LoadError],
                parse: Callable[[Record, list[LoadError]], T | None],
                key: Callable[[T], Hashable],
                repeated: Callable[[Record, T, str], LoadError]) -> Iterator[T]:
    """``load_unique``, one record at a time: a caller that uses each and lets it go
    holds only the keys seen (for the repeats), never every record."""
    keys = FirstUse()
    for path in files:
        for record in read_jsonl(path, errors):
            value = parse(record, errors)
            if value is None:
                continue
            first = keys.earlier(key(value), record.source)
            if first is not None:
                errors.append(repeated(record, value, first))
                continue
            yield value
