"""``metaeval label --merge``: several annotators' labels files (each from its own
server) joined into one.

Rows are kept in the order of the files and of their lines. The same row in two
files is kept once; two different rows for one annotator's (target, check) are a
conflict, an ``InputError`` naming both places, and nothing is written: which one
the annotator meant is not ours to guess. Every input is checked as the store
checks it (``read_rows``). The output is written by ``write_atomic`` and may not
be one of the inputs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.contract import JsonObject
from metaeval.errors import InputError, shown
from metaeval.files import write_atomic
from metaeval.label.store import Key, key_of, read_rows


@dataclass(frozen=True, slots=True)
class Merged:
    """What a merge wrote: rows kept, rows that were in more than one file, annotators."""

    rows: int
    repeated: int
    annotators: tuple[str, ...]


def merge(paths: Sequence[Path], out: Path) -> Merged:
    """Merge ``paths`` into ``out``; see the module docstring."""
    if len(paths) < 2:
        raise InputError(f"--merge: got {len(paths)} file(s); expected two or more labels "
                         "files")
    for path in paths:
        if path.exists() and out.exists() and path.samefile(out):
            raise InputError(f"-o {out}: it is one of the files merged; expected a new file")
    kept: dict[Key, tuple[str, JsonObject]] = {}
    repeated = 0
    problems: list[str] = []
    for path in paths:
        if not path.is_file():
            raise InputError(f"{path}: no such file; expected a labels file (JSON Lines)")
        for source, row in read_rows(path):
            key = key_of(row)
            before = kept.get(key)
            if before is None:
                kept[key] = (source, row)
            elif before[1] == row:
                repeated += 1
            else:
                problems.append(
                    f"{source}: {shown(key.annotator)} labelled {key.kind} {shown(key.target)}"
                    f"{f' check {shown(key.check)}' if key.check else ''} "
                    f"{shown(row['label'])} here and {shown(before[1]['label'])} at "
                    f"{before[0]} (or with another rationale or order); expected one label "
                    "per annotator: keep one of the two")
    if problems:
        raise InputError("\n".join(problems))
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for _, row in kept.values())
    write_atomic(out, text, follow_links=True)
    return Merged(len(kept), repeated, tuple(sorted({k.annotator for k in kept})))
