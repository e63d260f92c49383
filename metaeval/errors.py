"""The one exception tree of metaeval, and the exit codes a pipeline acts on.

A user's mistake (a bad file, a bad flag, a grader that cannot be built) is an
``InputError`` and becomes exit code 2 with its message, never a traceback.
"""

from __future__ import annotations

import errno
import json
from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """What a metaeval command tells the pipeline that ran it."""

    OK = 0
    """Nothing to act on: no new survivor, every bar met, the judge may gate."""
    FINDINGS = 1
    """Something to act on: a new survivor, a missed bar, a judge that may only report."""
    BAD_INPUT = 2
    """Bad usage or input: a malformed file, an unknown grader, a bad flag."""
    VOID = 3
    """The run proves nothing: the suite fails unmutated, no mutant ran, or a control failed."""
    INCONCLUSIVE = 4
    """The labels cannot decide yet: the interval of a gated measure contains its bar
    (a judge-audit says how many more labelled items would likely decide it). Not a
    pass: ``metaeval gate`` fails such a result."""
    INTERRUPTED = 130
    """Ctrl-C (SIGINT), the shell's 128 + 2. SIGTERM and SIGHUP end a command with
    128 + their number too (143, 129), after the same clean-up."""


class MetaevalError(Exception):
    """Base of every error metaeval raises on purpose."""


class InputError(MetaevalError):
    """The user's input is wrong; the message says where, what, and what was expected."""


class CheckSpecError(InputError):
    """A check spec (``{"grader": NAME, ...params}``) cannot be turned into a grader.

    ``field`` is the spec key at fault (``tool``, ``grader``); the loader prefixes
    it with where the spec sits (``task.checks[1].tool``).
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class BadField(Exception):
    """One field of one record that is not what was expected, raised inside a reader;
    its caller names the file and line (``InputError`` or a ``LoadError``).
    ``field`` is the path inside the record (``events[2].call_id``; "" for the
    whole record)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class OutputError(MetaevalError):
    """A file metaeval was asked to write could not be written: exit code 2 (a bad
    output path), shown after the results, which are never held back for it."""

    def __init__(self, path: Path, error: OSError) -> None:
        reason = error.strerror or str(error)
        code = errno.errorcode.get(error.errno or 0)
        super().__init__(f"{path}: cannot write: {reason}" + (f" ({code})" if code else ""))
        self.path = path
        self.error = error


# --- echoing bad input ------------------------------------------------------------------

ECHO_LIMIT = 60
"""Characters of a bad value an error message echoes: enough to recognise it, and
a 10 MB key or value from a data file never floods a terminal or a CI log."""


def clipped(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was when cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit - 3]}... ({len(text)} characters)"


def shown(value: object, limit: int = ECHO_LIMIT) -> str:
    """A bad value as an error message echoes it: its ``repr``, bounded.

    ``repr`` escapes what a terminal cannot print (a lone surrogate becomes
    ``'\\ud800'``), so the message itself can always be written out.
    """
    return clipped(repr(value), limit)


def shown_json(value: object, limit: int = ECHO_LIMIT) -> str:
    """A bad value read from JSON as an error message echoes it: ``nothing`` for
    null, a string's ``repr``, anything else as JSON (``true``, not ``True``), bounded."""
    if value is None:
        return "nothing"
    return clipped(json.dumps(value) if not isinstance(value, str) else repr(value), limit)
