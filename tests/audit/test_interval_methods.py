"""Intervals that can be wrong in both directions (issue 45 item 7): a cluster
bootstrap that collapses to a point on a boundary (9 of 9: every resample is 9 of 9)
falls back to Wilson and says so; singleton tasks are not clusters; every page names
the method of the intervals it shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.audit.check_measures import clustered, measure
from metaeval.audit.grading import Case
from metaeval.audit.metrics import wilson_interval
from metaeval.cli import main
from metaeval.contract import Outcome
from tests.audit.airline import labelled_airline_project

P, F = Outcome.PASS, Outcome.FAIL


def trials(pattern: list[tuple[Outcome, Outcome]], n: int) -> list[Case]:
    return [Case(f"t{i}-{k}", "c", "s", h, g, task=f"task{i:03d}")
            for i, (h, g) in enumerate(pattern) for k in range(n)]


def test_a_cluster_interval_at_a_boundary_falls_back_to_wilson() -> None:
    # 12 tasks of 3 trials: every human pass graded pass (TPR 1), TNR off the boundary.
    pattern = [(P, P)] * 3 + [(F, F)] * 6 + [(F, P)] * 3
    m = measure(trials(pattern, 3), resamples=200, cluster="auto")
    assert m.clusters == 12 and m.tpr.value == 1.0
    wilson = wilson_interval(9, 9)  # the 9 human passes, counted here
    assert (m.tpr_ci.low, m.tpr_ci.high) == pytest.approx((wilson.low, wilson.high))
    assert m.tpr_ci.low < 1.0
    assert m.tpr_method == "Wilson (the cluster bootstrap collapsed to 1.00)"
    # the mirror: TNR 0.67 is off the boundary, its cluster bootstrap stands
    assert m.tnr_method == "cluster bootstrap"
    assert (m.tnr_ci.low, m.tnr_ci.high) != pytest.approx(
        (wilson_interval(18, 27).low, wilson_interval(18, 27).high))


def test_singleton_tasks_are_not_clusters() -> None:
    # OTel runs with no task: each its own task; two tasks with trials among 30 runs.
    cases = [Case(f"r{i}", "c", "s", P, P, task=f"trace{i}") for i in range(26)]
    cases += trials([(P, P), (F, F)], 2)
    assert clustered(cases, "auto") == (False, 2)
    assert clustered(trials([(P, P)] * 10, 2), "auto") == (True, 10)  # the mirror


def test_every_page_names_the_method_of_the_intervals_it_shows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    labelled_airline_project(tmp_path, 30, 4)
    monkeypatch.chdir(tmp_path)
    table = CliRunner().invoke(main, ["meta-eval", "--html", "page.html"],
                               catch_exceptions=False)
    assert table.exit_code in (0, 1), table.output
    # every check agrees with people on every run: TPR and TNR 1.00, at the boundary
    assert "[1.00, 1.00]" not in table.output.split("kappa")[0]
    assert "TPR and TNR intervals: Wilson" in table.output
    html = (tmp_path / "page.html").read_text()
    assert "TPR and TNR intervals: Wilson" in html
    document = json.loads(CliRunner().invoke(main, ["meta-eval", "--format", "json"]).output)
    row = document["evaluator"]
    assert row["ci_methods"]["tpr"].startswith("Wilson")
    assert row["ci_methods"]["kappa"].startswith("Wilson on the observed agreement")
    assert row["tpr_ci"][0] < 1.0 and row["kappa_ci"][0] < 1.0
    assert "kappa intervals: cluster bootstrap of 50, seed 0 (Wilson on the observed " \
        "agreement where every resample gave 1.00: " in table.output


def test_a_kappa_interval_collapsed_at_1_falls_back_to_wilson_on_the_agreement() -> None:
    # 15 runs, every one agreed: every bootstrap resample has kappa 1.00.
    pattern = [(P, P)] * 9 + [(F, F)] * 6
    m = measure(trials(pattern, 1), resamples=200, cluster="run")
    assert m.kappa.value == 1.0
    chance = (9 / 15) ** 2 + (6 / 15) ** 2  # both raters pass 9 of 15, counted here
    low = (wilson_interval(15, 15).low - chance) / (1 - chance)
    assert (m.kappa_ci.low, m.kappa_ci.high) == pytest.approx((low, 1.0))
    assert m.kappa_ci.low < 1.0
    assert m.kappa_method == ("Wilson on the observed agreement, chance agreement as "
                              "observed (the bootstrap collapsed to 1.00)")
    # the mirror: one disagreement, the bootstrap's interval is no point, it stands
    m = measure(trials([*pattern, (F, P)], 1), resamples=200, cluster="run")
    assert m.kappa_method == "bootstrap" and m.kappa_ci.low < m.kappa_ci.high
