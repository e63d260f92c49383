"""An independent alternative annotator test, written from the paper's definitions
for the tests to check ``metaeval.audit.alt_test`` against: the t statistic by hand,
its p-value from Student's t distribution, Benjamini-Yekutieli's thresholds by hand."""

from __future__ import annotations

import math

from scipy.stats import t as student_t

from metaeval.loaders.judge_labels import Label


def alt_by_hand(humans: dict[str, dict[str, Label]], judge: dict[str, Label | None],
                epsilon: float, rmse: bool = False, tested: list[str] | None = None
                ) -> tuple[list[float], list[bool], float]:
    """An independent alt-test: per annotator p-values, BY rejections, rho. ``tested``:
    the annotators tested (default: all); every annotator's labels count as the others'."""
    def score(label: Label, others: list[Label]) -> float:
        if rmse:
            return -math.sqrt(sum((float(label) - float(o)) ** 2 for o in others) / len(others))
        return sum(label == o for o in others) / len(others)

    ps, rhos = [], []
    for name, labels in humans.items():
        if tested is not None and name not in tested:
            continue
        d, wins = [], 0
        for item, mine in labels.items():
            others = [h[item] for n, h in humans.items() if n != name and item in h]
            if not others:
                continue
            got = judge[item]
            s_f = -math.inf if got is None else score(got, others)
            s_h = score(mine, others)
            d.append(int(s_h >= s_f) - int(s_f >= s_h))
            wins += int(s_f >= s_h)
        n = len(d)
        mean = sum(d) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
        ps.append(float(student_t.cdf((mean - epsilon) / (sd / math.sqrt(n)), n - 1)))
        rhos.append(wins / n)
    m = len(ps)
    c = sum(1 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda i: ps[i])
    last = max((r for r, i in enumerate(order, 1) if ps[i] <= r / m * 0.05 / c), default=0)
    rejected = [order.index(i) < last for i in range(m)]
    return ps, rejected, sum(rhos) / m


def nominal_alpha(raters: list[dict[str, str]]) -> float:
    """Krippendorff's alpha (nominal) from its coincidence matrix."""
    items = {i for r in raters for i in r}
    pairs: dict[tuple[str, str], float] = {}
    for item in items:
        values = [r[item] for r in raters if item in r]
        m = len(values)
        if m < 2:
            continue
        for x in range(m):
            for y in range(m):
                if x != y:
                    key = (values[x], values[y])
                    pairs[key] = pairs.get(key, 0.0) + 1 / (m - 1)
    n = sum(pairs.values())
    totals: dict[str, float] = {}
    for (c, _), w in pairs.items():
        totals[c] = totals.get(c, 0.0) + w
    observed = sum(w for (c, k), w in pairs.items() if c != k) / n
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k) / (
        n * (n - 1))
    return 1 - observed / expected
