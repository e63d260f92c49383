"""When the labels cannot decide a bar yet, and how many more would likely decide it.

A gated measure (kappa, TPR, TNR) is read against its bar through its interval:
wholly above the bar, the bar is met; wholly below, it is missed; an interval
that contains the bar is *open*: these labels cannot say which, and the audit is
inconclusive. How many further labelled items would likely decide it is a power
computation from the observed figures: with the items' make-up unchanged, an
interval's half-width shrinks as 1/sqrt(n), so the n at which the estimate's
distance from the bar equals the half-width at ``POWER`` (the estimate taken as
the truth) is ``n * (h * (z + z_power) / (z * d)) ** 2``, h the half-width on the
bar's side and d the distance from the estimate to the bar. It is an estimate
("about"): the estimate moves as labels come; a simulation test holds how often
that many more labels from the same source settle it.

This module never turns an open measure into a pass or a miss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from statistics import NormalDist

from metaeval.audit.metrics import CONFIDENCE, Interval
from metaeval.decimals import fixed

POWER = 0.8
"""The chance, were the estimate the truth, that the interval at the further items
excludes the bar: the usual power of a sample-size computation."""
MAX_MORE = 100_000
"""More further items than this are not counted: said as "more than" this."""


class Side(Enum):
    """Where a measure's interval lies against its bar."""

    MET = "met"
    """Wholly at or above the bar."""
    MISSED = "missed"
    """Wholly below the bar (or the estimate below it)."""
    OPEN = "open"
    """The interval contains the bar: these labels cannot decide it."""


def side(value: float, interval: Interval, bar: float) -> Side:
    """Where ``value`` with ``interval`` lies against ``bar``. An interval holding
    the bar is open whatever the estimate; otherwise the estimate decides (a
    percentile interval may leave the estimate outside it: it is never read as a
    pass then)."""
    if interval.low <= bar <= interval.high:
        return Side.OPEN
    return Side.MISSED if value < bar else Side.MET


def more_items(value: float, interval: Interval, bar: float, n: int,
               power: float = POWER) -> int | None:
    """Further labelled items after which the interval would likely exclude ``bar``
    (see the module docstring); None when the estimate is on the bar (no number of
    labels can be expected to move it off); at most ``MAX_MORE``. ``n``: the labelled
    items the measure was computed on (>= 1)."""
    distance = abs(value - bar)
    if distance <= 1e-12 or n < 1:
        return None
    half = value - interval.low if value > bar else interval.high - value
    half = max(half, distance)  # an open interval reaches the bar: h >= d
    z = NormalDist().inv_cdf(0.5 + interval.level / 2)
    z_power = NormalDist().inv_cdf(power)
    needed = n * (half * (z + z_power) / (z * distance)) ** 2
    return min(MAX_MORE, max(1, math.ceil(needed - n)))


@dataclass(frozen=True, slots=True)
class Undecided:
    """One gated measure whose interval contains its bar."""

    measure: str
    value: float
    interval: Interval
    bar: float
    n: int
    """The labelled items it was measured on."""
    more: int | None
    """Further labelled items that would likely decide it; None: the estimate is on
    the bar."""

    def said(self) -> str:
        """The reason line: the figure, its interval, the bar and the items needed."""
        level = f"{self.interval.level:.0%}" if self.interval.level != CONFIDENCE else "95%"
        return (f"{self.measure} {fixed(self.value)} [{fixed(self.interval.low)}, "
                f"{fixed(self.interval.high)}] ({level} interval, {self.n} labelled items) "
                f"contains the bar {self.bar:g}: " + more_said(self.more)
                + " would likely decide it")


def undecided(measure: str, value: float, interval: Interval, bar: float,
              n: int) -> Undecided:
    """``measure``, open against ``bar``, with the further items it needs."""
    return Undecided(measure, value, interval, bar, n, more_items(value, interval, bar, n))


def more_said(more: int | None) -> str:
    """``about N more labelled items``, as every report says it."""
    if more is None:
        return "no number of labelled items (the estimate is on the bar)"
    if more >= MAX_MORE:
        return f"more than {MAX_MORE} more labelled items"
    return f"about {more} more labelled item{'' if more == 1 else 's'}"


def most(open_: tuple[Undecided, ...]) -> int | None:
    """What the whole decision needs: every open measure decided, so the largest
    count; None when one of them cannot be expected to move off its bar."""
    counts = [u.more for u in open_]
    if not counts or any(c is None for c in counts):
        return None
    return max(c for c in counts if c is not None)
