"""How far a judge agrees with people on categorical items: each labelled with one
of a declared set of classes (e.g. which policy a response violates).

Accuracy (a Wilson interval), Cohen's kappa on the classes (scikit-learn, through
``metaeval.audit.metrics.nominal_kappa``) and the confusion table of people's
class against the judge's. A verdict that is not one of the classes is unscored:
its own column, and in every denominator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from metaeval.audit.decided import Decided
from metaeval.audit.metrics import Interval, Value, nominal_kappa, wilson_interval
from metaeval.loaders.judge_items import PointItem, Slot


@dataclass(frozen=True, slots=True)
class ClassAgreement:
    """Agreement on ``n`` categorical items."""

    classes: tuple[str, ...]
    n: int
    correct: int
    accuracy_interval: Interval
    kappa: Value
    unscored: int
    table: tuple[tuple[int, ...], ...]
    """Row: people's class (in ``classes`` order); column: the judge's, then unscored."""

    @property
    def accuracy(self) -> float:
        """Correct / all items (unscored count as not correct). Range [0, 1]."""
        return self.correct / self.n if self.n else 0.0


def class_agreement(items: Sequence[PointItem], decided: Decided,
                    classes: tuple[str, ...]) -> ClassAgreement | None:
    """Over the categorical items with a verdict; None when there are none."""
    present = [i for i in items if i.label_class is not None
               and Slot(i.id) in decided]
    if not present:
        return None
    human = [i.label_class or "" for i in present]
    judged: list[str | None] = []
    for i in present:
        decision = decided[Slot(i.id)]
        judged.append(decision if isinstance(decision, str) and decision in classes else None)
    correct = sum(h == j for h, j in zip(human, judged, strict=True))
    column = {c: n for n, c in enumerate(classes)}
    counts = [[0] * (len(classes) + 1) for _ in classes]
    for h, j in zip(human, judged, strict=True):
        counts[column[h]][len(classes) if j is None else column[j]] += 1
    return ClassAgreement(classes, len(present), correct, wilson_interval(correct, len(present)),
                          nominal_kappa(human, judged), judged.count(None),
                          tuple(tuple(row) for row in counts))
