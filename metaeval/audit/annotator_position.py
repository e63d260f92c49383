"""Each annotator's own position bias on pairwise items: how often they chose the
response shown first, tested as a judge's position probe is, by an exact binomial
test (``metaeval.audit.stats``).

An annotator sees each pair once, in the order recorded in ``shown`` (``ab``:
``response_a`` first). A pick of ``a`` shown ``ab``, or of ``b`` shown ``ba``, is
a pick of the first side; a tie picks neither and is left out. When the sides
were drawn at random and independently of the content (``metaeval label`` draws
them per annotator and item), an annotator with no position bias picks the first
side with probability 1/2 whatever the content, so the first-side picks are
tested against Binomial(picks, 1/2), two-sided (a preference for the second side
is a bias too). A pair shown in one order only is no such draw: a preference for
the first side cannot be told from one for response ``a``, and the test is not
run. Each annotator is tested at the audit's alpha, uncorrected.

This module measures only: it reads no file and renders nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from metaeval.audit.bars import ALPHA
from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.stats import sign_test
from metaeval.loaders.judge_items import PairItem

ORDERS = ("ab", "ba")
PICKS = ("a", "b", "tie")


@dataclass(frozen=True, slots=True)
class AnnotatorPosition:
    """One annotator's picks on the pairs whose order shown was recorded."""

    annotator: str
    status: ProbeStatus
    """FOUND: the first (or second) side chosen beyond chance at ``alpha``; clean: the
    test ran and found nothing; not run: nothing to test (see ``reason``)."""
    first: int
    """Pairs on which the annotator chose the response shown first."""
    second: int
    """Pairs on which the annotator chose the response shown second."""
    ties: int
    """Pairs labelled a tie: no side chosen, left out of the test."""
    shown_ab: int
    shown_ba: int
    p_value: float
    """Two-sided exact binomial test of ``first`` of ``first + second`` against 1/2;
    in [0, 1]; 1.0 when nothing was tested."""
    alpha: float
    reason: str = ""
    """Why the test did not run, when it did not."""

    @property
    def picks(self) -> int:
        """Pairs on which a side was chosen: the test's n."""
        return self.first + self.second

    @property
    def first_share(self) -> float | None:
        """The share of picks that went to the side shown first; None with no pick."""
        return self.first / self.picks if self.picks else None


def annotator_position(annotator: str, picks: Iterable[tuple[str, str]], *,
                       alpha: float = ALPHA) -> AnnotatorPosition:
    """The test on one annotator's ``picks``: (label ``a``/``b``/``tie``, order shown
    ``ab``/``ba``) per pair. Raises ``ValueError`` on any other label or order (the
    loaders have checked both; anything else is a bug, not data)."""
    first = second = ties = shown_ab = shown_ba = 0
    for label, shown in picks:
        if label not in PICKS or shown not in ORDERS:
            raise ValueError(f"got label {label!r} shown {shown!r}; expected a label in "
                             f"{PICKS} and an order in {ORDERS}")
        shown_ab += shown == "ab"
        shown_ba += shown == "ba"
        if label == "tie":
            ties += 1
        elif (label == "a") == (shown == "ab"):
            first += 1
        else:
            second += 1
    reason = ""
    if not shown_ab + shown_ba:
        reason = "no pair with the order shown recorded"
    elif not shown_ab or not shown_ba:
        only = "ab" if shown_ab else "ba"
        reason = (f"every pair shown in one order ({only}): a preference for the first side "
                  f"cannot be told from one for response {only[0]!r}")
    elif not first + second:
        reason = "ties only: no side chosen"
    p_value = 1.0 if reason else sign_test(first, second)
    status = (ProbeStatus.NOT_RUN if reason else
              ProbeStatus.FOUND if p_value < alpha else ProbeStatus.CLEAN)
    return AnnotatorPosition(annotator, status, first, second, ties, shown_ab, shown_ba,
                             p_value, alpha, reason)


def annotator_positions(picks: Mapping[str, Sequence[tuple[str, str]]], *,
                        alpha: float = ALPHA) -> tuple[AnnotatorPosition, ...]:
    """Each annotator's test, in the order of ``picks`` (annotator -> their picks)."""
    return tuple(annotator_position(who, given, alpha=alpha) for who, given in picks.items())


def item_positions(items: Iterable[PairItem], *, alpha: float = ALPHA
                   ) -> tuple[AnnotatorPosition, ...]:
    """The test for every annotator of ``items`` with at least one label whose order
    shown was recorded (a labels file's ``shown``), annotators in the order first met."""
    picks: dict[str, list[tuple[str, str]]] = {}
    for item in items:
        for a in item.annotations:
            if a.shown is not None and isinstance(a.label, str):
                picks.setdefault(a.annotator, []).append((a.label, a.shown))
    return annotator_positions(picks, alpha=alpha)
