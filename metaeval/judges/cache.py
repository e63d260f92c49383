"""A response cache for judges (sqlite), so a rerun of an audit makes no calls.

Replies are keyed by the judge's identity, the question (mode and every text
argument) and the sample index; a changed judge identity is a different key, so
stale replies are never served. Failed calls are not stored (the next run
retries them). The cache stores only what the judge returned: never a request
header, never an API key.

A cache is a convenience, never a reason to lose a reply: a file that is
corrupt, locked, read-only or cannot be made is one warning line on stderr,
then the run goes on reading it without storing, or without it at all.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from metaeval.data_paths import kind_of
from metaeval.judges.base import (
    CallInfo,
    Choice,
    Judge,
    JudgeIdentity,
    JudgeReply,
    Mode,
    Scale,
    Value,
)
from metaeval.judges.reply import ReplyRule
from metaeval.untrusted_json import JsonInputError, parse_json

DEFAULT_PATH = Path(".metaeval") / "judge-cache.sqlite"
_SCHEMA = """CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY, judge TEXT NOT NULL, value TEXT NOT NULL, raw TEXT NOT NULL,
    reason TEXT NOT NULL)"""


def _encode(value: Value | None) -> str:
    if isinstance(value, Choice):
        return json.dumps({"choice": value.value})
    return json.dumps({"value": value})


def _decode(text: str) -> Value | None:
    """A stored value, as ``_encode`` writes it; JsonInputError, ValueError or TypeError
    for anything else (a row this code did not write)."""
    document = parse_json(text)
    if not isinstance(document, dict) or not document.keys() & {"choice", "value"}:
        raise ValueError("not an object with a choice or a value")
    if "choice" in document:
        return Choice(document["choice"])
    value = document["value"]
    if isinstance(value, bool | float) or value is None:
        return value
    if isinstance(value, int) and abs(value) < 2**53:
        return float(value)
    raise ValueError(f"not a verdict: {value!r:.40}")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class ReplyCache:
    """One sqlite file; safe to share between the threads of one audit.

    Never raises on a cache that cannot be used: ``warn`` is told once, in one
    line, and the cache goes on read-only (reads still work) or off (a miss for
    every question). ``busy_timeout_s`` is how long to wait for another
    process's lock before giving up on the cache.
    """

    def __init__(self, path: Path, *, busy_timeout_s: float = 5.0,
                 warn: Callable[[str], None] = _stderr) -> None:
        self.path = path
        self._warn = warn
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._reading = self._writing = False
        # The cache is metaeval's own file: never opened through a link (a dangling
        # one would create a database outside the repository, a live one would
        # write into whatever it points at), and never a device or a fifo.
        link = next((p for p in (path, path.parent) if p.is_symlink()), None)
        if link is not None:
            self._off(f"{link} is a symbolic link, which metaeval does not write through")
            return
        if path.exists() and not path.is_file():
            self._off(f"it is {kind_of(path.stat().st_mode)}, not a regular file")
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=busy_timeout_s, check_same_thread=False)
        except (OSError, sqlite3.Error) as e:
            self._off(f"cannot open it ({_why(e)})")
            return
        try:
            with self._db:
                self._db.execute(_SCHEMA)
            self._reading = self._writing = True
        except sqlite3.Error as schema_error:
            try:  # a read-only file or folder still serves what it holds
                self._db.execute("SELECT key FROM replies LIMIT 1").fetchall()
            except sqlite3.Error:
                self._off(_why(schema_error))
                return
            self._reading = True
            self._read_only(_why(schema_error))

    def _off(self, why: str) -> None:
        # Called only on a change of state (opening, or a read that failed while
        # reading was on), so the warning is said once.
        self._warn(f"warning: judge reply cache {self.path}: {why}; going on without "
                   "the cache")
        self._reading = self._writing = False

    def _read_only(self, why: str) -> None:
        self._warn(f"warning: judge reply cache {self.path}: {why}; reading it but not "
                   "storing new replies")
        self._writing = False

    def get(self, key: str) -> JudgeReply | None:
        with self._lock:
            if not self._reading or self._db is None:
                return None
            try:
                row = self._db.execute("SELECT value, raw, reason FROM replies WHERE key = ?",
                                       (key,)).fetchone()
            except sqlite3.Error as e:
                self._off(_why(e))
                return None
            if row is None:
                return None
            try:
                value = _decode(row[0])
            except (JsonInputError, ValueError, TypeError):
                return None  # an entry this code did not write: ask the judge again
            if not isinstance(row[1], str) or not isinstance(row[2], str):
                return None
        return JudgeReply(value, row[1], row[2], CallInfo(cached=True, called=False))

    def put(self, key: str, judge: str, reply: JudgeReply) -> None:
        with self._lock:
            if not self._writing or self._db is None:
                return
            try:
                with self._db:
                    self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?)",
                                     (key, judge, _encode(reply.value), reply.raw,
                                      reply.reason))
            except sqlite3.Error as e:
                self._read_only(f"cannot store a reply ({_why(e)})")

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
            self._reading = self._writing = False


def _why(error: Exception) -> str:
    text = str(error)
    if isinstance(error, sqlite3.DatabaseError) and "not a database" in text:
        return "not a database (corrupt?)"
    return text


def cache_key(identity: JudgeIdentity, mode: Mode, parts: list[str | None], sample: int) -> str:
    text = json.dumps([identity.version, mode.value, parts, sample])
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class CachedJudge:
    """``inner`` behind a cache: a stored reply is served with ``cached=True``."""

    inner: Judge
    cache: ReplyCache
    concurrency: int = field(default=1)

    @property
    def identity(self) -> JudgeIdentity:
        return self.inner.identity

    @property
    def scale(self) -> Scale:
        return self.inner.scale

    @property
    def modes(self) -> frozenset[Mode]:
        return self.inner.modes

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply:
        # The scale is rendered into the prompt, so it is part of the question.
        key = cache_key(self.identity, Mode.POINTWISE,
                        [prompt, response, reference, criterion, repr(self.scale)], sample)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        reply = self.inner.score(prompt, response, reference, criterion=criterion,
                                 sample=sample)
        return self._store(key, reply)

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply:
        key = cache_key(self.identity, Mode.PAIRWISE, [prompt, response_a, response_b,
                                                       reference], sample)
        hit = self.cache.get(key)
        if hit is not None:
            return self._strength(hit)
        reply = self.inner.compare(prompt, response_a, response_b, reference=reference,
                                   sample=sample)
        return self._store(key, reply)

    def holds_score(self, prompt: str, response: str, reference: str | None = None, *,
                    criterion: str = "", sample: int = 0) -> bool:
        """Whether ``score`` with these arguments would be served from the cache."""
        key = cache_key(self.identity, Mode.POINTWISE,
                        [prompt, response, reference, criterion, repr(self.scale)], sample)
        return self.cache.get(key) is not None

    def holds_compare(self, prompt: str, response_a: str, response_b: str, *,
                      reference: str | None = None, sample: int = 0) -> bool:
        """Whether ``compare`` with these arguments would be served from the cache."""
        key = cache_key(self.identity, Mode.PAIRWISE, [prompt, response_a, response_b,
                                                       reference], sample)
        return self.cache.get(key) is not None

    def _strength(self, hit: JudgeReply) -> JudgeReply:
        """A cached pairwise reply with the strength its judge's reply rule reads in
        its text (the cache keeps the text, not the strength), when the rule reads
        the same verdict there."""
        rule = getattr(self.inner, "reply", None)
        if not isinstance(rule, ReplyRule) or hit.value not in (Choice.A, Choice.B):
            return hit
        again = rule.pairwise(hit.raw)
        return replace(hit, strength=again.strength) if again.value == hit.value else hit

    def _store(self, key: str, reply: JudgeReply) -> JudgeReply:
        if reply.call.called and not reply.call.failed:
            self.cache.put(key, self.identity.version, reply)
        return replace(reply, call=replace(reply.call, cached=False))
