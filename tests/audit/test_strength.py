"""Stated preference strength per order and position flips by strength, worked by
hand on small tables; no strength stated means no figure, never zeros."""

from __future__ import annotations

from metaeval.audit.collect import Decision, VerdictTable
from metaeval.audit.strength import strengths
from metaeval.loaders.judge_items import Order, PairItem, Slot, Variant


def _pair(i: str) -> PairItem:
    return PairItem(i, "q", "x", "y", None, None, "test")


def _slot(i: str, order: Order) -> Slot:
    return Slot(i, Variant.ORIGINAL, order)


def test_strengths_per_order_and_flips_by_the_strongest_side() -> None:
    ab, ba = Order.AB, Order.BA
    decisions: dict[Slot, tuple[Decision, ...]] = {
                 _slot("p", ab): ("a",), _slot("p", ba): ("b",),   # flip, strong in ab
                 _slot("q", ab): ("a",), _slot("q", ba): ("b",),   # flip, slight both
                 _slot("r", ab): ("b",), _slot("r", ba): ("b",),   # consistent
                 _slot("s", ab): ("tie",), _slot("s", ba): ("a",)}  # flip via a tie
    strength: dict[Slot, tuple[str | None, ...]] = {
                _slot("p", ab): ("strong",), _slot("p", ba): ("slight",),
                _slot("q", ab): ("slight",), _slot("q", ba): ("slight",),
                _slot("r", ab): ("strong",), _slot("r", ba): (None,),
                _slot("s", ba): ("strong",)}
    found = strengths(tuple(_pair(i) for i in "pqrs"), VerdictTable(decisions,
                                                                    strength=strength))
    assert found is not None
    assert [(o.order, o.strong, o.slight, o.unstated) for o in found.orders] == [
        (ab, 2, 1, 0), (ba, 1, 2, 1)]
    assert (found.strong_flips, found.slight_flips, found.unstated_flips) == (2, 1, 0)


def test_the_strength_of_k_samples_is_that_of_the_samples_that_decided() -> None:
    slot = _slot("p", Order.AB)
    table = VerdictTable({slot: ("a", "a", "b")}, strength={slot: ("slight", None, "strong")})
    found = strengths((_pair("p"),), table)
    assert found is not None and (found.orders[0].strong, found.orders[0].slight) == (0, 1)


def test_no_stated_strength_is_no_figure() -> None:
    slot = _slot("p", Order.AB)
    assert strengths((_pair("p"),), VerdictTable({slot: ("a",)})) is None
    assert strengths((_pair("p"),), VerdictTable({slot: ("a",)},
                                                 strength={slot: (None,)})) is None
