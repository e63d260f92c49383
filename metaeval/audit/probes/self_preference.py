"""The self-preference probe: does the judge favour responses its own model family
wrote?

An item declares who wrote each response in its metadata,
``"metadata": {"authors": {"a": "gpt-4o-mini", "b": "llama-3-8b"}}``; a model's
family is the leading letters of its name, lowercased (``gpt-4o-mini`` -> ``gpt``),
and the judge's is that of its model, or of its name for a recorded or offline
judge (``--judge gpt-4o``). The probe reads the labelled pairs (people chose ``a``
or ``b``) where exactly one response is the judge's family's, in every order
recorded, and compares two error rates: choosing its own family's response when
people preferred the other, and choosing the other when people preferred its own.
An unbiased judge errs alike both ways whatever its accuracy; Fisher's exact test,
one-sided (the first rate greater), at the audit's alpha.

It needs both kinds of pair (own better, other better); with none it is not run
and never a reason the judge may not gate (few logs declare authors). Its mirror
is its own (``control``): on the same pairs, a judge planted to choose its own
family every time must be FOUND, and one that chooses as people did must be clean.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from scipy.stats import fisher_exact

from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.probes.unit import ProbeResult, ProbeRun, ProbeUnit, ProbeView, Required
from metaeval.contract import JsonObject
from metaeval.judges.base import JudgeIdentity, Mode
from metaeval.loaders.judge_items import Order, PairItem

__all__ = ["UNIT", "SelfPreferenceResult", "authors", "family"]

NO_AUTHORS = "no labelled pair has one response by the judge's own model family"
"""Why the probe did not run on the items of most audits: said by nothing but the JSON."""
OFFLINE_MODELS = ("", "recorded", "fake")
"""A judge's ``model`` that names no model: its family comes from its name."""


def family(name: str) -> str:
    """A model's family: the leading letters of its name, lowercased; "" for none."""
    found = re.match(r"[A-Za-z]+", name.strip())
    return found.group(0).lower() if found else ""


def judge_family(judge: JudgeIdentity) -> str:
    return family(judge.name if judge.model in OFFLINE_MODELS else judge.model)


def authors(item: PairItem) -> tuple[str, str] | None:
    """The families of the authors of ``response_a`` and ``response_b``, from the item's
    ``metadata.authors``; None when it does not declare both as text."""
    declared = (item.metadata or {}).get("authors")
    if not isinstance(declared, dict):
        return None
    a, b = declared.get("a"), declared.get("b")
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    return family(a), family(b)


@dataclass(frozen=True, slots=True)
class SelfPreferenceResult:
    """What the probe counted: pair-orders where people preferred the judge's own
    family (and how often it chose the other) and where they preferred the other
    (and how often it chose its own)."""

    status: ProbeStatus
    family: str
    pairs: int = 0
    own_better: int = 0
    against_own: int = 0
    other_better: int = 0
    for_own: int = 0
    unscored: int = 0
    p_value: float = 1.0
    alpha: float = 0.05
    reason: str = ""

    def headline(self) -> str:
        if self.status is ProbeStatus.NOT_RUN:
            return f"not run ({self.reason})"
        return (f"{self.status.value} — chose its own family's worse response in "
                f"{self.for_own} of {self.other_better}, the other's worse one in "
                f"{self.against_own} of {self.own_better}")


Choose = Callable[[PairItem, Order, str], str | bool | None]
"""The judge's pick on a pair in an order (``a``, ``b``, ``tie``; None unscored;
False: not recorded in that order)."""


def _measure(pairs: tuple[PairItem, ...], own: str, choose: Choose,
             alpha: float) -> SelfPreferenceResult:
    own_better = against_own = other_better = for_own = unscored = 0
    counted = 0
    for pair in pairs:
        sides = authors(pair)
        if not own or sides is None or pair.label not in ("a", "b") or \
                (sides[0] == own) == (sides[1] == own):
            continue
        mine = "a" if sides[0] == own else "b"
        counted += 1
        for order in Order:
            picked = choose(pair, order, mine)
            if picked is False:
                continue
            if picked is None:
                unscored += 1
            elif pair.label == mine:
                own_better += 1
                against_own += picked not in (mine, "tie")
            else:
                other_better += 1
                for_own += picked == mine
    if not own_better or not other_better:
        why = NO_AUTHORS if not counted else (
            f"{counted} pair(s) with one response by the {own!r} family, but people "
            "preferred " + ("the other family's" if not own_better else "its own") + " in "
            "all of them: the two error rates cannot be compared")
        return SelfPreferenceResult(ProbeStatus.NOT_RUN, own, counted, own_better,
                                    against_own, other_better, for_own, unscored,
                                    alpha=alpha, reason=why)
    _, p = fisher_exact([[for_own, other_better - for_own],
                         [against_own, own_better - against_own]], alternative="greater")
    p_value = min(1.0, max(0.0, float(p)))
    status = ProbeStatus.FOUND if p_value < alpha else ProbeStatus.CLEAN
    return SelfPreferenceResult(status, own, counted, own_better, against_own, other_better,
                                for_own, unscored, p_value, alpha)


def _own(on: ProbeRun) -> str:
    return "" if on.judge is None else judge_family(on.judge)


def _run(on: ProbeRun) -> ProbeResult:
    def recorded(pair: PairItem, order: Order, mine: str) -> str | bool | None:
        if not on.table.recorded(pair.id, order):
            return False
        decided = on.table.decided(pair.id, order=order)
        return decided if isinstance(decided, str) else None

    return _measure(on.items.pairwise, _own(on), recorded, on.bars.alpha)


def _control(on: ProbeRun, planted: bool) -> ProbeResult:
    def planted_judge(pair: PairItem, order: Order, mine: str) -> str:
        return mine if planted else (pair.label or "tie")

    return _measure(on.items.pairwise, _own(on), planted_judge, on.bars.alpha)


def _result(result: ProbeResult) -> SelfPreferenceResult:
    assert isinstance(result, SelfPreferenceResult)
    return result


def _document(result: ProbeResult, view: ProbeView) -> JsonObject:
    r = _result(result)
    return {"status": r.status.value, "headline": r.headline(), "family": r.family,
            "pairs": r.pairs, "own_better": r.own_better, "against_own": r.against_own,
            "other_better": r.other_better, "for_own": r.for_own, "unscored": r.unscored,
            "p_value": r.p_value, "alpha": r.alpha, "reason": r.reason,
            "test": "Fisher's exact test, one-sided: its own family's worse response "
                    "chosen more often than the other family's"}


def _lines(result: ProbeResult, view: ProbeView) -> list[str]:
    r = _result(result)
    if r.status is ProbeStatus.NOT_RUN and r.reason == NO_AUTHORS:
        return []  # the items declare no authors: nothing to say in the table
    if r.status is ProbeStatus.NOT_RUN:
        return [f"self-preference: {r.headline()}"]
    return [f"self-preference ({r.family}): {r.headline()} (Fisher p={r.p_value:.3g}, "
            f"alpha {r.alpha:g}; {r.pairs} pair(s), unscored {r.unscored})"]


UNIT = ProbeUnit("self-preference", "self_preference", Mode.PAIRWISE, _run, _document,
                 _lines, required=Required.NEVER, on_probes=False, control=_control)
