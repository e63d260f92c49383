"""What the caches under ``.metaeval/`` share: a cache file that is missing, from
another version, or unreadable is an empty cache, said in one warning line.

A cache is what this machine's own earlier runs measured. One that git tracks
came with the branch, and whoever wrote the branch could have written any
result into it (every mutant ``Killed``: a score of 100% and exit 0 from a run
that ran nothing), so it is never read: a CI job keeps its cache outside the
checkout, or restores the ignored ``.metaeval/`` directory from its own cache."""

from __future__ import annotations

import sys
from pathlib import Path

from metaeval.contract import JsonValue
from metaeval.untrusted_json import JsonInputError, read_json_file
from metaeval.vcs import tracked

TRACKED = ("tracked by git: a cache holds what this machine's own runs measured, never "
           "what a branch says they did (untrack it: git rm --cached)")


def read_cache(path: Path) -> JsonValue:
    """The cache file's JSON, or None: a missing file is a first run, said nothing
    about; an unreadable one, or one git tracks, is said in one line, and the run
    goes on cold."""
    if tracked(path):
        cold(path, TRACKED)
        return None
    try:
        return read_json_file(path)
    except FileNotFoundError:
        return None
    except (OSError, JsonInputError) as e:
        cold(path, str(e))
        return None


def outdated(data: JsonValue, **current: JsonValue) -> bool:
    """Written by another format or version of metaeval: stale, not damaged."""
    return isinstance(data, dict) and any(key in data and data[key] != value
                                          for key, value in current.items())


def cold(path: Path, why: str) -> None:
    print(f"warning: {path}: {why}; starting with an empty cache", file=sys.stderr)
