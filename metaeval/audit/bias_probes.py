"""Bias probes: does a judge's verdict follow the order shown, the length, or an
instruction planted in the response?

Each probe reads a ``VerdictTable`` and decides FOUND or clean by an exact test
at a stated alpha (``metaeval.audit.stats``); a probe with nothing to test is
NOT_RUN, never clean by default. A probe must never decide by a rate alone: the
counts and the p-value are kept so the report can show its working.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from metaeval.audit.bars import ALPHA, CHANCE_FLIP
from metaeval.audit.collect import VerdictTable
from metaeval.audit.decided import Decided, Decision, outcome
from metaeval.audit.stats import binom_upper_tail, mcnemar_exact, sign_test
from metaeval.contract import Outcome
from metaeval.judges.base import Scale
from metaeval.loaders.judge_items import (
    InjectionCase,
    LengthProbe,
    Order,
    PairItem,
    Probe,
    Slot,
    Variant,
)


class ProbeStatus(Enum):
    """What a probe concluded."""

    FOUND = "FOUND"
    """The bias is there: the exact test rejects chance at alpha."""
    CLEAN = "clean"
    """The probe ran and found nothing beyond chance."""
    NOT_RUN = "not run"
    """No probe items, or no verdicts for them: nothing was tested."""


def _status(ran: bool, p_value: float, alpha: float) -> ProbeStatus:
    if not ran:
        return ProbeStatus.NOT_RUN
    return ProbeStatus.FOUND if p_value < alpha else ProbeStatus.CLEAN


@dataclass(frozen=True, slots=True)
class PositionResult:
    """Each pair judged in both orders. ``first_preferred``: the response shown first
    won more often than content allows (order-driven); ``second_preferred`` the other
    way. Flips are tested against ``chance`` by an exact binomial test."""

    status: ProbeStatus
    pairs: int
    consistent: int
    first_preferred: int
    second_preferred: int
    unscored: int
    p_value: float
    alpha: float
    chance: float
    one_order: int = 0
    """Pairs with verdicts in one order only: nothing to compare, left out."""
    reason: str = ""
    """Why the probe did not run, when it did not."""

    @property
    def flips(self) -> int:
        return self.first_preferred + self.second_preferred

    @property
    def scored(self) -> int:
        return self.pairs - self.unscored

    def headline(self) -> str:
        return f"{self.status.value} — {self.flips} of {self.scored}"


def _lean(decision: Decision, order: Order) -> int:
    """+1 when the verdict picked the response shown first, -1 the second, 0 a tie."""
    if decision == "tie":
        return 0
    return 1 if decision == order.first else -1


def position_probe(pairs: tuple[PairItem, ...], decided: Decided, *, alpha: float = ALPHA,
                   chance: float = CHANCE_FLIP) -> PositionResult:
    """``decided``: the verdict table's decisions (``metaeval.audit.decided.decide``)."""
    both = [p for p in pairs if all(Slot(p.id, Variant.ORIGINAL, o) in decided
                                    for o in Order)]
    one_order = len(pairs) - len(both)
    consistent = first = second = unscored = 0
    for pair in both:
        ab = decided[Slot(pair.id, Variant.ORIGINAL, Order.AB)]
        ba = decided[Slot(pair.id, Variant.ORIGINAL, Order.BA)]
        if not isinstance(ab, str) or not isinstance(ba, str):
            unscored += 1
        elif ab == ba:
            consistent += 1
        elif _lean(ab, Order.AB) + _lean(ba, Order.BA) > 0:
            first += 1
        else:
            second += 1
    scored = len(both) - unscored
    p = binom_upper_tail(first + second, scored, chance)
    reason = ""
    if pairs and not both:
        ids = {q.id for q in pairs}
        shown = sorted({slot.order.value for slot in decided
                        if slot.variant is Variant.ORIGINAL and slot.item in ids})
        reason = (f"one order recorded ({', '.join(shown) or 'none'}): the probe compares "
                  "each pair's verdicts in both orders")
    elif not pairs:
        reason = "no pairwise items with verdicts"
    elif not scored:
        reason = "no pair scored in both orders"
    return PositionResult(_status(scored > 0, p, alpha), len(both), consistent, first, second,
                          unscored, p, alpha, chance, one_order, reason)


@dataclass(frozen=True, slots=True)
class LengthShift:
    """One item: its score before and after padding, and the characters added."""

    id: str
    title: str
    before: Decision
    after: Decision
    extra_chars: int

    @property
    def shift(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        if isinstance(self.before, str) or isinstance(self.after, str):
            return None
        return float(self.after) - float(self.before)

    def line(self) -> str:
        if self.shift is None:
            return f"{self.title}: unscored ({self.extra_chars} extra characters)"
        return (f"{self.title}: {_show(self.before)} -> {_show(self.after)} "
                f"({self.shift:+g} for {self.extra_chars} extra characters)")


def _show(decision: Decision) -> str:
    if isinstance(decision, bool):
        return "PASS" if decision else "FAIL"
    return f"{decision:g}" if isinstance(decision, float) else str(decision)


def title(prompt: str, limit: int = 48) -> str:
    text = " ".join(prompt.split()).rstrip("?.!")
    text = text[:1].lower() + text[1:]
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True, slots=True)
class LengthResult:
    """Padding that adds no information; the shifts decided by a sign test (on
    pass/fail verdicts that is McNemar's exact test). Generated probes are also
    broken down ``by_style`` and ``by_level``; each group is tested at alpha over
    the number of groups (Bonferroni), and a group FOUND makes the probe FOUND."""

    status: ProbeStatus
    shifts: tuple[LengthShift, ...]
    up: int
    down: int
    same: int
    unscored: int
    p_value: float
    alpha: float
    by_style: tuple[tuple[str, LengthResult], ...] = ()
    by_level: tuple[tuple[str, LengthResult], ...] = ()

    def headline(self) -> str:
        scored = self.up + self.down + self.same
        return f"{self.status.value} — {self.up} of {scored} scored higher when padded"

    @property
    def mean_extra(self) -> float:
        """Characters added, on average. 0.0 with no probe."""
        return (sum(s.extra_chars for s in self.shifts) / len(self.shifts)
                if self.shifts else 0.0)


def before_id(probe: LengthProbe | InjectionCase, table: VerdictTable) -> str:
    """Where the probe's unpadded verdict is: its labelled item's, when that was asked."""
    if probe.base is not None and Slot(probe.base) in table.decisions:
        return probe.base
    return probe.id


def level_name(level: float | None) -> str:
    return "file" if level is None else f"+{level:.0%}"


def _groups(probes: tuple[Probe, ...], key: Callable[[Probe], str]
            ) -> list[tuple[str, tuple[Probe, ...]]]:
    names = list(dict.fromkeys(key(p) for p in probes))
    return [(n, tuple(p for p in probes if key(p) == n)) for n in names]


def length_probe(probes: tuple[LengthProbe, ...], table: VerdictTable, *,
                 alpha: float = ALPHA, groups: bool = True) -> LengthResult:
    shifts = tuple(LengthShift(p.id, title(p.prompt), table.decided(before_id(p, table)),
                               table.decided(p.id, Variant.PADDED), len(p.padded) - len(p.response))
                   for p in probes)
    moves = [s.shift for s in shifts]
    up = sum(m is not None and m > 0 for m in moves)
    down = sum(m is not None and m < 0 for m in moves)
    same = sum(m == 0 for m in moves)
    unscored = sum(m is None for m in moves)
    p = sign_test(up, down)
    status = _status(up + down + same > 0, p, alpha)
    by_style: list[tuple[str, LengthResult]] = []
    by_level: list[tuple[str, LengthResult]] = []
    if groups and any(q.level is not None for q in probes):
        styles = _groups(probes, lambda q: q.style if isinstance(q, LengthProbe) else "")
        levels = _groups(probes, lambda q: level_name(q.level)
                         if isinstance(q, LengthProbe) else "")
        share = alpha / (len(styles) + len(levels))
        for found, named in ((by_style, styles), (by_level, levels)):
            for name, group in named:
                found.append((name, length_probe(_only(group, LengthProbe), table,
                                                 alpha=share, groups=False)))
        if any(r.status is ProbeStatus.FOUND and r.up > r.down
               for _, r in by_style + by_level):
            status = ProbeStatus.FOUND
    return LengthResult(status, shifts, up, down, same, unscored, p, alpha, tuple(by_style),
                        tuple(by_level))


T = TypeVar("T")


def _only(probes: tuple[Probe, ...], kind: type[T]) -> tuple[T, ...]:
    return tuple(p for p in probes if isinstance(p, kind))


@dataclass(frozen=True, slots=True)
class InjectionResult:
    """Payloads appended to responses people failed, against a benign suffix of the
    same length. ``injected_flips``/``control_flips``: judged FAIL before, PASS after.
    FOUND when the payload passes cases the control does not (McNemar's exact test
    on ``only_injected`` against ``only_control``)."""

    status: ProbeStatus
    cases: int
    injected_flips: int
    control_flips: int
    already_passed: int
    """Cases the judge passed even without a payload (a false pass of its own)."""
    unscored: int
    only_injected: int
    only_control: int
    p_value: float
    alpha: float
    by_kind: tuple[tuple[str, InjectionResult], ...] = ()
    """Per payload kind, each tested at alpha over the number of kinds (Bonferroni);
    a kind FOUND makes the probe FOUND."""

    @property
    def injected_rate(self) -> float:
        """FAIL -> PASS flips over all cases. Range [0, 1]."""
        return self.injected_flips / self.cases if self.cases else 0.0

    @property
    def control_rate(self) -> float:
        return self.control_flips / self.cases if self.cases else 0.0

    def headline(self) -> str:
        return (f"{self.status.value} — {self.injected_flips} of {self.cases} flipped "
                f"FAIL -> PASS (control {self.control_flips} of {self.cases})")


def injection_probe(cases: tuple[InjectionCase, ...], table: VerdictTable, scale: Scale, *,
                    alpha: float = ALPHA, groups: bool = True) -> InjectionResult:
    injected = control = already = unscored = only_i = only_c = 0
    for case in cases:
        base = outcome(table.decided(before_id(case, table)), scale)
        inj, ctl = (outcome(table.decided(case.id, variant), scale)
                    for variant in (Variant.INJECTED, Variant.CONTROL))
        if Outcome.UNSCORED in (base, inj, ctl):
            unscored += 1
            continue
        already += base is Outcome.PASS
        injected += base is Outcome.FAIL and inj is Outcome.PASS
        control += base is Outcome.FAIL and ctl is Outcome.PASS
        only_i += inj is Outcome.PASS and ctl is Outcome.FAIL
        only_c += ctl is Outcome.PASS and inj is Outcome.FAIL
    p = mcnemar_exact(only_i, only_c)
    ran = len(cases) - unscored > 0
    # Only a payload that passes more than the control is an injection; the reverse
    # (the payload hurting) is no attack on the gate.
    status = _status(ran, p if only_i > only_c else 1.0, alpha)
    kinds = _groups(cases, lambda c: c.kind if isinstance(c, InjectionCase) else "")
    by_kind = tuple((k, injection_probe(_only(group, InjectionCase), table, scale,
                                        alpha=alpha / len(kinds), groups=False))
                    for k, group in kinds) if groups and len(kinds) > 1 else ()
    if any(r.status is ProbeStatus.FOUND for _, r in by_kind):
        status = ProbeStatus.FOUND
    return InjectionResult(status, len(cases), injected, control, already,
                           unscored, only_i, only_c, p, alpha, by_kind)
