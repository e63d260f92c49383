"""The live count of a ``metaeval mutate`` run on stderr, with the time left.

On a terminal, one line rewritten in place as each mutant finishes:
``mutants 123/640 (killed 100, survived 20, ...) ~2m10s left``. Elsewhere (a CI
log is no terminal, and a rewritten line would be 640 lines there), one line
every ``EVERY`` seconds: ``metaeval mutate: 123/640 mutants done (...), ~2m10s
left``. In fork isolation the time left is the runner's estimate (``pace``),
which weighs each mutant left by its tests' seconds in the baseline
(``mutation.run.time_left``). Elsewhere it comes from the pace at which mutants
finished so far (every worker at once, so the jobs count is in it), counted
from the first one that ran: results from the cache and mutants settled without
a run arrive at once before the baseline, and the baseline itself is not a
mutant's time. Either says nothing until ``AFTER`` mutants have run. This
module only renders; it never decides anything about a run.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from metaeval.mutation.model import MutantResult, Status

if TYPE_CHECKING:
    from metaeval.mutation.run.time_left import TimeLeft

EVERY = 30.0
"""Seconds between two lines when stderr is not a terminal."""
AFTER = 3
"""Mutants run (after the first) before the time left is estimated."""
REDRAW = 0.1
"""Seconds between two redraws of the terminal line (the last is always drawn)."""

# The order and the words of the counts; both errors are one count.
LABELS = ((Status.KILLED, "killed"), (Status.SURVIVED, "survived"),
          (Status.NO_COVERAGE, "no coverage"), (Status.TIMEOUT, "timeout"),
          (Status.RUNTIME_ERROR, "error"), (Status.COMPILE_ERROR, "error"),
          (Status.IGNORED, "ignored"))
# Settled before any test runs: these never tell the pace of the run.
SETTLED = (Status.IGNORED, Status.COMPILE_ERROR)


def duration_text(seconds: float) -> str:
    """``45s``, ``2m10s``, ``1h05m``: short enough to be read at a glance."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class MutateProgress:
    """The runner's ``progress`` callback: ``(done, total, result)`` per mutant."""

    def __init__(self, stream: TextIO, *, terminal: bool, every: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.terminal, self.clock = stream, terminal, clock
        self.every = EVERY if every is None else every
        self.counts: Counter[str] = Counter()
        self.first_run: float | None = None
        """When the first mutant that ran finished."""
        self.ran = 0
        self.last_line = clock()
        """When the last line was written to a log (the run's start, at first)."""
        self.last_draw: float | None = None
        """When the terminal line was last drawn."""
        self.estimate: TimeLeft | None = None
        """The runner's estimate of the time left, once its baseline is in."""

    def pace(self, left: TimeLeft) -> None:
        """The runner's estimate, which it keeps up to date: shown instead of the count's."""
        self.estimate = left

    def __call__(self, done: int, total: int, result: MutantResult) -> None:
        now = self.clock()
        self.counts[dict(LABELS)[result.status]] += 1
        if not result.cached and result.status not in SETTLED:
            self.ran += 1
            if self.first_run is None:
                self.first_run = now
        finished = done == total
        if self.terminal:
            if finished or self.last_draw is None or now - self.last_draw >= REDRAW:
                self.last_draw = now
                self.stream.write(f"\rmutants {done}/{total}{self._counts()}"
                                  f"{self._left(done, total, now, ' ~{} left')}\x1b[K"
                                  + ("\n" if finished else ""))
                self.stream.flush()
        elif not finished and now - self.last_line >= self.every:
            self.last_line = now
            self.stream.write(f"metaeval mutate: {done}/{total} mutants done{self._counts()}"
                              f"{self._left(done, total, now, ', ~{} left')}\n")
            self.stream.flush()

    def _counts(self) -> str:
        words = dict.fromkeys(label for _, label in LABELS)
        shown = [f"{label} {self.counts[label]}" for label in words if self.counts[label]]
        return f" ({', '.join(shown)})" if shown else ""

    def _left(self, done: int, total: int, now: float, form: str) -> str:
        """The time left in ``form``; "" until enough mutants ran to tell the pace."""
        if done >= total:
            return ""
        if self.estimate is not None:
            seconds = self.estimate.seconds()
            return "" if seconds is None else form.format(duration_text(seconds))
        if self.first_run is None or self.ran - 1 < AFTER:
            return ""
        pace = (now - self.first_run) / (self.ran - 1)
        return form.format(duration_text(pace * (total - done)))
