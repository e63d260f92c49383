"""The range of each number ``metaeval mutate`` reads, as a flag or a key of
``[tool.metaeval.mutate]``; both are checked against the same range where read.

A number outside its range is a user's mistake, never a run: ``nan`` compares
false with everything, so a limit of ``nan`` seconds is never reached (a
looping mutant runs for ever), and ``inf`` seconds cannot be waited for (every
mutant a RuntimeError). This module imports nothing of metaeval's: the command
line reads it on every start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Range:
    """A closed range of finite numbers, and how an error message names it."""

    low: float
    high: float
    expected: str
    integer: bool = False

    def holds(self, value: object) -> bool:
        """Whether ``value`` is a number (an int, for an integer range; never a bool)
        that is finite and within the range."""
        kinds = int if self.integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            return False
        # An int is compared as an int: math.isfinite() of a 400-digit one (TOML and
        # JSON have them) raises OverflowError; it is simply out of range.
        finite = isinstance(value, int) or math.isfinite(value)
        return finite and self.low <= value <= self.high


TIMEOUT_FACTOR = Range(1, 1000, "a number from 1 to 1000")
"""Below 1, a mutant's limit would be shorter than the unmutated suite took, and a
slow survivor would count as a Timeout: detected."""
TIMEOUT_CONSTANT = Range(0, 86400, "a number of seconds from 0 to 86400")
"""Up to a day: more is a limit no one waits for."""
JOBS = Range(0, 1024, "an integer from 0 to 1024 (0: one per core)", integer=True)

# --- numbers in files another run or job wrote (caches, coverage, manifests, timings) ---

SECONDS = Range(0, 86400, "a number of seconds from 0 to 86400 (a day)")
"""A test's or a mutant's duration, a baseline's or a time limit, as read back from a
file: no run waits a day, and a bound keeps a sum of them finite (``1e308`` twice
is infinity) and a limit from them reachable. What metaeval writes is clamped to
it (``clamp_seconds``), so its own files always read back."""
LINE = Range(0, 10**7, "a line number from 0 to 10000000", integer=True)
"""A line number in a coverage record (``co_firstlineno`` is 0 for some code)."""
COUNT = Range(0, 10**7, "a count from 0 to 10000000", integer=True)
"""How many mutants a plan holds, as a manifest says."""


def clamp_seconds(value: float) -> float:
    """``value`` within ``SECONDS``: what metaeval writes of a time it measured."""
    if math.isnan(value):
        return SECONDS.low
    return min(max(value, SECONDS.low), SECONDS.high)
