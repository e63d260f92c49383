"""Agreement between a grader (or judge) and people, case by case.

Every function here takes per-case outcomes, the unscored ones included, and
keeps them in every denominator: an unscored case is neither a true positive
nor a true negative, so it lowers TPR or TNR (positive = the human said pass).
Functions named ``scored_*`` leave unscored cases out and say so in their name.

Each metric states its range and returns a documented value with a reason for
its degenerate cases (no cases, one label only, nothing scored). This module
must never return ``nan`` and never count an unscored case as a pass. Cohen's
kappa is scikit-learn's ``cohen_kappa_score``; it is wrapped, not rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
from sklearn.metrics import cohen_kappa_score

from metaeval.contract import Outcome
from metaeval.errors import MetaevalError

CONFIDENCE = 0.95
RESAMPLES = 1000
SEED = 0
SCORE_SCALE = (1, 2, 3, 4, 5)
"""The human ordinal score: 1 (worst) to 5 (best)."""

# Unscored is a third category for kappa: it never matches a human label, so it
# counts as a disagreement instead of vanishing from the table.
_KAPPA_LABELS = [Outcome.PASS.value, Outcome.FAIL.value, Outcome.UNSCORED.value]

NO_CASES = "no cases"
NO_HUMAN_PASS = "no human-pass case"
NO_HUMAN_FAIL = "no human-fail case"
NO_GRADER_PASS = "the grader passed no case"
NOTHING_SCORED = "nothing scored: every case is unscored"
NO_SCORED_HUMAN_PASS = "no scored human-pass case"
NO_SCORED_HUMAN_FAIL = "no scored human-fail case"


class MetricInputError(MetaevalError, ValueError):
    """A metric was called with inputs it cannot measure (mismatched lengths, a bad label)."""


@dataclass(frozen=True, slots=True)
class Value:
    """One metric's value. ``reason`` is empty when the metric is defined; otherwise
    it says why ``value`` is the documented fallback (or, for kappa of a constant
    grader, why the value is exactly what it is)."""

    value: float
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Interval:
    """A two-sided interval at ``level``; ``reason`` says why it is the documented
    fallback (the metric's whole range) when it could not be estimated."""

    low: float
    high: float
    level: float = CONFIDENCE
    reason: str = ""

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high


@dataclass(frozen=True, slots=True)
class Confusion:
    """Counts of one grader against people; positive = the human said pass.

    ``unscored_pos`` and ``unscored_neg`` are unscored cases the human passed and
    failed: in no cell of the usual matrix, but in every denominator.
    """

    tp: int
    fn: int
    tn: int
    fp: int
    unscored_pos: int = 0
    unscored_neg: int = 0

    @property
    def n(self) -> int:
        return self.positives + self.negatives

    @property
    def positives(self) -> int:
        """Cases the human passed: TP + FN + unscored ones."""
        return self.tp + self.fn + self.unscored_pos

    @property
    def negatives(self) -> int:
        """Cases the human failed: TN + FP + unscored ones."""
        return self.tn + self.fp + self.unscored_neg

    @property
    def passed(self) -> int:
        """Cases the grader passed."""
        return self.tp + self.fp

    @property
    def failed(self) -> int:
        """Cases the grader failed."""
        return self.tn + self.fn

    @property
    def unscored(self) -> int:
        return self.unscored_pos + self.unscored_neg


def _check_human(human: Sequence[Outcome]) -> None:
    for i, label in enumerate(human):
        if label is Outcome.UNSCORED:
            raise MetricInputError(f"human[{i}]: got {label.value!r}; expected 'pass' or 'fail' "
                                   "(a person's label is never unscored)")


def _check_pair(human: Sequence[object], graded: Sequence[object]) -> None:
    if len(human) != len(graded):
        raise MetricInputError(f"got {len(human)} human labels and {len(graded)} graded "
                               "outcomes; expected one of each per case")


def confusion(human: Sequence[Outcome], graded: Sequence[Outcome]) -> Confusion:
    """Count each case into TP, FN, TN, FP, or unscored (split by the human label).

    ``human`` must be pass or fail; ``graded`` may be pass, fail or unscored.
    """
    _check_pair(human, graded)
    _check_human(human)
    counts = {(h, g): 0 for h in (Outcome.PASS, Outcome.FAIL) for g in Outcome}
    for h, g in zip(human, graded, strict=True):
        counts[h, g] += 1
    return Confusion(
        tp=counts[Outcome.PASS, Outcome.PASS], fn=counts[Outcome.PASS, Outcome.FAIL],
        tn=counts[Outcome.FAIL, Outcome.FAIL], fp=counts[Outcome.FAIL, Outcome.PASS],
        unscored_pos=counts[Outcome.PASS, Outcome.UNSCORED],
        unscored_neg=counts[Outcome.FAIL, Outcome.UNSCORED])


# --- rates ----------------------------------------------------------------------------


def tpr(c: Confusion) -> Value:
    """TP / every human-pass case (unscored ones included). Range [0, 1].

    No human-pass case: 0.0 with the reason "no human-pass case", so a bar can
    never be met by a meta-set that has nothing to measure.
    """
    return Value(c.tp / c.positives) if c.positives else Value(0.0, NO_HUMAN_PASS)


def tnr(c: Confusion) -> Value:
    """TN / every human-fail case (unscored ones included). Range [0, 1].

    No human-fail case: 0.0 with the reason "no human-fail case".
    """
    return Value(c.tn / c.negatives) if c.negatives else Value(0.0, NO_HUMAN_FAIL)


def precision(c: Confusion) -> Value:
    """TP / every case the grader passed. Range [0, 1].

    The denominator is the grader's pass claims; an unscored case claims
    nothing, so it cannot be a false pass (it already lowers TPR and TNR).
    The grader passed no case: 0.0 with the reason "the grader passed no case".
    """
    return Value(c.tp / c.passed) if c.passed else Value(0.0, NO_GRADER_PASS)


def balanced_accuracy(c: Confusion) -> Value:
    """(TPR + TNR) / 2, unscored cases in both denominators. Range [0, 1]; 0.5 is chance.

    One human label only: the rate of the class present, with a reason saying
    so (scikit-learn's ``balanced_accuracy_score`` does the same). No cases: 0.0.
    """
    if not c.n:
        return Value(0.0, NO_CASES)
    if not c.negatives:
        return Value(tpr(c).value, f"{NO_HUMAN_FAIL}: TPR alone")
    if not c.positives:
        return Value(tnr(c).value, f"{NO_HUMAN_PASS}: TNR alone")
    return Value((tpr(c).value + tnr(c).value) / 2)


def youden_j(c: Confusion) -> Value:
    """Youden's J = TPR + TNR - 1, unscored in both denominators. Range [-1, 1];
    0 means the verdict carries no information about the human label.

    One human label only or no cases: 0.0 with a reason (no signal can be shown).
    """
    if not c.positives or not c.negatives:
        return Value(0.0, NO_CASES if not c.n else
                     NO_HUMAN_PASS if not c.positives else NO_HUMAN_FAIL)
    return Value(tpr(c).value + tnr(c).value - 1)


def scored_tpr(c: Confusion) -> Value:
    """TP / (TP + FN): TPR over scored cases only. Range [0, 1]. Shown beside
    ``tpr``, never instead of it. No scored human-pass case: 0.0 with a reason."""
    scored = c.tp + c.fn
    return Value(c.tp / scored) if scored else Value(0.0, NO_SCORED_HUMAN_PASS)


def scored_tnr(c: Confusion) -> Value:
    """TN / (TN + FP): TNR over scored cases only. Range [0, 1]. Shown beside
    ``tnr``, never instead of it. No scored human-fail case: 0.0 with a reason."""
    scored = c.tn + c.fp
    return Value(c.tn / scored) if scored else Value(0.0, NO_SCORED_HUMAN_FAIL)


def wilson_interval(successes: int, n: int, level: float = CONFIDENCE) -> Interval:
    """Wilson score interval for a proportion ``successes / n``. Within [0, 1].

    Unlike the normal approximation it stays inside [0, 1] and is not empty
    at 0 or n successes. ``n == 0``: the whole range [0, 1], reason "no cases".
    """
    if n < 0 or not 0 <= successes <= n:
        raise MetricInputError(f"got successes={successes!r}, n={n!r}; "
                               "expected 0 <= successes <= n")
    if n == 0:
        return Interval(0.0, 1.0, level, NO_CASES)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / denominator
    # At 0 or n successes the bound is exactly 0 or 1 in exact arithmetic; float
    # dust (0.9999999999999999) would put the observed rate outside its interval.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(low, high, level)


# --- kappa ----------------------------------------------------------------------------


def kappa(human: Sequence[Outcome], graded: Sequence[Outcome]) -> Value:
    """Cohen's kappa (scikit-learn's ``cohen_kappa_score``) with unscored as a third
    category that never matches a human label. Range [-1, 1]; 0 is chance agreement.

    Degenerate cases, each 0.0 with a reason instead of scikit-learn's ``nan``
    or error: no cases; the human and the grader both used one and the same
    label (agreement beyond chance is undefined). A grader with one verdict on
    every case scores exactly 0.0 (it cannot agree beyond chance), with a reason.
    """
    _check_pair(human, graded)
    _check_human(human)
    if not human:
        return Value(0.0, NO_CASES)
    h = [o.value for o in human]
    g = [o.value for o in graded]
    if set(h) == set(g) and len(set(h)) == 1:
        return Value(0.0, f"one label only: every case is {h[0]!r} for both")
    if len(set(g)) == 1:
        reason = NOTHING_SCORED if g[0] == Outcome.UNSCORED.value else (
            f"constant grader: {g[0]!r} on every case")
        return Value(0.0, reason)
    if len(set(h)) == 1:
        # scikit-learn agrees (p_o == p_e); say it exactly rather than as float dust.
        return Value(0.0, f"one human label only: every case is {h[0]!r}")
    return Value(float(cohen_kappa_score(h, g, labels=_KAPPA_LABELS)))


Weights = Literal["linear", "quadratic"]


def scored_weighted_kappa(human: Sequence[int], graded: Sequence[int | None],
                          weights: Weights, scale: Sequence[int] = SCORE_SCALE) -> Value:
    """Weighted Cohen's kappa (scikit-learn, ``weights`` linear or quadratic)
    between the human ordinal score and the grader's, on ``scale``. Range [-1, 1].

    Over scored cases only, as its name says: an unscored case (``None``) has
    no place on an ordinal scale, so the caller must report the unscored count
    beside it. Degenerate cases, 0.0 with a reason: nothing scored; one and the
    same score on every case for both; either side constant (exactly chance).
    """
    _check_pair(human, graded)
    allowed = set(scale)
    for side, values in (("human", human), ("graded", graded)):
        for i, v in enumerate(values):
            if v is not None and v not in allowed:
                raise MetricInputError(f"{side}[{i}]: got {v!r}; expected one of "
                                       f"{sorted(allowed)} or None")
    pairs = [(h, g) for h, g in zip(human, graded, strict=True) if g is not None]
    if not pairs:
        return Value(0.0, NOTHING_SCORED if human else NO_CASES)
    hs = [h for h, _ in pairs]
    gs = [g for _, g in pairs]
    if len(set(hs)) == 1 or len(set(gs)) == 1:
        if set(hs) == set(gs):
            return Value(0.0, f"one label only: every scored case is {hs[0]} for both")
        side = "human" if len(set(hs)) == 1 else "grader"
        return Value(0.0, f"constant {side} score on every scored case")
    return Value(float(cohen_kappa_score(hs, gs, weights=weights, labels=list(scale))))


# --- bootstrap intervals --------------------------------------------------------------


PASS_FAIL_ONLY = (f"{NO_CASES}: the judge answered pass/fail, with no score to weigh against "
                  "the integer labels")


def weighted_kappa_or_pass_fail(human: list[int], judged: list[int | None],
                                weights: Weights, points: list[int], pass_fail: int) -> Value:
    """A judge's weighted kappa on integer labels (``scored_weighted_kappa``) over the
    scored items, ``pass_fail`` of which it answered pass/fail; when it gave no score at all
    because it answered pass/fail, it is not computed for that reason, never
    "nothing scored" beside a count of 0 unscored."""
    if pass_fail and all(g is None for g in judged):
        return Value(0.0, PASS_FAIL_ONLY)
    return scored_weighted_kappa(human, judged, weights, points)


def _percentiles(samples: Sequence[float], level: float) -> tuple[float, float]:
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(np.asarray(samples, dtype=float), [tail, 100 - tail])
    return float(low), float(high)


def table_kappa(table: Sequence[int] | np.ndarray) -> float:
    """``kappa``'s value for a table of counts of (human, graded) pairs, human
    pass then fail, graded pass, fail, unscored within each: the bootstrap's
    kappa, thousands of times a run, without scikit-learn's input checks (a
    millisecond a call). Same degenerate cases, same arithmetic as
    ``cohen_kappa_score`` (tests hold the two equal on every table)."""
    counts = np.zeros((3, 3))
    counts[:2] = np.asarray(table, dtype=float).reshape(2, 3)
    graded, human = counts.sum(axis=0), counts.sum(axis=1)
    if np.count_nonzero(graded) <= 1 or np.count_nonzero(human) <= 1:
        return 0.0  # no cases, a constant grader, or one human label: kappa's 0.0
    expected = np.outer(graded, human) / np.sum(graded)
    disagree = 1 - np.eye(3)
    return float(1 - np.sum(disagree * counts) / np.sum(disagree * expected))


def kappa_interval(human: Sequence[Outcome], graded: Sequence[Outcome], *, seed: int = SEED,
                   resamples: int = RESAMPLES, level: float = CONFIDENCE) -> Interval:
    """Percentile bootstrap interval for ``kappa``: resample cases with
    replacement ``resamples`` times from a generator seeded with ``seed``, so the
    same input gives the same interval. Within [-1, 1].

    Each resample's kappa is ``kappa`` itself, so a degenerate resample counts
    as its documented 0.0. No cases: the whole range [-1, 1], reason "no cases".
    """
    _check_pair(human, graded)
    _check_human(human)
    if resamples < 1:
        raise MetricInputError(f"resamples: got {resamples!r}; expected an integer >= 1")
    if not human:
        return Interval(-1.0, 1.0, level, NO_CASES)
    rng = np.random.default_rng(seed)
    n = len(human)
    # kappa depends only on the table of (human, graded) pairs: each resample is
    # counted into its table, and each distinct table's kappa computed once.
    cells = [(h, g) for h in (Outcome.PASS, Outcome.FAIL) for g in Outcome]
    codes = np.array([cells.index(pair) for pair in zip(human, graded, strict=True)])
    rows = rng.integers(0, n, size=(resamples, n))
    flat = (codes[rows] + len(cells) * np.arange(resamples)[:, None]).ravel()
    tables = np.bincount(flat, minlength=len(cells) * resamples).reshape(resamples, len(cells))
    distinct, which = np.unique(tables, axis=0, return_inverse=True)
    values = np.array([table_kappa(table) for table in distinct])
    samples = list(values[np.ravel(which)])
    low, high = _percentiles(samples, level)
    return Interval(low, high, level)


def youden_interval(human: Sequence[Outcome], graded: Sequence[Outcome], *, seed: int = SEED,
                    resamples: int = RESAMPLES, level: float = CONFIDENCE) -> Interval:
    """Percentile bootstrap interval for Youden's J (TPR + TNR - 1), unscored
    cases in both denominators. Within [-1, 1]; an interval containing 0 means
    the grader shows no signal on this meta-set.

    Resampling is stratified (human-pass and human-fail cases are resampled
    apart), so every resample has both classes and J is always defined. Seeded
    like ``kappa_interval``. One human label only or no cases: the whole range
    [-1, 1] with a reason (it contains 0: no signal can be shown).
    """
    c = confusion(human, graded)
    if resamples < 1:
        raise MetricInputError(f"resamples: got {resamples!r}; expected an integer >= 1")
    degenerate = youden_j(c)
    if degenerate.reason:
        return Interval(-1.0, 1.0, level, degenerate.reason)
    rng = np.random.default_rng(seed)
    pos = np.array([g is Outcome.PASS for h, g in zip(human, graded, strict=True)
                    if h is Outcome.PASS])
    neg = np.array([g is Outcome.FAIL for h, g in zip(human, graded, strict=True)
                    if h is Outcome.FAIL])
    tprs = pos[rng.integers(0, len(pos), size=(resamples, len(pos)))].mean(axis=1)
    tnrs = neg[rng.integers(0, len(neg), size=(resamples, len(neg)))].mean(axis=1)
    low, high = _percentiles(list(tprs + tnrs - 1), level)
    return Interval(low, high, level)


# --- nominal labels (pairwise judges) ---------------------------------------------------

UNSCORED_LABEL = "unscored"


def nominal_kappa(human: Sequence[str], judged: Sequence[str | None]) -> Value:
    """Cohen's kappa (scikit-learn) between nominal labels, e.g. a pairwise judge's
    ``a``/``b``/``tie`` against people's. An unscored verdict (``None``) is its own
    category that never matches a human label. Range [-1, 1]; 0 is chance.

    Degenerate cases, 0.0 with a reason instead of ``nan``: no cases; one and the
    same label on both sides; either side constant (it cannot agree beyond chance).
    """
    _check_pair(human, judged)
    if not human:
        return Value(0.0, NO_CASES)
    g = [UNSCORED_LABEL if j is None else j for j in judged]
    h = list(human)
    if len(set(g)) == 1 or len(set(h)) == 1:
        if set(h) == set(g):
            return Value(0.0, f"one label only: every case is {h[0]!r} for both")
        side, label = ("judge", g[0]) if len(set(g)) == 1 else ("human", h[0])
        return Value(0.0, NOTHING_SCORED if label == UNSCORED_LABEL else
                     f"constant {side}: {label!r} on every case")
    labels = sorted(set(h) | set(g))
    return Value(float(cohen_kappa_score(h, g, labels=labels)))


def nominal_kappa_interval(human: Sequence[str], judged: Sequence[str | None], *,
                           seed: int = SEED, resamples: int = RESAMPLES,
                           level: float = CONFIDENCE) -> Interval:
    """Percentile bootstrap interval for ``nominal_kappa``, seeded as ``kappa_interval``:
    each resample counted into its table of (human, judged) labels and Cohen's kappa
    computed from the table (the arithmetic of scikit-learn's, a test holds them equal);
    a resample where kappa is undefined (one label on both sides) counts as its 0.0.
    Within [-1, 1]. No cases: the whole range, reason "no cases"."""
    _check_pair(human, judged)
    if not human:
        return Interval(-1.0, 1.0, level, NO_CASES)
    g = [UNSCORED_LABEL if j is None else j for j in judged]
    labels = sorted(set(human) | set(g))
    k = len(labels)
    codes = np.array([labels.index(h) * k + labels.index(j) for h, j in zip(human, g,
                                                                            strict=True)])
    rng = np.random.default_rng(seed)
    n = len(codes)
    if n * resamples <= _CHUNK_CELLS * 2:
        rows = rng.integers(0, n, size=(resamples, n))
        flat = (codes[rows] + k * k * np.arange(resamples)[:, None]).ravel()
        tables = np.bincount(flat, minlength=k * k * resamples).reshape(resamples, k, k)
    else:
        # Resampling n cases is drawing the table's n cells from its observed shares: the
        # same distribution, without GBs of indices at 100,000 pairs.
        shares = np.bincount(codes, minlength=k * k) / n
        tables = rng.multinomial(n, shares, size=resamples).reshape(resamples, k, k)
    agree = np.trace(tables, axis1=1, axis2=2) / n
    chance = np.einsum("ri,ri->r", tables.sum(axis=2), tables.sum(axis=1)) / (n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(chance < 1, (agree - chance) / (1 - chance), 0.0)
    low, high = _percentiles(list(values), level)
    return Interval(low, high, level)


# --- cluster bootstrap ------------------------------------------------------------------

MIN_CLUSTERS = 10
"""Fewer clusters than this and a cluster bootstrap says little: ``auto`` does not use it."""
_CELLS = [(h, g) for h in (Outcome.PASS, Outcome.FAIL) for g in Outcome]
# Cells of a resample's table at once: bounds the weights matrix at 100,000 clusters.
_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True, slots=True)
class ClusterIntervals:
    """Percentile intervals from resampling clusters (tasks), not cases: trials of one
    task rise and fall together, so they are not as many independent cases."""

    clusters: int
    tpr: Interval
    tnr: Interval
    kappa: Interval
    youden: Interval


def _defined(values: np.ndarray, keep: np.ndarray, level: float, low: float,
             reason: str) -> Interval:
    """The percentile interval of ``values`` where ``keep``; the whole range with
    ``reason`` when no resample defines the metric."""
    kept = values[keep]
    if not kept.size:
        return Interval(low, 1.0, level, reason)
    a, b = _percentiles(list(kept), level)
    return Interval(a, b, level)


def cluster_intervals(human: Sequence[Outcome], graded: Sequence[Outcome],
                      clusters: Sequence[str], *, seed: int = SEED,
                      resamples: int = RESAMPLES, level: float = CONFIDENCE
                      ) -> ClusterIntervals:
    """Cluster bootstrap: resample whole clusters (all cases of a task at once) with
    replacement, ``resamples`` times from a generator seeded with ``seed``, and take
    percentile intervals of TPR, TNR, kappa (``table_kappa``: the same arithmetic as
    ``kappa``) and Youden's J. Within their ranges.

    A resample that has no human-pass case leaves TPR (and J) undefined, and one
    with no human-fail case TNR (and J): those resamples are left out of that
    metric's interval, not counted as a documented 0.0; none left is the metric's
    whole range with a reason. No cases: whole ranges, reason "no cases".
    """
    _check_pair(human, graded)
    _check_pair(human, clusters)
    _check_human(human)
    if resamples < 1:
        raise MetricInputError(f"resamples: got {resamples!r}; expected an integer >= 1")
    names = sorted(set(clusters))
    if not human:
        whole = Interval(0.0, 1.0, level, NO_CASES)
        signed = Interval(-1.0, 1.0, level, NO_CASES)
        return ClusterIntervals(0, whole, whole, signed, signed)
    index = {name: i for i, name in enumerate(names)}
    k = len(names)
    counts = np.zeros((k, len(_CELLS)), dtype=np.int64)
    for h, g, c in zip(human, graded, clusters, strict=True):
        counts[index[c], _CELLS.index((h, g))] += 1
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // k)
    tables = []
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        picks = rng.integers(0, k, size=(size, k))
        weights = np.zeros((size, k), dtype=np.int64)
        np.add.at(weights, (np.repeat(np.arange(size), k), picks.ravel()), 1)
        tables.append(weights @ counts)
    table = np.concatenate(tables)
    positives = table[:, 0:3].sum(axis=1)
    negatives = table[:, 3:6].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tprs = np.where(positives > 0, table[:, 0] / np.maximum(positives, 1), 0.0)
        tnrs = np.where(negatives > 0, table[:, 4] / np.maximum(negatives, 1), 0.0)
    distinct, which = np.unique(table, axis=0, return_inverse=True)
    kappas = np.array([table_kappa(t) for t in distinct])[np.ravel(which)]
    both = (positives > 0) & (negatives > 0)
    return ClusterIntervals(
        k,
        _defined(tprs, positives > 0, level, 0.0, NO_HUMAN_PASS),
        _defined(tnrs, negatives > 0, level, 0.0, NO_HUMAN_FAIL),
        _defined(kappas, np.ones(len(kappas), dtype=bool), level, -1.0, NO_CASES),
        _defined(tprs + tnrs - 1, both, level, -1.0, "no resample holds both human labels"))
