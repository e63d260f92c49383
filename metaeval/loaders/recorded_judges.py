"""Which judge's verdicts a recorded log holds, when one log holds several.

A record's ``judge`` field names the judge that gave it (``judge-import`` writes it
for a file of several judges). A log either names the judge on every record or on
none: a record without a name in a log of several could be any judge's, and this
module never guesses whose. It only reads loaded records; it opens no file.
"""

from __future__ import annotations

from collections.abc import Sequence

from metaeval.errors import InputError, shown
from metaeval.loaders.recorded_verdicts import Recorded
from metaeval.untrusted_json import LoadError

__all__ = ["judges_in", "select_judge"]


def judges_in(records: Sequence[Recorded]) -> tuple[str, ...]:
    """The judges a log names, in the order they first appear; () for a one-judge log."""
    return tuple(dict.fromkeys(r.judge for r in records if r.judge is not None))


def _line(record: Recorded) -> tuple[str, int]:
    path, _, line = record.source.rpartition(":")
    return path, int(line) if line.isdigit() else 0


def select_judge(records: Sequence[Recorded], name: str, where: str = "--judge"
                 ) -> tuple[tuple[Recorded, ...], tuple[LoadError, ...]]:
    """The records of judge ``name``: all of them when the log names no judge or one
    judge only (a one-judge log is read as ``name``'s, as it was before logs named
    their judge: an importer writes the name its tool logged, and ``--judge`` may call
    it otherwise), else those whose ``judge`` is ``name``. A record with no name in a
    log that names judges is an error (left out); a name a log of several does not
    hold is an InputError naming the judges it does hold."""
    named = judges_in(records)
    if not named:
        return tuple(records), ()
    unnamed = [r for r in records if r.judge is None]
    errors = tuple(LoadError(*_line(r), "judge", "missing; this log names the judge of its "
                             f"other records ({', '.join(map(repr, named[:3]))}"
                             f"{', ...' if len(named) > 3 else ''}); expected the judge's "
                             "name on every record") for r in unnamed)
    if name not in named and len(named) == 1:
        return tuple(r for r in records if r.judge is not None), errors
    if name not in named:
        sources = sorted({_line(r)[0] for r in records})
        raise InputError(f"{where}: got {shown(name)}; the recorded log ({', '.join(sources)}) "
                         f"holds the verdicts of {len(named)} judge(s): "
                         f"{', '.join(map(repr, named))}; expected one of them")
    return tuple(r for r in records if r.judge == name), errors
