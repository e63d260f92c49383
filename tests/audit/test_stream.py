"""Grading as the runs are read gives what grading them all at once gives: the same
cases, the same ablation counts (the swap included), the same flags and numbers."""

from __future__ import annotations

from pathlib import Path

from metaeval.audit.check_measures import Settings, measure_grading
from metaeval.audit.grading import grade_runs
from metaeval.audit.stream import Stream
from metaeval.audit.tautology import sensitivity
from metaeval.importing import AllowedModules
from metaeval.loaders.meta_set import MetaRun, load_meta_sets
from metaeval.report.meta_eval_render import meta_eval_json
from tests.audit.airline import write_runs
from tests.audit.conftest import ALLOW_FIXTURES, META_SETS, UserMetaSet

FAST = Settings(resamples=30)


def streamed(runs: tuple[MetaRun, ...], allowed: AllowedModules) -> str:
    stream = Stream(allowed)
    for run in runs:
        stream.add(run)
    return meta_eval_json(measure_grading(stream.finish(), FAST))


def held(runs: tuple[MetaRun, ...], allowed: AllowedModules) -> str:
    return meta_eval_json(measure_grading(grade_runs(runs, allowed), FAST))


def test_the_repository_meta_sets_give_the_same_result() -> None:
    runs = load_meta_sets([META_SETS]).runs
    assert streamed(runs, AllowedModules(())) == held(runs, AllowedModules(()))


def test_planted_tautologies_are_flagged_the_same_way(user_meta_set: UserMetaSet) -> None:
    path = user_meta_set("answer_from_case", "answer_resolves_task", "raises", builtins=True)
    runs = load_meta_sets([path], ALLOW_FIXTURES).runs
    result = streamed(runs, ALLOW_FIXTURES)
    assert '"TAUTOLOGY"' in result  # the planted one is caught
    assert result == held(runs, ALLOW_FIXTURES)


def test_the_swap_counts_match_run_by_run(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    write_runs(path, 7, 3, checks=True, label="pass")
    runs = load_meta_sets([path]).runs
    stream = Stream()
    for run in runs:
        stream.add(run)
    (mine,) = stream.finish().checks
    (theirs,) = grade_runs(runs).checks
    assert mine.sensitivity == sensitivity(theirs)
    assert mine.runs == () and len(mine.cases) == 21  # no run kept
