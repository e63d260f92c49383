"""The kill rule's statistics: the one-sided exact McNemar test, checked against
scipy's binomial test, and a test that must say no."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from metaeval.audit.judge_mutants.outcome import mcnemar_worse


@pytest.mark.parametrize(("worse", "better"), [(5, 0), (6, 1), (10, 10), (3, 9), (40, 22),
                                               (0, 4), (700, 640)])
def test_mcnemar_matches_scipys_one_sided_binomial_test(worse: int, better: int) -> None:
    test = mcnemar_worse(worse, better, 0.05)
    expected = binomtest(worse, worse + better, 0.5, alternative="greater").pvalue
    assert test.p_value == pytest.approx(expected, rel=1e-9)


def test_five_discordant_items_all_one_way_are_significant_and_four_are_not() -> None:
    assert mcnemar_worse(5, 0, 0.05).significant  # 1/32 < 0.05
    assert not mcnemar_worse(4, 0, 0.05).significant  # 1/16 > 0.05: must say no
    assert not mcnemar_worse(0, 9, 0.05).significant  # better, never worse
    assert mcnemar_worse(0, 0, 0.05).p_value == 1.0  # nothing discordant: no evidence
