"""The live count of a mutate run: one line in place on a terminal, a line every
N seconds in a CI log, and a time left only once the pace is known."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.commands import mutate_run as session
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
from metaeval.report import progress
from metaeval.report.progress import MutateProgress, duration_text
from tests.mutation.conftest import PRICING, SURVIVOR, FakeRunner, shop_here

__all__ = ["shop_here"]  # a fixture, used by name

MUTANT = Mutant("m", MutantKind.REWRITE, "flip_comparison", "a.py", "a", "f",
                Span(1, 1, 1, 2), "<", "<=")


def result(status: Status = Status.KILLED, cached: bool = False) -> MutantResult:
    return MutantResult(MUTANT, status, cached=cached)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("seconds", "text"), [(0.4, "0s"), (45, "45s"), (130, "2m10s"),
                                               (3600 + 300, "1h05m"), (-3, "0s")])
def test_durations_read_at_a_glance(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


def test_a_terminal_line_is_rewritten_in_place_with_the_counts_and_the_time_left() -> None:
    out, clock = io.StringIO(), Clock()
    show = MutateProgress(out, terminal=True, clock=clock)
    show(1, 10, result(Status.IGNORED))  # settled before the run: no pace from it
    show(2, 10, result(cached=True))
    clock.now += 60  # the baseline
    for done, status in enumerate([Status.KILLED, Status.SURVIVED, Status.KILLED], 3):
        show(done, 10, result(status))
        clock.now += 10
    assert "left" not in out.getvalue()  # two mutants' pace is no estimate yet
    show(6, 10, result(Status.NO_COVERAGE))  # 3 runs after the first, 10 s apart
    clock.now += 10
    show(7, 10, result(Status.RUNTIME_ERROR))
    lines = out.getvalue().split("\r")
    assert lines[0] == ""
    assert lines[1] == "mutants 1/10 (ignored 1)\x1b[K"
    assert lines[-2] == ("mutants 6/10 (killed 3, survived 1, no coverage 1, ignored 1) "
                         "~40s left\x1b[K")
    assert lines[-1] == ("mutants 7/10 (killed 3, survived 1, no coverage 1, error 1, "
                         "ignored 1) ~30s left\x1b[K")
    for done in (8, 9, 10):
        show(done, 10, result())  # no time passes: redrawn only at the end
    assert out.getvalue().split("\r")[-1] == (
        "mutants 10/10 (killed 6, survived 1, no coverage 1, error 1, ignored 1)\x1b[K\n")


def test_a_log_gets_a_line_every_n_seconds_and_none_at_the_end() -> None:
    out, clock = io.StringIO(), Clock()
    show = MutateProgress(out, terminal=False, every=30, clock=clock)
    for done in range(1, 20):
        clock.now += 5
        show(done, 20, result())
    # 95 s in 19 mutants: a line at 30, 60 and 90 s, never one per mutant.
    assert out.getvalue().splitlines() == [
        "metaeval mutate: 6/20 mutants done (killed 6), ~1m10s left",
        "metaeval mutate: 12/20 mutants done (killed 12), ~40s left",
        "metaeval mutate: 18/20 mutants done (killed 18), ~10s left"]
    show(20, 20, result())  # the table follows: no last line
    assert len(out.getvalue().splitlines()) == 3
    assert "\r" not in out.getvalue()


def test_mutate_in_a_log_prints_its_progress_lines(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    monkeypatch.setattr(progress, "EVERY", 0.0)
    out = CliRunner().invoke(main, ["mutate", PRICING, "--mutants", "no_patches",
                                    "--no-cache"])
    assert out.exit_code == 1, out.output
    lines = out.stderr.splitlines()
    # First what it does before any mutant (issue 51), then the count.
    assert lines[0] == "metaeval mutate: finding mutants, reading the caches (0s)"
    assert lines[1].startswith("metaeval mutate: 1/") and "mutants done (killed 1)" in lines[1]
    assert any(line.endswith("left") for line in lines)
    assert "\r" not in out.stderr  # CliRunner's stderr is no terminal


def test_a_log_gets_a_line_per_step_and_none_after_the_first_result(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "TICK", 3600.0)  # no clock thread line in this test
    clock, out = Clock(), io.StringIO()
    shown = MutateProgress(out, terminal=False, clock=clock)
    shown.phase("collecting tests")
    clock.now += 2
    shown.phase("tracing the baseline", 0, 9)
    clock.now += 1
    shown.phase("tracing the baseline", 4, 9)  # the same step, too soon: no line
    assert out.getvalue().splitlines() == ["metaeval mutate: collecting tests (0s)",
                                           "metaeval mutate: tracing the baseline: 0/9 tests (2s)"]
    shown(1, 2, result())
    shown.phase("preparing the mutants")  # too late: the count has taken over
    assert "preparing" not in out.getvalue()


def test_mutants_settled_before_the_baseline_do_not_end_the_step_lines(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ignored and cached mutants come before the baseline is traced (this
    repository's 15 ignored ones did, and the log then fell silent for minutes)."""
    monkeypatch.setattr(progress, "TICK", 3600.0)  # no clock thread line in this test
    clock, out = Clock(), io.StringIO()
    shown = MutateProgress(out, terminal=False, clock=clock)
    shown.phase("tracing the baseline", 0, 9)
    shown(1, 5, result(Status.IGNORED))
    shown(2, 5, result(Status.KILLED, cached=True))
    clock.now += 9
    shown.phase("preparing the mutants")
    assert out.getvalue().splitlines() == [
        "metaeval mutate: tracing the baseline: 0/9 tests (0s)",
        "metaeval mutate: preparing the mutants (9s)"]
    shown(3, 5, result())  # a mutant that ran: the count takes over
    shown.phase("tracing the baseline", 9, 9)
    assert "9/9" not in out.getvalue()


def test_a_terminal_redraws_the_step_in_place_and_clears_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "TICK", 3600.0)
    clock, out = Clock(), io.StringIO()
    shown = MutateProgress(out, terminal=True, clock=clock)
    shown.phase("tracing the baseline", 3, 9)
    clock.now += 1
    shown.phase("tracing the baseline", 5, 9)
    shown.stop()
    assert out.getvalue() == ("\rmetaeval mutate: tracing the baseline: 3/9 tests (0s)\x1b[K"
                              "\rmetaeval mutate: tracing the baseline: 5/9 tests (1s)\x1b[K"
                              "\r\x1b[K")
