from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest

from metaeval.audit.stats import binom_upper_tail, mcnemar_exact, sign_test


@pytest.mark.parametrize(("k", "n", "p", "expected"), [
    (3, 3, 0.5, 0.125),          # 1/8
    (3, 3, 0.1, 0.001),          # 0.1^3
    (1, 3, 0.1, 0.271),          # 1 - 0.9^3
    (2, 4, 0.5, 11 / 16),        # (6 + 4 + 1) / 16
    (0, 5, 0.3, 1.0),
    (6, 5, 0.3, 0.0),
    (12, 12, 0.1, 1e-12),
])
def test_binomial_tail_hand_checked(k: int, n: int, p: float, expected: float) -> None:
    assert binom_upper_tail(k, n, p) == pytest.approx(expected, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(("up", "down", "expected"), [
    (10, 0, 2 / 1024),           # all ten the same way
    (0, 10, 2 / 1024),           # symmetric
    (5, 5, 1.0),                 # no direction: capped at 1
    (8, 2, 2 * 56 / 1024),       # 2 * (45 + 10 + 1) / 1024
    (0, 0, 1.0),                 # nothing to test is never a finding
    (3, 0, 0.25),                # three of three cannot reach 0.05
])
def test_sign_test_hand_checked(up: int, down: int, expected: float) -> None:
    assert sign_test(up, down) == pytest.approx(expected)


def test_mcnemar_is_the_sign_test_on_discordant_pairs() -> None:
    assert mcnemar_exact(9, 1) == pytest.approx(2 * 11 / 1024)
    assert mcnemar_exact(1, 1) == 1.0
    with pytest.raises(ValueError):
        binom_upper_tail(1, 3, 1.5)


def _log_space_tail(k: int, n: int, p: float) -> float:
    """An independent P(X >= k): every term in log space (lgamma), summed from the
    largest down; no float of comb(n, i) is ever formed."""
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
            + i * math.log(p) + (n - i) * math.log1p(-p) for i in range(k, n + 1)]
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(x - top) for x in logs))


@pytest.mark.parametrize(("k", "n", "p"), [
    (122, 1030, 0.1),       # 1,030: where math.comb(n, i) stopped fitting a float
    (103, 1030, 0.1),       # near the mean
    (159, 1392, 0.1),       # the public pairwise log's size
    (10_500, 100_000, 0.1),  # public sets reach 100k pairs
    (50_400, 100_000, 0.5),
])
def test_binomial_tail_holds_at_any_n(k: int, n: int, p: float) -> None:
    got = binom_upper_tail(k, n, p)
    assert got == pytest.approx(_log_space_tail(k, n, p), rel=1e-6, abs=1e-300)
    assert got == pytest.approx(binomtest(k, n, p, alternative="greater").pvalue, rel=1e-9)
    assert 0.0 <= got <= 1.0


def test_sign_test_at_a_hundred_thousand_pairs_matches_scipy() -> None:
    assert sign_test(50_400, 49_600) == pytest.approx(binomtest(50_400, 100_000).pvalue)
    # and one that must differ: the same total split evenly is no evidence at all
    assert sign_test(50_000, 50_000) == 1.0
