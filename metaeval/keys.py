"""Unknown keys are errors, with a "did you mean" where a known key is close.

A typo in a config key (``findigns``, ``target``) would otherwise be ignored and
quietly change what a run does. The unknown key is echoed cut short: a key can
be as long as the file that holds it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from metaeval.errors import InputError


def cut(key: str, limit: int = 60) -> str:
    """``key`` cut at ``limit`` characters."""
    return key if len(key) <= limit else key[:limit - 3] + "..."


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` did you mean 'x'?`` (or ``'x' or 'y'``) when a choice is close, else ``""``."""
    close = difflib.get_close_matches(word[:200], sorted(choices), n=2)
    return f"; did you mean {' or '.join(map(repr, close))}?" if close else ""


def reject_unknown(table: Iterable[object], known: Iterable[str], where: str) -> None:
    """An InputError naming the first key of ``table`` (sorted) that is not ``known``
    as ``where.key``, with what was expected and the closest known keys."""
    names = sorted(set(known))
    unknown = sorted(str(k) for k in table if k not in names)
    if unknown:
        key = unknown[0]
        raise InputError(f"{where}.{cut(key)}: unknown key; expected one of "
                         f"{', '.join(names)}{did_you_mean(key, names)}")
