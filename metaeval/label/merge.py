"""``metaeval label --merge``: several annotators' labels files (each from its own
server) joined into one, each annotator's history kept.

Rows are kept in the order of the files and of their lines. A labels file is a
history (``metaeval.loaders.label_history``): for one annotator's (target, check)
the rows of every file must tell one story. The same rows in two files are kept
once, and a file whose rows go on from where another's stop adds the rest (a file
merged before, and the annotator's file labelled further since); two files whose
rows for one key part ways are a conflict, an ``InputError`` naming both places,
and nothing is written: which one the annotator meant is not ours to guess.
Every input is checked as the store checks it (``read_rows``). The output is
written by ``write_atomic`` and may not be one of the inputs, nor a file a label
server holds open.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.errors import InputError, shown
from metaeval.files import write_atomic
from metaeval.label.store import FileLock, Key, Row, key_of, read_rows


@dataclass(frozen=True, slots=True)
class Merged:
    """What a merge wrote: rows kept, rows that were in more than one file, annotators."""

    rows: int
    repeated: int
    annotators: tuple[str, ...]
    torn: tuple[str, ...] = ()
    """Each input's torn last line, left out (said as a warning)."""


def _conflict(key: Key, here: Row, there: Row) -> str:
    return (f"{here.source}: {shown(key.annotator)} labelled {key.kind} {shown(key.target)}"
            f"{f' check {shown(key.check)}' if key.check else ''} "
            f"{shown(here.value['label'])} here and {shown(there.value['label'])} at "
            f"{there.source} (or with another rationale, order or time); expected one "
            "history per annotator: keep one of the two")


def merge(paths: Sequence[Path], out: Path) -> Merged:
    """Merge ``paths`` into ``out``; see the module docstring."""
    if len(paths) < 2:
        raise InputError(f"--merge: got {len(paths)} file(s); expected two or more labels "
                         "files")
    for path in paths:
        if path.exists() and out.exists() and path.samefile(out):
            raise InputError(f"-o {out}: it is one of the files merged; expected a new file")
    kept: dict[Key, list[Row]] = {}
    repeated = 0
    problems: list[str] = []
    torn: list[str] = []
    for path in paths:
        if not path.is_file():
            raise InputError(f"{path}: no such file; expected a labels file (JSON Lines)")
        mine: dict[Key, list[Row]] = {}
        read = read_rows(path)
        if read.torn is not None:
            torn.append(str(read.torn))
        for row in read.history:
            mine.setdefault(key_of(row.value), []).append(row)
        for key, rows in mine.items():
            before = kept.setdefault(key, [])
            common = min(len(before), len(rows))
            parted = next((n for n in range(common)
                           if before[n].value != rows[n].value), None)
            if parted is not None:
                problems.append(_conflict(key, rows[parted], before[parted]))
                continue
            repeated += common
            before.extend(rows[common:])
    if problems:
        raise InputError("\n".join(problems))
    text = "".join(json.dumps(row.value, ensure_ascii=False) + "\n"
                   for rows in kept.values() for row in rows)
    lock = FileLock(out)  # a server holding ``out`` would go on appending to the old file
    try:
        write_atomic(out, text, follow_links=True)
    finally:
        lock.release()
    return Merged(sum(map(len, kept.values())), repeated,
                  tuple(sorted({k.annotator for k in kept})), tuple(torn))
