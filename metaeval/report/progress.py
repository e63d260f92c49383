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

Before the first mutant, what the run does (``phase``: finding mutants,
collecting tests, tracing the baseline with tests traced of tests collected)
and for how long: on a terminal the same line, redrawn every second; in a log a
line when the step changes and at least every ``PHASE_EVERY`` seconds (a
clock of its own writes it while nothing else does), until the first result.
"""

from __future__ import annotations

import threading
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
PHASE_EVERY = 8.0
"""Seconds at most between two lines in a log before the first mutant."""
TICK = 1.0
"""Seconds between two looks of the clock that keeps the step's line alive."""

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
        self.started = clock()
        self.step: tuple[str, int, int] | None = None
        """What the run does before its first mutant (``phase``); None once one came."""
        self.step_line = 0.0
        """When the step's line was last written."""
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.clock_thread: threading.Thread | None = None

    def phase(self, step: str, done: int = 0, total: int = 0) -> None:
        """What the run does now (``isolation.ran.Step``), how far along: shown at once when
        the step changes, and kept alive by a clock until the first result."""
        with self.lock:
            if self.done.is_set():
                return
            changed = self.step is None or self.step[0] != step
            self.step = (step, done, total)
            if changed or self.terminal:
                self._step_line(self.clock())
        if self.clock_thread is None:
            self.clock_thread = threading.Thread(target=self._keep_alive, daemon=True,
                                                 name="metaeval-progress")
            self.clock_thread.start()

    def stop(self) -> None:
        """No more step lines (the first result came, or the run ended without one)."""
        with self.lock:
            if self.terminal and self.step is not None and not self.done.is_set():
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            self.done.set()
            self.step = None

    def clear_line(self) -> None:
        """Make room on a terminal for other text on stderr (the clock redraws the step)."""
        with self.lock:
            if self.terminal and self.step is not None:
                self.stream.write("\r\x1b[K")
                self.stream.flush()

    def _keep_alive(self) -> None:
        while not self.done.wait(TICK):
            with self.lock:
                now = self.clock()
                if self.step is not None and not self.done.is_set() and (
                        self.terminal or now - self.step_line >= PHASE_EVERY):
                    self._step_line(now)

    def _step_line(self, now: float) -> None:
        assert self.step is not None
        step, done, total = self.step
        counted = f": {done}/{total} tests" if total else ""
        text = f"{step}{counted} ({duration_text(now - self.started)})"
        self.step_line = now
        if self.terminal:
            self.stream.write(f"\rmetaeval mutate: {text}\x1b[K")
        else:
            self.stream.write(f"metaeval mutate: {text}\n")
        self.stream.flush()

    def pace(self, left: TimeLeft) -> None:
        """The runner's estimate, which it keeps up to date: shown instead of the count's."""
        self.estimate = left

    def __call__(self, done: int, total: int, result: MutantResult) -> None:
        ran = not result.cached and result.status not in SETTLED
        finished = done == total
        # Ignored and cached mutants are settled before the baseline is traced: the
        # step lines go on until a mutant has run, or the silence comes back.
        stepping = self.step is not None and not self.done.is_set()
        if not stepping or ran or finished:
            self.stop()
        now = self.clock()
        self.counts[dict(LABELS)[result.status]] += 1
        if ran:
            self.ran += 1
            if self.first_run is None:
                self.first_run = now
        if stepping and not (ran or finished):
            return  # still before the first mutant that ran: the step line speaks
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
