from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from metaeval.audit.metrics import (
    NO_CASES,
    NO_HUMAN_FAIL,
    NO_HUMAN_PASS,
    NOTHING_SCORED,
    Confusion,
    MetricInputError,
    balanced_accuracy,
    confusion,
    kappa,
    kappa_interval,
    precision,
    scored_tnr,
    scored_tpr,
    scored_weighted_kappa,
    table_kappa,
    tnr,
    tpr,
    wilson_interval,
    youden_interval,
    youden_j,
)
from metaeval.contract import Outcome

P, F, U = Outcome.PASS, Outcome.FAIL, Outcome.UNSCORED


def outcomes(text: str) -> list[Outcome]:
    return [{"p": P, "f": F, "u": U}[c] for c in text]


# human: 4 pass, 4 fail. grader: on the passes p p f u, on the fails f f p u.
HUMAN = outcomes("ppppffff")
GRADED = outcomes("ppfuffpu")


def test_confusion_counts_unscored_apart_from_every_cell() -> None:
    c = confusion(HUMAN, GRADED)
    assert (c.tp, c.fn, c.tn, c.fp, c.unscored_pos, c.unscored_neg) == (2, 1, 2, 1, 1, 1)
    assert (c.n, c.positives, c.negatives, c.passed, c.failed, c.unscored) == (8, 4, 4, 3, 3, 2)


def test_unscored_stays_in_the_denominator_and_scored_rates_differ() -> None:
    c = confusion(HUMAN, GRADED)
    assert tpr(c).value == 2 / 4
    assert tnr(c).value == 2 / 4
    assert scored_tpr(c).value == 2 / 3
    assert scored_tnr(c).value == 2 / 3
    assert precision(c).value == 2 / 3
    assert balanced_accuracy(c).value == 0.5
    assert youden_j(c).value == 0.0
    # an unscored case is not a pass: turning it into one must move TPR
    lifted = confusion(HUMAN, outcomes("ppfpffpu"))
    assert tpr(lifted).value == 3 / 4


def test_rates_of_a_meta_set_with_one_label_only_are_documented_not_nan() -> None:
    only_pass = confusion(outcomes("ppp"), outcomes("pfp"))
    assert tnr(only_pass).reason == NO_HUMAN_FAIL and tnr(only_pass).value == 0.0
    assert balanced_accuracy(only_pass).value == 2 / 3
    assert NO_HUMAN_FAIL in balanced_accuracy(only_pass).reason
    assert youden_j(only_pass).reason == NO_HUMAN_FAIL
    only_fail = confusion(outcomes("ff"), outcomes("fp"))
    assert tpr(only_fail).reason == NO_HUMAN_PASS
    empty = Confusion(0, 0, 0, 0)
    for metric in (tpr, tnr, precision, balanced_accuracy, youden_j, scored_tpr, scored_tnr):
        value = metric(empty)
        assert value.value == 0.0 and value.reason
    assert balanced_accuracy(empty).reason == NO_CASES
    assert precision(confusion(outcomes("pf"), outcomes("ff"))).reason
    assert not tpr(confusion(HUMAN, GRADED)).reason


def test_confusion_rejects_an_unscored_human_label_and_mismatched_lengths() -> None:
    with pytest.raises(MetricInputError, match=r"human\[1\]: got 'unscored'"):
        confusion(outcomes("pu"), outcomes("pp"))
    with pytest.raises(MetricInputError, match="2 human labels and 1 graded"):
        kappa(outcomes("pf"), outcomes("p"))


def test_wilson_interval_matches_published_values() -> None:
    # Newcombe (1998), table I: 81/263 -> 0.2553 to 0.3662; 15/148 -> 0.0624 to 0.1605.
    low, high = wilson_interval(81, 263).low, wilson_interval(81, 263).high
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    i = wilson_interval(15, 148)
    assert (round(i.low, 4), round(i.high, 4)) == (0.0624, 0.1605)
    # 0/10 is not the empty interval [0, 0], and 10/10 is not [1, 1]
    assert wilson_interval(0, 10).high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(10, 10).low == pytest.approx(0.7225, abs=1e-4)
    none = wilson_interval(0, 0)
    assert (none.low, none.high, none.reason) == (0.0, 1.0, NO_CASES)
    # a wider level gives a wider interval
    assert wilson_interval(5, 10, 0.99).low < wilson_interval(5, 10).low
    with pytest.raises(MetricInputError):
        wilson_interval(3, 2)


def test_kappa_equals_scikit_learn_on_the_same_vectors() -> None:
    human = outcomes("ppppffffpf")
    graded = outcomes("ppfuffpupp")
    ours = kappa(human, graded)
    theirs = cohen_kappa_score([o.value for o in human], [o.value for o in graded])
    assert ours.value == pytest.approx(theirs) and not ours.reason
    # by hand: p_o = 5/10; human .5 pass .5 fail; graded .5 pass .3 fail .2 unscored;
    # p_e = .5*.5 + .5*.3 = .4; kappa = (.5 - .4) / (1 - .4) = 1/6
    assert ours.value == pytest.approx(1 / 6)
    # unscored is a disagreement, not a dropped case: scoring it right raises kappa
    assert kappa(human, outcomes("ppfpffpfpp")).value > ours.value


def test_kappa_of_a_constant_grader_is_zero_with_a_reason() -> None:
    human = outcomes("ppff")
    always = kappa(human, outcomes("pppp"))
    assert always.value == 0.0 and "constant grader" in always.reason
    assert cohen_kappa_score(["pass", "pass", "fail", "fail"], ["pass"] * 4) == pytest.approx(0)
    assert kappa(human, outcomes("uuuu")).reason == NOTHING_SCORED
    one = kappa(outcomes("pp"), outcomes("pp"))
    assert one.value == 0.0 and "one label only" in one.reason
    assert not math.isnan(one.value)
    assert kappa([], []).reason == NO_CASES
    assert kappa(outcomes("ppff"), outcomes("ppff")).value == 1.0
    assert kappa(outcomes("ppff"), outcomes("ffpp")).value == -1.0


def test_weighted_kappa_linear_and_quadratic_match_scikit_learn_and_differ() -> None:
    human = [1, 2, 3, 4, 5, 5, 2]
    graded: list[int | None] = [1, 3, 3, 5, 3, None, 1]
    linear = scored_weighted_kappa(human, graded, "linear")
    quadratic = scored_weighted_kappa(human, graded, "quadratic")
    hs, gs = [1, 2, 3, 4, 5, 2], [1, 3, 3, 5, 3, 1]
    assert linear.value == pytest.approx(
        cohen_kappa_score(hs, gs, weights="linear", labels=[1, 2, 3, 4, 5]))
    assert quadratic.value == pytest.approx(
        cohen_kappa_score(hs, gs, weights="quadratic", labels=[1, 2, 3, 4, 5]))
    assert linear.value != pytest.approx(quadratic.value)
    assert scored_weighted_kappa([1, 2], [None, None], "linear").reason == NOTHING_SCORED
    constant = scored_weighted_kappa([1, 2, 3], [4, 4, 4], "quadratic")
    assert constant.value == 0.0 and "constant grader" in constant.reason
    with pytest.raises(MetricInputError, match=r"graded\[0\]: got 7"):
        scored_weighted_kappa([1], [7], "linear")


def test_kappa_interval_is_seeded_and_brackets_the_estimate() -> None:
    human = outcomes("pppppppffffffff" * 2)
    graded = outcomes("ppppppfffffffpu" * 2)
    first = kappa_interval(human, graded, resamples=200)
    again = kappa_interval(human, graded, resamples=200)
    other = kappa_interval(human, graded, resamples=200, seed=1)
    assert first == again
    assert first != other
    assert first.low <= kappa(human, graded).value <= first.high
    assert -1.0 <= first.low < first.high <= 1.0
    assert kappa_interval([], []).reason == NO_CASES


CELLS = [(h, g) for h in (P, F) for g in (P, F, U)]


def pairs_of(table: tuple[int, ...]) -> tuple[list[Outcome], list[Outcome]]:
    pairs = [cell for cell, k in zip(CELLS, table, strict=True) for _ in range(k)]
    return [h for h, _ in pairs], [g for _, g in pairs]


@pytest.mark.parametrize("counts", [(0, 1, 3), (2, 5)])
def test_the_bootstraps_table_kappa_is_scikit_learns_on_every_table(
        counts: tuple[int, ...]) -> None:
    # Every table with these counts per cell: degenerate ones (no cases, a constant
    # grader, one human label) included, each against scikit-learn through kappa.
    for table in itertools.product(counts, repeat=6):
        human, graded = pairs_of(table)
        assert table_kappa(table) == kappa(human, graded).value, table


def test_kappa_interval_is_the_percentiles_of_scikit_learns_kappa_on_each_resample() -> None:
    human = outcomes("pppppppffffffffpf" * 2)
    graded = outcomes("ppppppfffffffpuuf" * 2)
    # The same draws, each resample's kappa by scikit-learn (through ``kappa``).
    rows = np.random.default_rng(7).integers(0, len(human), size=(300, len(human)))
    samples = [kappa([human[i] for i in row], [graded[i] for i in row]).value for row in rows]
    low, high = np.percentile(samples, [2.5, 97.5])
    interval = kappa_interval(human, graded, seed=7, resamples=300)
    assert (interval.low, interval.high) == (float(low), float(high))


def test_youden_interval_separates_signal_from_none() -> None:
    human = outcomes("p" * 20 + "f" * 20)
    good = youden_interval(human, outcomes("p" * 19 + "f" + "f" * 18 + "pp"), resamples=300)
    assert good.low > 0
    coin = youden_interval(human, outcomes("pf" * 20), resamples=300)
    assert coin.contains(0.0)
    degenerate = youden_interval(outcomes("pp"), outcomes("pf"))
    assert (degenerate.low, degenerate.high) == (-1.0, 1.0) and degenerate.reason
    assert degenerate.contains(0.0)
