"""Intervals that respect trials of one task: a cluster bootstrap over tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.audit.check_measures import clustered, measure
from metaeval.audit.grading import Case
from metaeval.audit.metrics import cluster_intervals, kappa_interval
from metaeval.cli import main
from metaeval.contract import Outcome
from tests.audit.airline import labelled_airline_project

P, F = Outcome.PASS, Outcome.FAIL


def cases(pattern: list[tuple[Outcome, Outcome]], trials: int) -> list[Case]:
    """Each (human, graded) pair repeated ``trials`` times as the trials of one task."""
    return [Case(f"t{i}-{k}", "c", "s", h, g, task=f"task{i:03d}")
            for i, (h, g) in enumerate(pattern) for k in range(trials)]


PATTERN = [(P, P)] * 14 + [(F, F)] * 10 + [(P, F)] * 3 + [(F, P)] * 3


def test_one_case_a_cluster_is_the_ordinary_bootstrap() -> None:
    # clusters named in case order, one case each: the same draws as kappa_interval
    human = [h for h, _ in PATTERN]
    graded = [g for _, g in PATTERN]
    names = [f"c{i:03d}" for i in range(len(PATTERN))]
    by_cluster = cluster_intervals(human, graded, names, seed=3, resamples=200)
    assert by_cluster.clusters == len(PATTERN)
    by_case = kappa_interval(human, graded, seed=3, resamples=200)
    assert (by_cluster.kappa.low, by_cluster.kappa.high) == pytest.approx(
        (by_case.low, by_case.high))


def test_trials_that_move_together_widen_the_interval() -> None:
    four = cases(PATTERN, 4)
    by_task = measure(four, resamples=500, cluster="task")
    by_run = measure(four, resamples=500, cluster="run")
    assert by_task.clusters == len(PATTERN) and by_run.clusters == 0
    assert by_task.kappa.value == by_run.kappa.value  # the point estimate does not move
    for wide, narrow in ((by_task.kappa_ci, by_run.kappa_ci), (by_task.tpr_ci, by_run.tpr_ci),
                         (by_task.tnr_ci, by_run.tnr_ci)):
        assert wide.high - wide.low > narrow.high - narrow.low
    # one trial a task: nothing to cluster, both ways are as wide
    one = cases(PATTERN, 1)
    a = measure(one, resamples=300, cluster="task").kappa_ci
    b = measure(one, resamples=300, cluster="run").kappa_ci
    assert abs((a.high - a.low) - (b.high - b.low)) < 0.1


@pytest.mark.parametrize(("tasks", "trials", "mode", "expected"), [
    (30, 4, "auto", (True, 30)),
    (5, 4, "auto", (False, 5)),      # too few tasks to resample
    (30, 1, "auto", (False, 0)),     # no task shared
    (5, 4, "task", (True, 5)),
    (30, 4, "run", (False, 30)),
])
def test_auto_clusters_when_runs_share_enough_tasks(
        tasks: int, trials: int, mode: str, expected: tuple[bool, int]) -> None:
    assert clustered(cases([(P, P)] * tasks, trials), mode) == expected


def test_undefined_resamples_are_left_out_and_no_cases_is_the_whole_range() -> None:
    only_pass = cluster_intervals([P, P], [P, F], ["a", "b"], resamples=50)
    assert only_pass.tnr.reason == "no human-fail case" and only_pass.tnr.low == 0.0
    assert 0.0 <= only_pass.tpr.low <= only_pass.tpr.high <= 1.0 and not only_pass.tpr.reason
    empty = cluster_intervals([], [], [], resamples=50)
    assert (empty.kappa.low, empty.kappa.high, empty.kappa.reason) == (-1.0, 1.0, "no cases")


def test_the_output_says_the_intervals_resample_tasks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    labelled_airline_project(tmp_path, 50, 4)
    monkeypatch.chdir(tmp_path)
    table = CliRunner().invoke(main, ["meta-eval"], catch_exceptions=False).output
    assert ("intervals: cluster bootstrap over tasks (up to 50 tasks; the trials of one task "
            "are resampled together, not counted as independent cases) for 3 of 3 rows"
            ) in table
    document = json.loads(CliRunner().invoke(main, ["meta-eval", "--format", "json"]).output)
    assert {c["clusters"] for c in document["checks"]} == {50}
    alone = CliRunner().invoke(main, ["meta-eval", "--cluster", "run"]).output
    assert "3 row(s) have runs that share a task but are resampled run by run" in alone
