"""What the result and scan caches share: a cache file that is missing, from
another version, or unreadable is an empty cache, said in one warning line."""

from __future__ import annotations

import sys
from pathlib import Path

from metaeval.contract import JsonValue
from metaeval.untrusted_json import JsonInputError, read_json_file


def read_cache(path: Path) -> JsonValue:
    """The cache file's JSON, or None: a missing file is a first run, said nothing
    about; an unreadable one is said in one line, and the run goes on cold."""
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
