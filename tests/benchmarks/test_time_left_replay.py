"""Smoke test of benchmarks/time_left_replay.py: a small recording fed again to the
estimator, and the error from halfway set against the time really left. Nothing is
installed and no run is made here."""

from __future__ import annotations

from typing import Any

import pytest

from tests.benchmarks.conftest import load_benchmark

tr = load_benchmark("time_left_replay")


def recording() -> dict[str, Any]:
    # Ten mutants of one test each (1 ms in the baseline), one worker, each killed
    # after 2 s: a result every 2 s from t=100, the last at t=118.
    plan = {f"m{i}": {"tests": ["t::a"], "reached": True, "first": []} for i in range(10)}
    results = [{"at": 100.0 + 2 * i, "id": f"m{i}", "status": "Killed", "duration": 2.0,
                "in_tests": 1.5, "cached": False, "own_process": False,
                "killed_by": ["t::a"], "shown": None} for i in range(10)]
    return {"plan": plan, "durations": {"t::a": 0.001}, "always": [], "jobs": 1,
            "began": 99.0, "results": results}


def test_a_replay_says_what_the_estimator_said_at_each_result() -> None:
    steps = tr.replay(recording(), tr.time_left)
    assert [s.at for s in steps] == [100.0 + 2 * i for i in range(10)]
    assert [s.actual for s in steps] == [18.0 - 2 * i for i in range(10)]
    # Grounded from the third answer on; each killed child cost 2 s, one at a time.
    assert [s.shown for s in steps[:2]] == [None, None]
    assert steps[4].shown == pytest.approx(5 * 2.0, rel=0.01)


def test_the_errors_count_from_halfway_with_the_floor_left() -> None:
    steps = [tr.Step(100.0 + 2 * i, 20.0 - 2 * i, 18.0 - 2 * i) for i in range(10)]
    found = tr.summary(steps, first=100.0, floor=5.0)
    # Halfway is t=109: the steps at 110, 112 with 8 s and 6 s left; 114 to 118 under 5 s.
    assert found.errors == pytest.approx((2 / 8, 2 / 6))
    assert found.under_floor == 3
    assert found.median() == pytest.approx((0.25 + 1 / 3) / 2)


def test_a_recording_from_before_the_patch_flag_tells_patch_mutants_by_their_id() -> None:
    plan = {"metaeval/x.py::f::op::0": {"tests": ["t::a"], "reached": True, "first": []},
            "forbidden-tool-allowed": {"tests": ["t::a"], "reached": True, "first": []}}
    costs = tr.expected_for({"plan": plan, "durations": {"t::a": 0.5}, "always": []},
                            tr.time_left)
    assert [costs[name].patch for name in plan] == [False, True]
