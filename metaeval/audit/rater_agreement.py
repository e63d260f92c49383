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

import math
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
    every pairable value (no disagreement is expected, so none is measured)."""
    rows = [[labels.get(i) for i in items] for labels in raters.values()]
    pairable = [col for col in zip(*rows, strict=True)
                if sum(v is not None for v in col) >= 2] if rows else []
    if not pairable:
        return Value(0.0, f"{NO_CASES}: no {what} with two or more labels")
    values = {v for col in pairable for v in col if v is not None}
    if len(values) == 1:
        return Value(0.0, f"one label only: every label is {next(iter(values))!r}")
    if level is Level.ORDINAL:
        codes: dict[Label, float] = {v: float(v) for v in ranks}
    else:
        seen = sorted({str(v) for row in rows for v in row if v is not None})
        codes = {v: float(n) for n, v in enumerate(seen)}
    key = (lambda v: v) if level is Level.ORDINAL else str
    data = np.array([[math.nan if v is None else codes[key(v)] for v in row] for row in rows],
                    dtype=float)
    return Value(float(krippendorff.alpha(reliability_data=data,
                                          value_domain=sorted(set(codes.values())),
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
