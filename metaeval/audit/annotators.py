"""Several annotators per item: how far they agree with each other (the human
ceiling) and how far the judge agrees with them.

A ``Panel`` holds, for the items that carry ``labels``, every annotator's label
and the judge's label on the same footing: a pair label for a pairwise item;
pass/fail or an integer on the label scale for a pointwise one (integers become
pass/fail at the label pass mark when some item's annotators gave pass/fail).
Inter-annotator agreement is Krippendorff's alpha (the ``krippendorff`` package;
nominal or ordinal as the labels are) and the mean pairwise Cohen's kappa
(scikit-learn, through ``metaeval.audit.metrics``); the judge is read beside
them: its mean kappa and agreement with each annotator, and alpha with the judge
counted as one more annotator. A figure that cannot be computed is a ``Value``
with its reason, never 0 passed off as measured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from metaeval.audit.decided import Decided, Readings
from metaeval.audit.metrics import Value, nominal_kappa, scored_weighted_kappa
from metaeval.audit.rater_agreement import Level, mean_kappa, measured, rater_alpha
from metaeval.contract import Outcome
from metaeval.judges.base import DEFAULT_SCALE, Mode, Scale
from metaeval.loaders.judge_items import Order, PairItem, PointItem, Slot
from metaeval.loaders.judge_labels import Label

JUDGE = "judge"
"""The judge's name when it is counted as one more annotator (alpha with the judge)."""


@dataclass(frozen=True, slots=True)
class Panel:
    """The annotated items of one kind: each annotator's labels by item, and the
    judge's label on each (None: unscored)."""

    kind: str
    """The kind of item: ``pairwise``, ``pointwise`` or ``categorical``."""
    level: Level
    humans: Mapping[str, Mapping[str, Label]]
    """annotator -> item -> label, annotators in the order first met."""
    judge: Mapping[str, Label | None]
    """item -> the judge's label, for every annotated item with a verdict."""
    scale: Scale = DEFAULT_SCALE
    """The label scale (ordinal panels): the range alpha and kappa weigh."""

    def items(self) -> list[str]:
        return list(self.judge)

    def multi(self) -> list[str]:
        """The items at least two annotators labelled."""
        return [i for i in self.judge
                if sum(i in labels for labels in self.humans.values()) >= 2]


def _judge_pair(item: PairItem, decided: Decided) -> tuple[bool, Label | None]:
    """Whether the judge has a verdict on the pair, and which: the order ``ab`` (the
    item's own) when recorded, else ``ba``."""
    for order in (Order.AB, Order.BA):
        slot = Slot(item.id, order=order)
        if slot in decided:
            decision = decided[slot]
            return True, decision if isinstance(decision, str) else None
    return False, None


def pair_panel(items: Sequence[PairItem], decided: Decided) -> Panel | None:
    """The pairwise items with annotators; None when there are none."""
    humans: dict[str, dict[str, Label]] = {}
    judge: dict[str, Label | None] = {}
    for item in items:
        present, label = _judge_pair(item, decided)
        if not item.annotations or not present:
            continue
        judge[item.id] = label
        for a in item.annotations:
            humans.setdefault(a.annotator, {})[item.id] = a.label
    return Panel(Mode.PAIRWISE.value, Level.NOMINAL, humans, judge) if judge else None


def point_panel(items: Sequence[PointItem], decided: Decided, readings: Readings,
                labels: Scale) -> Panel | None:
    """The pointwise items with annotators. Ordinal when every label is an integer
    (the judge's score rescaled to the label scale), else pass/fail (integers at
    the label pass mark; the judge's verdict as it passes or fails)."""
    annotated = [i for i in items if i.annotations and i.label_class is None
                 and not any(isinstance(a.label, str) and a.label not in ("pass", "fail")
                             for a in i.annotations)
                 and Slot(i.id) in decided]
    if not annotated:
        return None
    ordinal_level = all(isinstance(a.label, int) for i in annotated for a in i.annotations)
    humans: dict[str, dict[str, Label]] = {}
    judge: dict[str, Label | None] = {}
    for item in annotated:
        read = readings[item.id]
        if ordinal_level:
            judge[item.id] = read.ordinal
        else:
            got = read.outcome
            judge[item.id] = None if got is Outcome.UNSCORED else got.value
        for a in item.annotations:
            label: Label = a.label
            if not ordinal_level and isinstance(label, int):
                label = "pass" if label >= labels.pass_at else "fail"
            humans.setdefault(a.annotator, {})[item.id] = label
    return Panel(Mode.POINTWISE.value, Level.ORDINAL if ordinal_level else Level.NOMINAL,
                 humans, judge, labels)


@dataclass(frozen=True, slots=True)
class Agreement:
    """The annotators with each other, and the judge with them (the human ceiling)."""

    level: Level
    annotators: tuple[tuple[str, int], ...]
    """Each annotator and how many of the items it labelled."""
    items: int
    multi: int
    """Items with two or more annotators: the only ones agreement is measured on."""
    alpha: Value
    """Krippendorff's alpha among the annotators. Range [-1, 1]; 1 perfect, 0 chance."""
    kappa: Value
    """Mean Cohen's kappa over the annotator pairs in ``pairs``."""
    pairs: int
    """Annotator pairs with a computed kappa (two or more items in common)."""
    agreement: float | None
    """Mean share of common items on which a pair of annotators gave the same label."""
    judge_alpha: Value
    """Krippendorff's alpha with the judge counted as one more annotator."""
    judge_kappa: Value
    """Mean Cohen's kappa of the judge with each annotator, on that annotator's items."""
    judge_pairs: int
    judge_agreement: float | None
    """Mean share of an annotator's items on which the judge gave the same label."""
    no_consensus: int = 0
    """Items whose annotators tie for the most given label (no single label)."""


def alpha(panel: Panel, with_judge: bool = False) -> Value:
    """Krippendorff's alpha over the items two or more annotators labelled (nominal
    or ordinal by the panel's level, an ordinal one over the whole label scale).
    With ``with_judge`` the judge's labels are one more annotator's (an unscored
    verdict is a missing one)."""
    raters: dict[str, Mapping[str, Label | None]] = dict(panel.humans)
    if with_judge:
        raters[JUDGE] = panel.judge
    return rater_alpha(raters, panel.items(), panel.level,
                       range(panel.scale.low, panel.scale.high + 1))


def pair_kappa(panel: Panel, first: Mapping[str, Label | None],
               second: Mapping[str, Label | None]) -> tuple[Value, int, int]:
    """Cohen's kappa between two raters on the items both labelled (``second`` may
    be the judge: its unscored verdicts count as disagreeing); returns kappa, the
    items in common and the items on which they gave the same label."""
    common = [i for i in first if i in second and first[i] is not None]
    a = [first[i] for i in common]
    b = [second[i] for i in common]
    same = sum(x is not None and x == y for x, y in zip(a, b, strict=True))
    if panel.level is Level.ORDINAL:
        points = list(range(panel.scale.low, panel.scale.high + 1))
        value = scored_weighted_kappa([int(x) for x in a if x is not None],
                                      [None if y is None else int(y) for y in b],
                                      "linear", points)
    else:
        value = nominal_kappa([str(x) for x in a], [None if y is None else str(y) for y in b])
    return value, len(common), same


def agreement(panel: Panel, no_consensus: int = 0) -> Agreement:
    """Alpha and mean pairwise kappa among the annotators, and the same figures for
    the judge against them."""
    names = list(panel.humans)
    kappas, shares = [], []
    for x, y in combinations(names, 2):
        first, second = panel.humans[x], panel.humans[y]
        if sum(i in second for i in first) < 2:
            continue  # a crowd's many pairs that barely meet cost no kappa each
        value, n, same = pair_kappa(panel, first, second)
        kappas.append(value)
        shares.append(same / n)
    judged, judge_shares = [], []
    for name in names:
        value, n, same = pair_kappa(panel, panel.humans[name], panel.judge)
        if n >= 2:
            judged.append(value)
            judge_shares.append(same / n)
    used, judge_used = measured(kappas), measured(judged)
    return Agreement(
        panel.level, tuple((n, len(panel.humans[n])) for n in names), len(panel.judge),
        len(panel.multi()), alpha(panel), mean_kappa(kappas, "annotator pair"), len(used),
        sum(shares) / len(shares) if shares else None, alpha(panel, with_judge=True),
        mean_kappa(judged, "annotator"), len(judge_used),
        sum(judge_shares) / len(judge_shares) if judge_shares else None, no_consensus)


def class_panel(items: Sequence[PointItem], decided: Decided,
                classes: tuple[str, ...]) -> Panel | None:
    """The categorical items with annotators: each label one of ``classes``; the
    judge's label its recorded class (anything else is unscored)."""
    humans: dict[str, dict[str, Label]] = {}
    judge: dict[str, Label | None] = {}
    for item in items:
        if not item.annotations or Slot(item.id) not in decided or not all(
                a.label in classes for a in item.annotations):
            continue
        decision = decided[Slot(item.id)]
        judge[item.id] = decision if isinstance(decision, str) and decision in classes else None
        for a in item.annotations:
            humans.setdefault(a.annotator, {})[item.id] = a.label
    return Panel("categorical", Level.NOMINAL, humans, judge) if judge else None
