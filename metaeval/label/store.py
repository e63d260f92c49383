"""The labels file of a labelling session, kept whole on disk at every moment.

A row is a run's label (``run_id, check, label, annotator[, rationale]``, read by
``metaeval.loaders.labels_files``) or a judge item's (``item_id, label, annotator[, rationale,
shown]``, read by ``metaeval.loaders.item_labels``), one JSON object a line. A label
given for the first time is appended as one line in one ``write`` and synced
before the page hears it was kept; a label changed is rewritten in place by
``write_atomic`` (temp file, fsync, rename). So killing the server at any moment
leaves every label the page was told about, and never two rows for one
annotator's (target, check), which the readers refuse.

The file is data: on opening it every row is checked as its reader checks it,
and a bad one is an ``InputError`` naming ``file:line``, never a row skipped and
then lost by the next rewrite. This module never reads the runs or items.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import InputError, OutputError, shown
from metaeval.files import write_atomic
from metaeval.loaders.item_labels import parse_row
from metaeval.loaders.labels_files import COLUMNS as RUN_COLUMNS
from metaeval.loaders.labels_files import LABELS as RUN_LABELS
from metaeval.loaders.labels_files import MAX_FIELD
from metaeval.untrusted_json import LoadError, read_jsonl

RUN = "run"
ITEM = "item"


@dataclass(frozen=True, slots=True)
class Key:
    """What one row labels: one annotator's label of one check of a run (``*`` the
    overall verdict), or of a judge item (``check`` empty)."""

    kind: str
    target: str
    check: str
    annotator: str


def key_of(row: JsonObject) -> Key:
    """The key of a row already checked by ``check_row``."""
    if "run_id" in row:
        return Key(RUN, str(row["run_id"]), str(row["check"]), str(row["annotator"]))
    return Key(ITEM, str(row["item_id"]), "", str(row["annotator"]))


def check_row(value: JsonValue) -> JsonObject:
    """``value`` when it is a row one of the two readers takes; else ``ValueError``
    with ``column: message``."""
    if not isinstance(value, dict):
        raise ValueError(f"got {shown(value)}; expected a JSON object")
    if "item_id" in value and "run_id" not in value:
        parse_row(value, "")
        return value
    unknown = sorted(set(value) - set(RUN_COLUMNS))
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown column; expected {', '.join(RUN_COLUMNS)}, "
                         "or item_id for a judge item")
    for column in ("run_id", "check", "label", "annotator"):
        text = value.get(column)
        if not isinstance(text, str) or not text:
            got = "nothing" if text is None or text == "" else shown(text)
            raise ValueError(f"{column}: got {got}; expected a non-empty string")
    for column in RUN_COLUMNS:
        text = value.get(column, "")
        if not isinstance(text, str) or len(text) > MAX_FIELD:
            raise ValueError(f"{column}: got {shown(text)}; expected a string of at most "
                             f"{MAX_FIELD} characters")
    if value["label"] not in RUN_LABELS:
        raise ValueError(f"label: got {shown(value['label'])}; expected 'pass', 'fail' or "
                         "'unsure'")
    return value


def read_rows(path: Path) -> list[tuple[str, JsonObject]]:
    """Every row of the labels file ``path`` with its ``file:line``; an ``InputError``
    naming each bad row, and each second row for one key."""
    errors: list[LoadError] = []
    rows: list[tuple[str, JsonObject]] = []
    first: dict[Key, str] = {}
    for record in read_jsonl(path, errors):
        try:
            row = check_row(record.value)
        except ValueError as e:
            errors.append(record.error("", str(e)))
            continue
        key = key_of(row)
        if key in first:
            errors.append(record.error("annotator", (
                f"{shown(key.annotator)} already labelled {key.kind} {shown(key.target)}"
                f"{f' check {shown(key.check)}' if key.check else ''} (at {first[key]}); "
                "expected one label per annotator")))
            continue
        first[key] = record.source
        rows.append((record.source, row))
    if errors:
        raise InputError("\n".join(str(e) for e in errors))
    return rows


class LabelStore:
    """The rows of one labels file, in memory and on disk alike; safe to call from the
    server's threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._rows: dict[Key, JsonObject] = {}
        if path.exists():
            for _, row in read_rows(path):
                self._rows[key_of(row)] = row
            if path.stat().st_size and not path.read_bytes().endswith(b"\n"):
                self._rewrite()  # a last line with no newline: the next append needs one

    def rows(self) -> list[JsonObject]:
        """Every row, in the order first given."""
        with self._lock:
            return list(self._rows.values())

    def __iter__(self) -> Iterator[JsonObject]:
        return iter(self.rows())

    def get(self, key: Key) -> JsonObject | None:
        with self._lock:
            return self._rows.get(key)

    def put(self, row: JsonObject) -> None:
        """Keep ``row`` (checked first) on disk before returning: appended when its key
        is new, the file rewritten atomically when it replaces a row."""
        try:
            check_row(row)
        except ValueError as e:
            raise InputError(f"a label: {e}") from e
        key = key_of(row)
        with self._lock:
            before = self._rows.get(key)
            if before == row:
                return
            self._rows[key] = row
            try:
                if before is None:
                    self._append(row)
                else:
                    self._rewrite()
            except OutputError:
                if before is None:
                    del self._rows[key]
                else:
                    self._rows[key] = before
                raise

    def _append(self, row: JsonObject) -> None:
        line = (json.dumps(row, ensure_ascii=False) + "\n").encode()
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                # One write of the whole line: a kill between two writes cannot leave half.
                if os.write(fd, line) != len(line):
                    raise OSError("short write")
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            raise OutputError(self.path, e) from e

    def _rewrite(self) -> None:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self._rows.values())
        write_atomic(self.path, text, follow_links=True)
