"""How strongly a pairwise judge stated its preferences (``A>>B`` strong, ``A>B``
slight), per order shown, and the position flips by strength: a flip between two
slight preferences is a judge on the fence, one with a strong preference in either
order is a judge sure of opposite answers. Measures only what the log or the reply
states; it must never infer a strength from anything else."""

from __future__ import annotations

from dataclasses import dataclass

from metaeval.audit.collect import VerdictTable
from metaeval.audit.decided import Decided, decide
from metaeval.loaders.judge_items import Order, PairItem, Slot, Variant


@dataclass(frozen=True, slots=True)
class OrderStrength:
    """Of the preferences (``a`` or ``b``) decided in one order: how many were stated
    strong, slight, or with no strength."""

    order: Order
    strong: int
    slight: int
    unstated: int


@dataclass(frozen=True, slots=True)
class Strengths:
    """Per order recorded, and the position flips (pairs judged differently in the
    two orders, ties included) by the strongest preference either order stated."""

    orders: tuple[OrderStrength, ...]
    strong_flips: int
    slight_flips: int
    unstated_flips: int


def _strength(table: VerdictTable, decided: Decided, slot: Slot) -> str | None:
    """The strength of the decided verdict: the most stated among the samples that
    gave it (a tie between strong and slight is strong: the judge said it once)."""
    decision = decided[slot]
    said = [s for d, s in zip(table.decisions.get(slot, ()),
                              table.strength.get(slot, ()), strict=False)
            if d == decision and s is not None]
    if not said:
        return None
    return "strong" if said.count("strong") >= said.count("slight") else "slight"


def strengths(pairs: tuple[PairItem, ...], table: VerdictTable,
              decided: Decided | None = None) -> Strengths | None:
    """None when no verdict on ``pairs`` states a strength (most judges do not).
    ``decided``: the table's decisions, when the audit made them already."""
    slots = {(p.id, o): Slot(p.id, Variant.ORIGINAL, o) for p in pairs for o in Order}
    if not any(any(s is not None for s in table.strength.get(slot, ()))
               for slot in slots.values()):
        return None
    decided = decide(table.decisions) if decided is None else decided
    orders = []
    for order in Order:
        shown = [slots[p.id, order] for p in pairs if slots[p.id, order] in table.decisions]
        if not shown:
            continue
        preferred = [s for s in shown if decided[s] in ("a", "b")]
        stated = [_strength(table, decided, s) for s in preferred]
        orders.append(OrderStrength(order, stated.count("strong"), stated.count("slight"),
                                    stated.count(None)))
    flips = {"strong": 0, "slight": 0, None: 0}
    for p in pairs:
        ab, ba = slots[p.id, Order.AB], slots[p.id, Order.BA]
        if ab not in table.decisions or ba not in table.decisions:
            continue
        one, two = decided[ab], decided[ba]
        if not isinstance(one, str) or not isinstance(two, str) or one == two:
            continue
        said = {_strength(table, decided, ab), _strength(table, decided, ba)}
        flips["strong" if "strong" in said else "slight" if "slight" in said else None] += 1
    return Strengths(tuple(orders), flips["strong"], flips["slight"], flips[None])
