"""The alternative annotator test and the human ceiling on hand-worked panels: each
figure is computed here by hand (t statistic, Benjamini-Yekutieli thresholds,
Krippendorff's coincidence matrix), never by the code under test."""

from __future__ import annotations

import pytest

from metaeval.audit.alt_test import alt_test, negative_rmse, one_sided_p
from metaeval.audit.annotators import Panel, agreement, alpha
from metaeval.audit.rater_agreement import Level
from metaeval.judges.base import Scale
from metaeval.loaders.judge_labels import Label
from tests.audit.hand_alt import alt_by_hand


def _panel(humans: dict[str, dict[str, Label]], judge: dict[str, Label | None],
           level: Level = Level.NOMINAL) -> Panel:
    return Panel("pairwise", level, humans, judge, Scale(1, 5, 4))


def test_alpha_on_a_hand_worked_nominal_case() -> None:
    # Units (a,a) (a,b) (b,b) (b,b): o_aa 2, o_ab = o_ba 1, o_bb 4; n_a 3, n_b 5, n 8.
    # D_o = 2/8; D_e = 2*3*5 / (8*7); alpha = 1 - D_o/D_e = 1 - 112/240 = 8/15.
    panel = _panel({"x": {"1": "a", "2": "a", "3": "b", "4": "b"},
                    "y": {"1": "a", "2": "b", "3": "b", "4": "b"}},
                   {"1": "a", "2": "a", "3": "a", "4": "a"})
    assert alpha(panel).value == pytest.approx(8 / 15)
    # The judge as a third rater changes it: a figure of its own, not the same one.
    assert alpha(panel, with_judge=True).value != pytest.approx(8 / 15)


def test_alpha_is_not_computed_without_disagreement_or_pairs() -> None:
    same = _panel({"x": {"1": "a", "2": "a"}, "y": {"1": "a", "2": "a"}}, {"1": "a", "2": "a"})
    assert alpha(same).reason.startswith("one label only")
    alone = _panel({"x": {"1": "a"}, "y": {"2": "b"}}, {"1": "a", "2": "b"})
    assert alpha(alone).reason.startswith("no cases")


def test_the_human_ceiling_sets_the_judge_beside_the_annotators() -> None:
    humans: dict[str, dict[str, Label]] = {
        "x": {"1": "a", "2": "b", "3": "a", "4": "b"},
        "y": {"1": "a", "2": "b", "3": "a", "4": "a"}}
    judge: dict[str, Label | None] = {"1": "b", "2": "a", "3": "a", "4": "b"}
    a = agreement(_panel(humans, judge))
    assert a.agreement == pytest.approx(3 / 4)  # x and y agree on 3 of 4
    # judge vs x: 2 of 4 (items 3, 4); judge vs y: 1 of 4 (item 3): mean 3/8.
    assert a.judge_agreement == pytest.approx(3 / 8)
    assert (a.multi, a.pairs, a.judge_pairs) == (4, 1, 2)
    # Cohen's kappa, x vs y: p_o 3/4, p_e = (2/4*3/4) + (2/4*1/4) = 1/2 -> 0.5.
    assert a.kappa.value == pytest.approx(0.5)


def _synthetic(n: int, judge_errors: int, noise: tuple[int, int, int]
               ) -> tuple[dict[str, dict[str, Label]], dict[str, Label | None]]:
    """Three annotators on ``n`` items whose truth cycles a, b, tie; annotator k is wrong
    on every noise[k]-th item; the judge is wrong on the first ``judge_errors`` items."""
    truth = [("a", "b", "tie")[i % 3] for i in range(n)]
    flip = {"a": "b", "b": "tie", "tie": "a"}
    humans: dict[str, dict[str, Label]] = {
        f"h{k}": {str(i): flip[t] if i % step == k else t for i, t in enumerate(truth)}
        for k, step in enumerate(noise)}
    judge: dict[str, Label | None] = {
        str(i): flip[t] if i < judge_errors else t for i, t in enumerate(truth)}
    return humans, judge


def test_a_judge_that_matches_the_truth_passes_and_its_figures_match_a_hand_count() -> None:
    humans, judge = _synthetic(40, 0, (4, 5, 6))
    result = alt_test(_panel(humans, judge), 0.1, "test")
    ps, rejected, rho = alt_by_hand(humans, judge, 0.1)
    assert [t.p_value for t in result.tests] == pytest.approx(ps)
    assert [t.rejected for t in result.tests] == rejected
    assert result.rho == pytest.approx(rho)
    assert result.passed is True and result.omega == 1.0


def test_a_judge_wrong_on_half_the_items_fails() -> None:
    humans, judge = _synthetic(40, 20, (4, 5, 6))
    result = alt_test(_panel(humans, judge), 0.1, "test")
    ps, rejected, rho = alt_by_hand(humans, judge, 0.1)
    assert [t.p_value for t in result.tests] == pytest.approx(ps)
    assert [t.rejected for t in result.tests] == rejected == [False, False, False]
    assert result.passed is False and result.omega == 0.0
    assert result.rho == pytest.approx(rho)


def test_a_larger_epsilon_lets_the_same_judge_pass() -> None:
    humans, judge = _synthetic(60, 9, (4, 5, 6))
    assert alt_test(_panel(humans, judge), 0.05, "test").passed is False
    assert alt_test(_panel(humans, judge), 0.3, "test").passed is True


def test_negative_rmse_on_ordinal_labels_matches_a_hand_count() -> None:
    assert negative_rmse(3, [1, 5]) == pytest.approx(-2.0)
    humans: dict[str, dict[str, Label]] = {
        f"h{k}": {str(i): 1 + (i * (k + 1)) % 5 for i in range(35)} for k in range(3)}
    judge: dict[str, Label | None] = {str(i): 1 + (i * 2 + 1) % 5 for i in range(35)}
    result = alt_test(_panel(humans, judge, Level.ORDINAL), 0.15, "test")
    ps, rejected, rho = alt_by_hand(humans, judge, 0.15, rmse=True)
    assert result.scoring == "negative RMSE"
    assert [t.p_value for t in result.tests] == pytest.approx(ps)
    assert [t.rejected for t in result.tests] == rejected
    assert result.rho == pytest.approx(rho)


def test_an_unscored_verdict_loses_its_item_to_the_annotator() -> None:
    humans, judge = _synthetic(40, 0, (4, 5, 6))
    unscored = {**judge, **{str(i): None for i in range(10)}}
    scored, missing = (alt_test(_panel(humans, j), 0.1, "t") for j in (judge, unscored))
    assert [t.judge_wins for t in missing.tests] == [t.judge_wins - 10 for t in scored.tests]
    assert alt_by_hand(humans, unscored, 0.1)[2] == pytest.approx(missing.rho)


def test_preconditions_say_why_the_test_did_not_run() -> None:
    humans, judge = _synthetic(40, 0, (4, 5, 6))
    two = {k: v for k, v in humans.items() if k != "h2"}
    result = alt_test(_panel(two, judge), 0.1, "t")
    assert not result.ran and result.passed is None and result.omega is None
    assert "2 annotator(s) with >= 30 items" in result.reason
    short: dict[str, dict[str, Label]] = {**humans, "h3": {str(i): "a" for i in range(12)}}
    kept = alt_test(_panel(short, judge), 0.1, "t")
    assert kept.ran and kept.left_out == (("h3", 12),)
    assert [t.annotator for t in kept.tests] == ["h0", "h1", "h2"]


def test_a_d_without_variance_takes_the_limit_of_the_test() -> None:
    assert one_sided_p([-1, -1, -1], 0.1) == (None, 0.0)
    assert one_sided_p([0, 0, 0], 0.0) == (None, 1.0)
    statistic, p = one_sided_p([0, -1, 0, 1, -1], 0.1)
    assert statistic is not None and 0 < p < 1
