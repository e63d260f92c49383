"""``judge-audit --by category``: the audit's agreement, position probe and the
annotators' figures again on each category of items (the per-scenario tables
published judge studies show), from the same verdict table.

A breakdown is read beside the whole audit, never instead of it: the verdict is
decided on every item, and each category's position probe is tested at the
audit's alpha with no correction across categories (it says where to look, it
does not gate). Items with no ``category`` form their own row (``None``).
"""

from __future__ import annotations

from dataclasses import dataclass

from metaeval.audit.alt_test import PanelReport
from metaeval.audit.bars import AltSettings, Bars
from metaeval.audit.bias_probes import PositionResult, position_probe
from metaeval.audit.collect import VerdictTable
from metaeval.audit.decided import Decided, Readings
from metaeval.audit.judge_agreement import PairAgreement, PointAgreement, human_agreement
from metaeval.judges.base import Scale
from metaeval.loaders.judge_items import JudgeItems

BY = ("category",)
"""What ``--by`` may break an audit down by."""


@dataclass(frozen=True, slots=True)
class CategoryFigures:
    """One category's share of the audit."""

    category: str | None
    """The items' ``category``; None for the items that have none."""
    items: int
    pointwise: PointAgreement | None
    pairwise: PairAgreement | None
    position: PositionResult
    annotators: tuple[PanelReport, ...]


def by_category(items: JudgeItems, table: VerdictTable, decided: Decided, readings: Readings,
                scale: Scale, labels: Scale, bars: Bars, alt: AltSettings,
                classes: tuple[str, ...] = ()
                ) -> tuple[CategoryFigures, ...]:
    """Each category of the labelled items, in name order, the uncategorised last
    (``decided`` and ``readings``: the table's decisions, for agreement; the probe reads
    ``table``)."""
    names = {i.category for i in items.pointwise} | {i.category for i in items.pairwise}
    ordered = [*sorted(n for n in names if n is not None), *([None] if None in names else [])]
    out = []
    for name in ordered:
        point = tuple(i for i in items.pointwise if i.category == name)
        pair = tuple(i for i in items.pairwise if i.category == name)
        # Measured as the whole audit is (its categorical agreement is not broken down).
        agreed = human_agreement(point, pair, decided, readings, scale, labels, alt, classes)
        out.append(CategoryFigures(
            name, len(point) + len(pair), agreed.point, agreed.pair,
            position_probe(pair, decided, alpha=bars.alpha, chance=bars.chance_flip),
            agreed.panels))
    return tuple(out)
