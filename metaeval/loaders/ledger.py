"""The ledger of held-out reads: one line per judge audit of a held-out set, kept beside
the split (``items.split.json`` -> ``items.ledger.jsonl``) and committed with it.

A held-out set is read once per judge to decide; the ledger remembers who read it,
so that a judge tuned after its read is caught (``metaeval.audit.held_out``). One
record a line:

```json
{"version": 1, "time": "2026-12-06T23:10:00+00:00", "draw": "3f2a9c0b1d4e", "split_draw": 1,
 "judge": {"name": "gpt-4o", "version": "a1b2c3d4e5f6", "model": "recorded",
           "prompt_hash": "", "temperature": null, "endpoint": "", "scale": "",
           "log": "9c1e0d2b7a44"},
 "verdict": "report only", "items": 24, "kappa": 0.41, "tuned_after_read": false}
```

``draw`` names the held-out set read (``Split.held_out_digest``); ``judge.version``
is the judge's identity digest (``JudgeIdentity.version``: name, model, prompt and
reply rule, temperature, endpoint, scale); ``judge.log``, for a judge audited from
recorded verdicts, digests its verdicts on the held-out items (empty for a live
one). The file is data another job wrote: every field of every line is checked on
read, and a bad line is an error naming the file and line, never skipped (a skipped
read would let a tuned judge through). Records are appended, one whole line in one
write, synced; never rewritten.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import InputError, OutputError, shown
from metaeval.untrusted_json import LoadError, Record, read_jsonl

VERSION = 1
SUFFIX = ".ledger.jsonl"
MAX_TEXT = 10_000
"""The longest text field read: names and digests are short; a longer one is not ours."""


@dataclass(frozen=True, slots=True)
class LedgerJudge:
    """The judge a record names: its identity's parts and digest."""

    name: str
    version: str
    model: str = ""
    prompt_hash: str = ""
    temperature: float | None = 0.0
    """None when the log of a recorded judge does not say."""
    endpoint: str = ""
    scale: str = ""
    log: str = ""
    """A recorded judge's verdicts on the held-out set, digested; "" for a live one."""

    @property
    def key(self) -> tuple[str, str]:
        """What makes two reads one judge's: the identity and, when recorded, the log."""
        return self.version, self.log

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in (("model", self.model), ("prompt", self.prompt_hash),
                                          ("endpoint", self.endpoint), ("scale", self.scale),
                                          ("log", self.log)) if v]
        return f"{self.name} (version {self.version}{''.join(', ' + p for p in parts)})"


@dataclass(frozen=True, slots=True)
class LedgerRecord:
    """One held-out read."""

    time: str
    draw: str
    split_draw: int
    judge: LedgerJudge
    verdict: str
    items: int
    kappa: float | None
    tuned_after_read: bool
    source: str = ""
    """``file:line`` it was read from; empty for a record not yet written."""

    def json(self) -> JsonObject:
        j = self.judge
        return {"version": VERSION, "time": self.time, "draw": self.draw,
                "split_draw": self.split_draw,
                "judge": {"name": j.name, "version": j.version, "model": j.model,
                          "prompt_hash": j.prompt_hash, "temperature": j.temperature,
                          "endpoint": j.endpoint, "scale": j.scale, "log": j.log},
                "verdict": self.verdict, "items": self.items, "kappa": self.kappa,
                "tuned_after_read": self.tuned_after_read}


def ledger_path(split: Path) -> Path:
    """The ledger beside the split file ``split``."""
    name = split.name.removesuffix(".split.json").removesuffix(".json")
    return split.with_name(name + SUFFIX)


def _text(record: Record, data: dict[str, JsonValue], key: str, where: str = "",
          *, empty: bool = True) -> str:
    value = data.get(key)
    if not isinstance(value, str) or len(value) > MAX_TEXT or (not empty and not value):
        raise _Bad(record.error(where + key, f"got {shown(value)}; expected "
                                f"{'a' if empty else 'a non-empty'} string"))
    return value


class _Bad(Exception):
    def __init__(self, error: LoadError) -> None:
        super().__init__(str(error))
        self.error = error


def _number(value: JsonValue) -> float | None:
    """A JSON number as a float (bools are not numbers here); None for anything else."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer of 400 digits: out of every range checked
        return math.inf


def _judge(record: Record, value: JsonValue) -> LedgerJudge:
    if not isinstance(value, dict):
        raise _Bad(record.error("judge", f"got {shown(value)}; expected an object"))
    unknown = sorted(set(value) - {"name", "version", "model", "prompt_hash", "temperature",
                                   "endpoint", "scale", "log"})
    if unknown:
        raise _Bad(record.error(f"judge.{unknown[0]}", "unknown key in a ledger record"))
    temperature = _number(value.get("temperature"))
    if (temperature is not None and (not math.isfinite(temperature)
                                    or not 0 <= temperature <= 100)) or (
            temperature is None and value.get("temperature") is not None):
        raise _Bad(record.error("judge.temperature", f"got {shown(value.get('temperature'))}; "
                                "expected a "
                                "number from 0 to 100, or null"))
    return LedgerJudge(_text(record, value, "name", "judge.", empty=False),
                       _text(record, value, "version", "judge.", empty=False),
                       _text(record, value, "model", "judge."),
                       _text(record, value, "prompt_hash", "judge."),
                       temperature,
                       _text(record, value, "endpoint", "judge."),
                       _text(record, value, "scale", "judge."),
                       _text(record, value, "log", "judge.") if "log" in value else "")


def _record(record: Record) -> LedgerRecord:
    data = record.value
    if not isinstance(data, dict):
        raise _Bad(record.error("", f"got {shown(data)}; expected a ledger record (object)"))
    unknown = sorted(set(data) - {"version", "time", "draw", "split_draw", "judge", "verdict",
                                  "items", "kappa", "tuned_after_read"})
    if unknown:
        raise _Bad(record.error(unknown[0], "unknown key in a ledger record"))
    if data.get("version") != VERSION:
        raise _Bad(record.error("version", f"got {shown(data.get('version'))}; expected "
                                f"{VERSION}"))
    split_draw, items = data.get("split_draw"), data.get("items")
    if type(split_draw) is not int or not 1 <= split_draw < 1 << 31:
        raise _Bad(record.error("split_draw", f"got {shown(split_draw)}; expected an integer "
                                ">= 1"))
    if type(items) is not int or not 0 <= items < 1 << 31:
        raise _Bad(record.error("items", f"got {shown(items)}; expected an integer >= 0"))
    kappa = _number(data.get("kappa"))
    if (kappa is None and data.get("kappa") is not None) or (
            kappa is not None and not -1 <= kappa <= 1):
        raise _Bad(record.error("kappa", f"got {shown(data.get('kappa'))}; expected a number "
                                "from -1 "
                                "to 1, or null"))
    tuned = data.get("tuned_after_read")
    if not isinstance(tuned, bool):
        raise _Bad(record.error("tuned_after_read", f"got {shown(tuned)}; expected true or "
                                "false"))
    return LedgerRecord(_text(record, data, "time", empty=False),
                        _text(record, data, "draw", empty=False), split_draw,
                        _judge(record, data.get("judge")),
                        _text(record, data, "verdict", empty=False), items,
                        kappa, tuned, record.source)


def read_ledger(path: Path) -> tuple[LedgerRecord, ...]:
    """Every record of the ledger ``path`` (none when there is no file). Any bad line
    is an InputError naming every bad line by file and line: a ledger with a line
    left out could hide the read that makes a later one a tuned judge's."""
    if not path.exists() and not path.is_symlink():
        return ()
    errors: list[LoadError] = []
    records: list[LedgerRecord] = []
    for record in read_jsonl(path, errors):
        try:
            records.append(_record(record))
        except _Bad as bad:
            errors.append(bad.error)
    if errors:
        errors.sort(key=lambda e: e.line)
        raise InputError("\n".join([*map(str, errors), (
            f"{path}: {len(errors)} bad line(s) in the ledger of held-out reads; expected "
            "the records judge-audit appends (fix or restore the file from version "
            "control: a read left out could let a tuned judge through)")]))
    return tuple(records)


def append_record(path: Path, record: LedgerRecord) -> None:
    """Append ``record`` as one line, in one write, synced; on a failed write the file
    is cut back to its length before. Never through a link (a path metaeval chose),
    never to anything but a regular file. Raises OutputError naming the path."""
    data = (json.dumps(record.json(), ensure_ascii=False) + "\n").encode()
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
                     | os.O_NOFOLLOW, 0o644)
    except OSError as e:
        raise OutputError(path, e) from e
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OutputError(path, OSError(None, "not a regular file; refusing to append"))
        try:
            if info.st_size and _last_byte(fd, info.st_size) != b"\n":
                data = b"\n" + data  # a hand edit left no newline: keep records apart
            if os.write(fd, data) != len(data):
                raise OSError(errno.ENOSPC, "short write: the disk may be full")
            os.fsync(fd)
        except OSError as e:
            try:
                os.ftruncate(fd, info.st_size)
            except OSError:
                pass  # the read that follows names the torn line
            raise OutputError(path, e) from e
    finally:
        os.close(fd)


def _last_byte(fd: int, size: int) -> bytes:
    return os.pread(fd, 1, size - 1)
