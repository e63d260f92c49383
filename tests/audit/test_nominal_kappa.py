from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

from metaeval.audit.metrics import nominal_kappa


def test_nominal_kappa_matches_hand_computed_value() -> None:
    # p_o = 4/6; p_e = (3*3 + 3*2 + 0*1)/36 = 15/36; kappa = (24/36 - 15/36) / (21/36) = 3/7
    human = ["a", "a", "a", "b", "b", "b"]
    judged: list[str | None] = ["a", "a", "b", "b", "b", "tie"]
    assert nominal_kappa(human, judged).value == pytest.approx(3 / 7)


def test_unscored_is_a_disagreement_not_a_dropped_case() -> None:
    human = ["a", "b", "a", "b"]
    full = nominal_kappa(human, ["a", "b", "a", "b"]).value
    with_unscored = nominal_kappa(human, ["a", "b", "a", None]).value
    assert full == 1.0 and with_unscored < full
    assert with_unscored == pytest.approx(
        cohen_kappa_score(human, ["a", "b", "a", "unscored"]))


def test_degenerate_cases_have_reasons_not_nan() -> None:
    assert nominal_kappa([], []).reason == "no cases"
    constant = nominal_kappa(["a", "b"], ["a", "a"])
    assert constant.value == 0.0 and "constant judge" in constant.reason
    assert "nothing scored" in nominal_kappa(["a", "b"], [None, None]).reason
