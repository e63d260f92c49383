"""Agreement among raters, whoever they are: Krippendorff's alpha and the mean of
pairwise Cohen's kappa over rater-by-item labels.

Both halves read people against people through here: meta-eval's labels files
(``label_agreement``: annotators per check) and judge-audit's annotated items
(``annotators``: annotators, and the judge as one more rater). Alpha is the
``krippendorff`` package's; a pair's kappa is computed by the caller (nominal or
weighted, ``metrics``) and only averaged here. A value that cannot be measured is
a ``Value`` with its reason, never ``nan``. This module reads no file and renders
nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from enum import StrEnum

import krippendorff
import numpy as np

from metaeval.audit.metrics import NO_CASES, Value
from metaeval.loaders.judge_labels import Label

Raters = Mapping[str, Mapping[str, Label | None]]
"""rater -> item -> label; a missing item or ``None`` is a label not given."""


class Level(StrEnum):
    """How labels compare: as names (equal or not) or as ranks on the label scale."""

    NOMINAL = "nominal"
    """Pair labels, pass/fail, classes: equal or not."""
    ORDINAL = "ordinal"
    """Integer labels on the label scale: 2 is nearer 3 than 5."""


NOT_MEASURED = (NO_CASES, "one label only", "nothing scored")
"""Reasons a pair's kappa says nothing: it is left out of the mean."""


def rater_alpha(raters: Raters, items: Sequence[str], level: Level,
                ranks: Sequence[int] = (), what: str = "item") -> Value:
    """Krippendorff's alpha over the ``items`` two or more raters labelled. Nominal
    labels are coded by name; ordinal ones are the integers of ``ranks`` (the
    scale, so that alpha weighs its whole range). Range [-1, 1]; 1 perfect, 0
    chance. Undefined, with a reason: no ``what`` with two labels; one label on
    every pairable value (no disagreement is expected, so none is measured).

    Alpha reads the labels as counts per item (the package's ``value_counts``),
    built in one pass over the labels given: a rater-by-item table would be
    raters x items cells, most of them empty when many people label a few each.
    """
    wanted = set(items)
    counts: dict[str, Counter[Label]] = {}
    for labels in raters.values():
        for item, label in labels.items():
            if label is not None and item in wanted:
                counts.setdefault(item, Counter())[label] += 1
    pairable = [counts[i] for i in dict.fromkeys(items) if sum(counts.get(i, {}).values()) >= 2]
    if not pairable:
        return Value(0.0, f"{NO_CASES}: no {what} with two or more labels")
    values = {v for unit in pairable for v in unit}
    if len(values) == 1:
        return Value(0.0, f"one label only: every label is {next(iter(values))!r}")
    if level is Level.ORDINAL:
        domain: list[Label] = sorted(set(ranks))
        key = {v: v for v in domain}
    else:
        # By name: 2 and "2" are one label, as they were coded before.
        seen = sorted({str(v) for unit in counts.values() for v in unit})
        domain = list(seen)
        key = {v: str(v) for unit in counts.values() for v in unit}
    column = {v: n for n, v in enumerate(domain)}
    table = np.zeros((len(pairable), len(domain)), dtype=float)
    for row, unit in enumerate(pairable):
        for v, n in unit.items():
            table[row, column[key[v]]] += n
    codes = [float(v) for v in domain] if level is Level.ORDINAL else list(
        map(float, range(len(domain))))
    return Value(float(krippendorff.alpha(value_counts=table, value_domain=codes,
                                          level_of_measurement=level.value)))


def measured(values: Sequence[Value]) -> list[Value]:
    """The pair kappas that say something (not left out for ``NOT_MEASURED``)."""
    return [v for v in values if not v.reason.startswith(NOT_MEASURED)]


def mean_kappa(values: Sequence[Value], what: str) -> Value:
    """The mean of the measured pair kappas; a reason naming ``what`` when none is."""
    kept = measured(values)
    if not kept:
        return Value(0.0, f"{NO_CASES}: no {what} with two or more items in common")
    return Value(sum(v.value for v in kept) / len(kept))
