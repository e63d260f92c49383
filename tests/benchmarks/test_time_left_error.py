"""Smoke test of benchmarks/time_left_error.py: the progress line read back and the
error's arithmetic. Nothing is installed and no run is made here."""

from __future__ import annotations

import pytest

from tests.benchmarks.conftest import load_benchmark

tl = load_benchmark("time_left_error")


@pytest.mark.parametrize(("text", "left"), [
    ("mutants 225/633 (killed 100, survived 20) ~1m40s left\x1b[K", 100.0),
    ("mutants 9/633 (killed 9) ~45s left", 45.0),
    ("mutants 9/633 ~1h05m left", 3900.0),
    ("mutants 3/633 (killed 3)", None),
])
def test_a_redraw_gives_its_counts_and_the_time_left_shown(text: str, left: float | None
                                                           ) -> None:
    shown = tl.parse_line(text, 7.0)
    assert shown is not None and shown.at == 7.0 and shown.left == left
    assert shown.total == 633


def test_the_ignored_ones_counted_before_the_baseline_are_not_the_mutants_start() -> None:
    shown = [tl.parse_line("mutants 15/540 (ignored 15)", 0.5),
             tl.parse_line("mutants 16/540 (killed 1, ignored 15)", 150.0),
             tl.parse_line("mutants 300/540 (killed 285, ignored 15) ~1m00s left", 200.0),
             tl.parse_line("mutants 540/540 (killed 525, ignored 15)", 250.0)]
    assert all(s is not None for s in shown) and shown[0] is not None
    assert shown[0].settled == 15
    found = tl.errors([s for s in shown if s is not None], floor=10.0)
    assert found.mutants_seconds == 100.0 and found.errors == pytest.approx((0.2,))


def test_a_step_line_is_no_redraw() -> None:
    assert tl.parse_line("metaeval mutate: tracing the baseline: 12/300 tests (41s)", 1.0) is None


def test_errors_are_counted_from_the_halfway_point_and_the_floor_is_kept_apart() -> None:
    shown = [tl.Shown(0.0, 1, 10, None), tl.Shown(10.0, 3, 10, 100.0),
             tl.Shown(60.0, 5, 10, 60.0),  # 40 s really left: 50% over
             tl.Shown(80.0, 8, 10, 15.0),  # 20 s left: 25% under
             tl.Shown(95.0, 9, 10, 5.0),  # under the floor of 10 s
             tl.Shown(100.0, 10, 10, None)]
    found = tl.errors(shown, floor=10.0)
    assert found.first_shown == 10.0 and found.mutants_seconds == 100.0
    assert found.errors == pytest.approx((0.5, -0.25))
    assert found.under_floor == 1 and found.within() == 0.5


def test_no_progress_line_is_an_error_not_a_pass() -> None:
    with pytest.raises(tl.bt.BenchError):
        tl.errors([], floor=10.0)
