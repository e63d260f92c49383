"""What the judge-log importers share: the converted records, reading a log's
lines, the file:line errors, and checked fields. Never writes a file."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import regex

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import BadField, InputError, shown_json
from metaeval.untrusted_json import (
    JsonInputError,
    LoadError,
    Record,
    open_regular,
    read_json_file,
    read_jsonl,
)

Bad = BadField
"""A field that cannot be mapped: raised with the field and what was expected."""
got = shown_json


@dataclass(frozen=True, slots=True)
class Converted:
    """Judge items and recorded verdicts, as JSON objects ready to be written."""

    items: tuple[JsonObject, ...]
    recorded: tuple[JsonObject, ...]


@dataclass(frozen=True, slots=True)
class LogOptions:
    """What ``judge-import FORMAT`` passes every log importer: the items' id prefix,
    and the annotator's seed where the format's order shown depends on one."""

    prefix: str
    seed: int = 0


Sniff = Callable[[bytes, Path], bool]
"""Whether a format claims a file, from its first bytes (``JUDGE_HEAD`` of them) and
its path."""


@dataclass(frozen=True, slots=True)
class JudgeLogFormat:
    """One published judge-log format, as the registry
    (``metaeval.importers.JUDGE_FORMATS``) holds it: its ``judge-import`` name, what
    it reads (the command's help), the default id prefix, whether it takes
    ``--seed``, the note printed after a conversion, its converter, and which files
    it claims (``sniff``: ``judge-import auto`` picks the one format that does). The
    CLI builds one command a format from this, with one option stack."""

    name: str
    summary: str
    prefix: str
    convert: Callable[[Path, LogOptions], Converted]
    hint: str
    sniff: Sniff
    seeded: bool = False


def file_head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of ``path``, which a format's ``sniff`` reads to claim
    it (run formats and judge logs alike); a file that cannot be read is an
    ``InputError`` naming it."""
    try:
        with open_regular(path) as f:
            return f.read(size)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from e
    except JsonInputError as e:
        raise InputError(f"{path}: {e}") from e


def first_keys(head: bytes, *, array: bool) -> frozenset[str]:
    """The keys of a log's first record when it lies whole in ``head`` (the file's
    first bytes): the first line of a JSON Lines log, or with ``array`` the first
    element of a JSON array; empty otherwise (a record cut by the head, or not an
    object). The keys a tool writes tell its log; a file's name never does."""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if text.startswith("[") != array:
        return frozenset()
    try:
        # raw_decode reads the first value and stops: the rest of the head is not read.
        value, _ = json.JSONDecoder().raw_decode(text[1:].lstrip() if array else text)
    except (ValueError, RecursionError):
        return frozenset()
    return frozenset(value) if isinstance(value, dict) else frozenset()


def keys_sniff(*keys: str, array: bool = False, absent: tuple[str, ...] = ()) -> Sniff:
    """A format's ``sniff``: the first record has every one of ``keys`` and none of
    ``absent``."""
    def sniff(head: bytes, path: Path) -> bool:
        found = first_keys(head, array=array)
        return set(keys) <= found and not found & set(absent)
    return sniff


def jsonl_records(path: Path) -> Iterator[Record]:
    """Every line of a JSON Lines log; the first unreadable line ends the import."""
    errors: list[LoadError] = []
    for record in read_jsonl(path, errors):
        if errors:
            break
        yield record
    if errors:
        raise InputError(str(errors[0]))


def json_array(path: Path) -> list[JsonValue]:
    try:
        data = read_json_file(path)
    except (OSError, JsonInputError) as e:
        raise InputError(f"{path}: cannot read: {e}") from e
    if not isinstance(data, list):
        raise InputError(f"{path}: got {got(data)}; expected a JSON array of records")
    return data


def text(obj: JsonObject, key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise Bad(key, f"got {got(value)}; expected a string")
    return value


def as_object(value: JsonValue, field: str = "") -> JsonObject:
    if not isinstance(value, dict):
        raise Bad(field, f"got {got(value)}; expected a JSON object")
    return value


def fail_on(errors: Sequence[str], path: Path) -> None:
    """Raise one InputError naming every record that could not be mapped (at most
    20 shown), so nothing half-converted is written."""
    if errors:
        shown = "\n".join(errors[:20])
        more = f"\n... and {len(errors) - 20} more" if len(errors) > 20 else ""
        raise InputError(f"{path}: {len(errors)} record(s) could not be mapped; nothing "
                         f"written:\n{shown}{more}")


def unique(ids: list[str], where: list[str]) -> list[str]:
    """An error per id used twice, naming both places."""
    first: dict[str, str] = {}
    errors = []
    for item_id, at in zip(ids, where, strict=True):
        if item_id in first:
            errors.append(f"{at}: id: got {item_id!r}; expected an id not already used "
                          f"(first at {first[item_id]})")
        first.setdefault(item_id, at)
    return errors


MATCH_SECONDS = 1.0
"""CPU time one layout pattern may take on one prompt text. The text is another
person's: a prompt crafted to make the pattern backtrack is an error, not a hang."""


def layout(pattern: regex.Pattern[str], value: str, field: str, expected: str,
           *, whole: bool = True) -> regex.Match[str]:
    """``pattern`` matched on ``value`` (the whole of it, or found in it), within
    ``MATCH_SECONDS``; raises Bad naming ``field`` when it does not match in time."""
    try:
        found = (pattern.fullmatch(value, timeout=MATCH_SECONDS) if whole
                 else pattern.search(value, timeout=MATCH_SECONDS))
    except TimeoutError:
        raise Bad(field, f"took more than {MATCH_SECONDS:g} s to read; expected "
                  f"{expected}") from None
    if found is None:
        raise Bad(field, f"not {expected}")
    return found


def judge_named(value: JsonValue) -> JsonObject:
    """``{"judge": NAME}`` for a recorded verdict from the name the tool logged (a
    non-empty string), or ``{}`` when the log names none: the name is kept so that
    several judges' logs read together can be audited side by side."""
    if isinstance(value, str) and value.strip():
        return {"judge": value}
    return {}
