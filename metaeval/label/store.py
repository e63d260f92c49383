"""The labels file of a labelling session: every acknowledged label on disk, and only
ever appended to.

A row is a run's label (``run_id, check, label, annotator[, rationale]``, read by
``metaeval.loaders.labels_files``) or a judge item's (``item_id, label, annotator[,
rationale, shown]``, read by ``metaeval.loaders.item_labels``), one JSON object a
line, with ``at`` (when). A label given for the first time is appended; a label
changed is appended too, as a row that names the label it replaces (``was``), so
the file keeps every change and the last one counts, by the rule every reader
applies (``metaeval.loaders.label_history``). Nothing is ever rewritten.

Each row is appended in one ``write`` and synced before the page hears it was
kept. A write that fails (a full disk, a file-size limit) is cut back to the
file's length before it, so a failed label leaves the file as it was and the
next one lands on a line of its own. A torn last line (a machine that lost power
mid-write) is said and cut off when the file is opened: it was never
acknowledged. One server at a time: the store holds a lock beside the file
(``<file>.lock``, with the serving process's pid and port) for as long as it is
open, and a second store on the same file is refused naming them; two servers
each holding the file in memory would lose each other's labels.

The file is data: on opening it every row is checked as its reader checks it,
and a bad one is an ``InputError`` naming ``file:line``. This module never
reads the runs or items.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from metaeval.contract import JsonObject, JsonValue
from metaeval.data_paths import read_bounded
from metaeval.errors import InputError, OutputError, shown
from metaeval.files import check_output
from metaeval.loaders.item_labels import parse_row
from metaeval.loaders.label_history import AT, WAS, Rows, in_force, now
from metaeval.loaders.labels_files import COLUMNS as RUN_COLUMNS
from metaeval.loaders.labels_files import LABELS as RUN_LABELS
from metaeval.loaders.labels_files import MAX_FIELD
from metaeval.untrusted_json import LoadError, read_jsonl

RUN = "run"
ITEM = "item"
LOCK_LIMIT = 4096
"""Bytes of a lock file read back: it holds a pid and a port."""


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
    for column in ("label", WAS):
        if column in value and value[column] not in RUN_LABELS:
            raise ValueError(f"{column}: got {shown(value[column])}; expected 'pass', 'fail' "
                             "or 'unsure'")
    return value


@dataclass(frozen=True, slots=True)
class Row:
    """A checked row and where it is."""

    source: str
    value: JsonObject


def _what(row: Row) -> str:
    key = key_of(row.value)
    return f"{key.kind} {shown(key.target)}" + (f" check {shown(key.check)}" if key.check
                                                 else "")


HISTORY: Rows[Row] = Rows(
    key=lambda r: key_of(r.value), label=lambda r: r.value["label"],
    was=lambda r: r.value.get(WAS), source=lambda r: r.source,
    annotator=lambda r: str(r.value["annotator"]), what=_what)


@dataclass(frozen=True, slots=True)
class Read:
    """A labels file read: every good row in file order (the history), the rows in
    force (one per key), and a torn last line if there was one."""

    history: tuple[Row, ...]
    current: tuple[Row, ...]
    torn: LoadError | None


def read_rows(path: Path) -> Read:
    """The labels file ``path`` read by the history rule; an ``InputError`` naming
    each bad row, and each second row for one key that is not a change of it."""
    errors: list[LoadError] = []
    torn: list[LoadError] = []
    history: list[Row] = []
    for record in read_jsonl(path, errors, torn):
        try:
            history.append(Row(record.source, check_row(record.value)))
        except ValueError as e:
            errors.append(record.error("", str(e)))
    current, refused = in_force(history, HISTORY)
    for r in refused:
        where, _, line = r.row.source.rpartition(":")
        errors.append(LoadError(where, int(line), r.field, r.message))
    if errors:
        errors.sort(key=lambda e: e.line)
        raise InputError("\n".join(str(e) for e in errors))
    return Read(tuple(history), tuple(current), torn[0] if torn else None)


class ServedElsewhere(InputError):
    """The labels file is held by another open store (another ``metaeval label``)."""


class FileLock:
    """An exclusive lock on ``<path>.lock`` while open; the holder's pid and port in it.

    ``flock`` on a file of its own (never on the labels file, which readers open
    freely), released by the kernel when the process dies, so a ``kill -9`` leaves a
    stale file but no stale lock."""

    def __init__(self, path: Path) -> None:
        self.path = path.with_name(path.name + ".lock")
        self.labels = path
        self.fd = -1
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
                             | getattr(os, "O_NOFOLLOW", 0), 0o644)
            except OSError as e:
                raise InputError(f"--labels {path}: cannot create the lock file beside it "
                                 f"({e.strerror or e}); expected a labels file in a folder "
                                 "that exists and can be written") from e
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                os.close(fd)
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise InputError(f"{self.path}: cannot lock: {e.strerror or e}") from e
                raise ServedElsewhere(self._holder()) from e
            # The holder before us may have removed the file after we opened it: then
            # our lock is on a name nobody else will find. Lock the file at the name.
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                self.fd = fd
                break
            os.close(fd)
        self.serving(None)

    def _holder(self) -> str:
        held = f"{self.labels}: another metaeval label is serving this labels file"
        try:
            value = json.loads(read_bounded(self.path, LOCK_LIMIT, str(self.path)))
        except (OSError, ValueError, InputError):
            value = None
        if isinstance(value, dict):
            pid, port = value.get("pid"), value.get("port")
            if type(pid) is int and 0 < pid < 1 << 32:
                held += f" (pid {pid}"
                if type(port) is int and 0 < port < 65536:
                    held += f", port {port}: http://127.0.0.1:{port}/ with the token it printed"
                held += ")"
        return (held + "; label there, or stop it first: two servers on one file would lose "
                "each other's labels")

    def serving(self, port: int | None) -> None:
        """Say in the lock file which port this process serves on."""
        text = json.dumps({"pid": os.getpid(), "port": port}).encode()
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, text, 0)

    def release(self) -> None:
        if self.fd < 0:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)  # while still held: nobody locks the old name after us
        os.close(self.fd)
        self.fd = -1


def _last_byte(path: Path, size: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(size - 1)
        return f.read(1)


class LabelStore:
    """The rows of one labels file, in memory and on disk alike; safe to call from the
    server's threads. Holds the file's lock until ``close``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._rows: dict[Key, JsonObject] = {}
        self.torn: str | None = None
        """What was cut off the end of the file when it was opened, said by the command."""
        try:
            # Named on the command line: a link inside the repository, or a fifo or
            # device, is refused as every output named there is (``files``).
            check_output(path)
        except OutputError as e:
            raise InputError(f"--labels {e}") from e
        self._file_lock = FileLock(path)
        try:
            self._open()
        except BaseException:
            self._file_lock.release()
            raise

    def _open(self) -> None:
        if not self.path.exists():
            # Created now, empty: it can be written, and another annotator's page
            # comparing with it finds it before the first label.
            self._write(b"")
            return
        read = read_rows(self.path)
        for row in read.current:
            self._rows[key_of(row.value)] = row.value
        size = self.path.stat().st_size
        if read.torn is not None:
            self._cut_to_last_line(size)
            self.torn = str(read.torn)
        elif size and _last_byte(self.path, size) != b"\n":
            self._write(b"\n")  # a good last line with no newline: the next append needs one

    def _cut_to_last_line(self, size: int) -> None:
        with open(self.path, "rb") as f:
            f.seek(max(0, size - (1 << 20)))
            tail = f.read()
        end = size - len(tail) + tail.rfind(b"\n") + 1 if b"\n" in tail else 0
        try:
            fd = os.open(self.path, os.O_WRONLY)
            try:
                os.ftruncate(fd, end)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            raise OutputError(self.path, e) from e

    def close(self) -> None:
        """Let another server open the file."""
        self._file_lock.release()

    def serving(self, port: int) -> None:
        """Record the port this session serves on, for a second server's message."""
        self._file_lock.serving(port)

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def rows(self) -> list[JsonObject]:
        """Every row in force, in the order first given."""
        with self._lock:
            return list(self._rows.values())

    def __iter__(self) -> Iterator[JsonObject]:
        return iter(self.rows())

    def get(self, key: Key) -> JsonObject | None:
        with self._lock:
            return self._rows.get(key)

    def put(self, row: JsonObject) -> None:
        """Keep ``row`` (checked first) on disk before returning, appended; when it
        changes a row in force, it names the label it replaces (``was``)."""
        row = {k: v for k, v in row.items() if k not in (WAS, AT)}
        try:
            check_row(row)
        except ValueError as e:
            raise InputError(f"a label: {e}") from e
        key = key_of(row)
        with self._lock:
            before = self._rows.get(key)
            if before is not None and {k: v for k, v in before.items()
                                       if k not in (WAS, AT)} == row:
                return
            written: JsonObject = dict(row)
            if before is not None:
                written[WAS] = before["label"]
            written[AT] = now()
            self._write((json.dumps(written, ensure_ascii=False) + "\n").encode())
            self._rows[key] = written

    def _write(self, data: bytes) -> None:
        """Append ``data`` in one write and sync it; on any failure cut the file back
        to its length before, so that no partial line is left for the next."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                         0o644)
        except OSError as e:
            raise OutputError(self.path, e) from e
        try:
            size = os.fstat(fd).st_size
            try:
                # One write of the whole line: a kill between two writes cannot leave half.
                if os.write(fd, data) != len(data):
                    raise OSError(errno.ENOSPC, "short write: the disk may be full")
                os.fsync(fd)
            except OSError as e:
                try:
                    os.ftruncate(fd, size)
                    os.fsync(fd)
                except OSError as cut:
                    raise OutputError(self.path, OSError(e.errno, (
                        f"{e.strerror or e}; and the partial line could not be cut back "
                        f"({cut.strerror or cut}): the next open will cut it"))) from e
                raise OutputError(self.path, e) from e
        finally:
            os.close(fd)
