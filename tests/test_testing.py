from __future__ import annotations

from pathlib import Path

import pytest

from metaeval.config import Bars, load_config
from metaeval.contract import JsonValue
from metaeval.testing import assert_graders

REPO = Path(__file__).resolve().parents[1]
META_SETS = REPO / "meta_sets"


def test_the_repository_graders_meet_their_bars_on_the_meta_set() -> None:
    bars = load_config(REPO).meta_eval.check_bars
    assert set(bars) >= {"refund_issued", "max_steps", "grounded_numbers"}
    result = assert_graders(META_SETS, checks=bars)
    assert {c.name for c in result.checks} == set(bars)


def test_a_mutant_in_a_grader_is_killed_by_the_meta_set(monkeypatch: pytest.MonkeyPatch) -> None:
    # the mutant: state_includes matches every row, so a refund to the wrong order passes
    def matches_anything(actual: JsonValue, expected: JsonValue) -> bool:
        return True

    monkeypatch.setattr("metaeval.graders.state_checks.includes", matches_anything)
    with pytest.raises(AssertionError, match=r"refund_issued: BELOW-MIN-TNR BELOW-MIN-KAPPA"):
        assert_graders(META_SETS, checks={"refund_issued": Bars(0.95, 0.95, 0.9)})


def test_forbidden_warnings_and_bad_input_fail(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="NO-SIGNAL"):
        assert_graders([META_SETS], forbid={"NO-SIGNAL"})
    with pytest.raises(ValueError, match="forbid: got"):
        assert_graders(META_SETS, forbid={"NO-SINGAL"})
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    with pytest.raises(AssertionError, match="bad meta-set input"):
        assert_graders(bad)
    with pytest.raises(AssertionError, match="does not have"):
        assert_graders(META_SETS, checks={"no_such_check": Bars(min_tpr=0.5)})
