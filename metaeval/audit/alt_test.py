"""The alternative annotator test (Calderon, Reichart and Dror, ACL 2025,
arXiv:2501.10970): may the judge replace the annotators?

Each annotator j is left out in turn. On every item j labelled that at least one
other annotator labelled too, the judge and j are each scored against the
remaining annotators' labels (accuracy, the share of them equal to the label,
for nominal labels; negative RMSE for ordinal ones). W_f = 1 when the judge
scores at least as well as j, W_h = 1 when j scores at least as well as the
judge; d = W_h - W_f. The test of j is one-sided, H0: mean(d) >= epsilon
against H1: mean(d) < epsilon (the judge's advantage plus epsilon is above 0),
a one-sample t-test (``scipy.stats.ttest_1samp(d, epsilon, alternative="less")``,
as the paper's code). The annotators' p-values are corrected by
Benjamini-Yekutieli at q = 0.05 (``scipy.stats.false_discovery_control``); the
winning rate omega is the share of annotators whose null is rejected, the test
passes when omega >= 0.5; rho, the average advantage probability, is the mean
over annotators of mean(W_f).

Preconditions, as the paper states them: at least 3 annotators, each with at
least 30 items (the t-test's normality); an annotator with fewer is left out and
named, and with fewer than 3 left the test is "not run" with the reason. An
unscored verdict of the judge loses its item to the annotator (never a pass,
never dropped). A d with no variance has no t statistic: its p-value is 0 when
mean(d) < epsilon and 1 otherwise (the limit of the test).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import false_discovery_control, ttest_1samp

from metaeval.audit.annotators import (
    Agreement,
    Panel,
    agreement,
    class_panel,
    pair_panel,
    point_panel,
)
from metaeval.audit.bars import AltSettings
from metaeval.audit.decided import Decided, Readings
from metaeval.audit.rater_agreement import Level
from metaeval.judges.base import Scale
from metaeval.loaders.judge_items import PairItem, PointItem
from metaeval.loaders.judge_labels import Label

MIN_ANNOTATORS = 3
MIN_ITEMS = 30
Q = 0.05
"""The false discovery rate of the Benjamini-Yekutieli correction."""
PASS_OMEGA = 0.5


@dataclass(frozen=True, slots=True)
class AnnotatorTest:
    """One left-out annotator: the judge against it, on ``items`` items."""

    annotator: str
    items: int
    judge_wins: int
    """Items where the judge scored at least as well as the annotator (sum of W_f)."""
    annotator_wins: int
    """Items where the annotator scored at least as well as the judge (sum of W_h)."""
    statistic: float | None
    """The t statistic; None when d has no variance."""
    p_value: float
    adjusted: float
    """The Benjamini-Yekutieli adjusted p-value."""
    rejected: bool
    """The null rejected: the judge wins against this annotator."""

    @property
    def rho(self) -> float:
        """The advantage probability: mean(W_f). Range [0, 1]."""
        return self.judge_wins / self.items if self.items else 0.0


@dataclass(frozen=True, slots=True)
class AltTest:
    """The test's outcome; ``reason`` non-empty when it was not run."""

    epsilon: float
    epsilon_from: str
    scoring: str
    tests: tuple[AnnotatorTest, ...] = ()
    left_out: tuple[tuple[str, int], ...] = ()
    """Annotators with fewer than ``MIN_ITEMS`` items, and how many they had."""
    reason: str = ""
    q: float = Q
    more: int | None = None
    """Not run for want of items or annotators: further labelled items after which it
    would likely run and decide (``more_for_alt``); None when nothing observed can
    tell (no item two annotators labelled)."""

    @property
    def ran(self) -> bool:
        return not self.reason

    @property
    def omega(self) -> float | None:
        """The winning rate: share of annotators the judge wins against."""
        return sum(t.rejected for t in self.tests) / len(self.tests) if self.ran else None

    @property
    def rho(self) -> float | None:
        """The average advantage probability over the annotators tested."""
        return sum(t.rho for t in self.tests) / len(self.tests) if self.ran else None

    @property
    def passed(self) -> bool | None:
        """omega >= 0.5; None when the test was not run."""
        omega = self.omega
        return None if omega is None else omega >= PASS_OMEGA


def accuracy(label: Label, others: Sequence[Label]) -> float:
    """The share of ``others`` equal to ``label``. Range [0, 1]."""
    return sum(label == o for o in others) / len(others)


def negative_rmse(label: Label, others: Sequence[Label]) -> float:
    """Minus the root mean squared distance to ``others``. Range (-inf, 0]."""
    return -math.sqrt(sum((float(label) - float(o)) ** 2 for o in others) / len(others))


def one_sided_p(d: Sequence[int], epsilon: float) -> tuple[float | None, float]:
    """The t statistic and p-value of H0: mean(d) >= epsilon against mean(d) < epsilon."""
    mean = sum(d) / len(d)
    if len(d) < 2 or all(x == d[0] for x in d):
        return None, 0.0 if mean < epsilon else 1.0
    result = ttest_1samp(list(d), epsilon, alternative="less")
    return float(result.statistic), float(result.pvalue)


def duels(panel: Panel) -> dict[str, list[tuple[int, int]]]:
    """Each annotator's (W_f, W_h) on every item it labelled that another annotator
    labelled too, in the items' order: the judge and the annotator each scored against
    the remaining annotators' labels."""
    score = negative_rmse if panel.level is Level.ORDINAL else accuracy
    multi = set(panel.multi())
    by_item: dict[str, list[tuple[str, Label]]] = {}
    for who, labels in panel.humans.items():
        for item, label in labels.items():
            by_item.setdefault(item, []).append((who, label))
    found: dict[str, list[tuple[int, int]]] = {}
    for name, labels in panel.humans.items():
        pairs = found.setdefault(name, [])
        for item in (i for i in labels if i in multi):
            others = [label for other, label in by_item[item] if other != name]
            human = score(labels[item], others)
            judged = panel.judge[item]
            llm = -math.inf if judged is None else score(judged, others)
            pairs.append((int(llm >= human), int(human >= llm)))
    return found


def alt_test(panel: Panel, epsilon: float, epsilon_from: str, *,
             min_items: int = MIN_ITEMS, min_annotators: int = MIN_ANNOTATORS,
             q: float = Q) -> AltTest:
    """The test on ``panel`` at ``epsilon`` (``epsilon_from`` says where it was set)."""
    scoring = "negative RMSE" if panel.level is Level.ORDINAL else "accuracy"
    multi = set(panel.multi())
    eligible = {name: [i for i in labels if i in multi] for name, labels in panel.humans.items()}
    left_out = tuple((n, len(i)) for n, i in eligible.items() if len(i) < min_items)
    kept = {n: i for n, i in eligible.items() if len(i) >= min_items}
    if len(kept) < min_annotators:
        return AltTest(epsilon, epsilon_from, scoring, left_out=left_out, reason=(
            f"{len(kept)} annotator(s) with >= {min_items} items that another annotator "
            f"labelled too; the test needs at least {min_annotators} (Calderon et al. 2025)"),
            q=q, more=more_for_alt(duels(panel), epsilon, q, min_items, min_annotators))
    rows = []
    wins = duels(panel)
    for name, items in kept.items():
        pairs = wins[name]
        judge_wins, annotator_wins = sum(f for f, _ in pairs), sum(h for _, h in pairs)
        statistic, p = one_sided_p([h - f for f, h in pairs], epsilon)
        rows.append((name, len(items), judge_wins, annotator_wins, statistic, p))
    adjusted = [float(a) for a in false_discovery_control([r[5] for r in rows], method="by")]
    tests = tuple(AnnotatorTest(n, k, fw, hw, t, p, a, a <= q)
                  for (n, k, fw, hw, t, p), a in zip(rows, adjusted, strict=True))
    return AltTest(epsilon, epsilon_from, scoring, tests, left_out, q=q)



@dataclass(frozen=True, slots=True)
class PanelReport:
    """One kind of annotated items (pairwise or pointwise): the human ceiling and the
    alternative annotator test."""

    kind: str
    """``pairwise``, ``pointwise`` or ``categorical``."""
    agreement: Agreement
    alt: AltTest


def panel_reports(pointwise: Sequence[PointItem], pairwise: Sequence[PairItem],
                  decided: Decided, readings: Readings, labels: Scale,
                  settings: AltSettings, classes: tuple[str, ...] = ()
                  ) -> tuple[PanelReport, ...]:
    """A report for each kind of item that carries several annotators' labels."""
    reports = []
    categorical, pairs = class_panel(pointwise, decided, classes), pair_panel(pairwise, decided)
    points = point_panel(pointwise, decided, readings, labels)
    panels: list[tuple[Panel | None, Sequence[PointItem] | Sequence[PairItem]]] = [
        (points, pointwise), (categorical, pointwise), (pairs, pairwise)]
    for panel, items in panels:
        if panel is None:
            continue
        split = sum(not _labelled(i) for i in items if i.id in panel.judge)
        reports.append(PanelReport(panel.kind, agreement(panel, split),
                                   alt_test(panel, settings.epsilon, settings.epsilon_from)))
    return tuple(reports)


def _labelled(item: PointItem | PairItem) -> bool:
    """Whether the item has a single label (its own, or its annotators' consensus)."""
    return item.consensus or (isinstance(item, PointItem) and item.label_class is not None)


SIMULATIONS = 200
DECIDED = 0.8
"""A simulated test decides at a size when at least this share of its runs agree."""
MOST_ITEMS = 300
"""The largest number of items per annotator the simulation tries."""


def more_for_alt(wins: dict[str, list[tuple[int, int]]], epsilon: float, q: float = Q,
                 min_items: int = MIN_ITEMS, min_annotators: int = MIN_ANNOTATORS,
                 seed: int = 0) -> int | None:
    """Further labelled items after which the test would likely run and decide, by
    simulation from the observed duels (``duels``): each of the ``min_annotators``
    annotators with most items (missing ones drawn from everyone's duels) gets m items
    resampled from its own duels, m from ``min_items`` up in steps of 10; the test is run
    ``SIMULATIONS`` times at each m, and the first m at which ``DECIDED`` of the runs
    agree (pass or fail) gives the count: what those annotators lack of m. None when no
    duel was observed, or none of the sizes up to ``MOST_ITEMS`` decides."""
    everyone = [p for pairs in wins.values() for p in pairs]
    if not everyone:
        return None
    names = sorted(wins, key=lambda n: -len(wins[n]))
    chosen = names[:max(min_annotators, sum(len(wins[n]) >= min_items for n in names))]
    pools = [np.array([h - f for f, h in (wins[n] or everyone)]) for n in chosen]
    pools += [np.array([h - f for f, h in everyone])] * (min_annotators - len(chosen))
    have = [len(wins[n]) for n in chosen] + [0] * (min_annotators - len(chosen))
    rng = np.random.default_rng(seed)
    for m in range(min_items, MOST_ITEMS + 1, 10):
        p_values = np.stack([_p_values(pool[rng.integers(0, len(pool), (SIMULATIONS, m))],
                                       epsilon) for pool in pools], axis=1)
        adjusted = false_discovery_control(p_values, axis=1, method="by")
        passed = np.mean((adjusted <= q).mean(axis=1) >= PASS_OMEGA)
        if passed >= DECIDED or passed <= 1 - DECIDED:
            return sum(max(0, m - n) for n in have)
    return None


def _p_values(d: np.ndarray, epsilon: float) -> np.ndarray:
    """``one_sided_p`` on every row of ``d`` at once."""
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        # rows with (nearly) no variance: their p-value is replaced by the limit below
        warnings.simplefilter("ignore", RuntimeWarning)
        result = ttest_1samp(d, epsilon, axis=1, alternative="less")
    p = np.asarray(result.pvalue, dtype=float)
    flat = np.all(d == d[:, :1], axis=1)  # no variance: the test's limit
    return np.where(flat, np.where(d.mean(axis=1) < epsilon, 0.0, 1.0), p)
