"""A run's free metadata is kept, never interpreted, and breaks results down with --by."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.audit.check_measures import Settings, check_by, meta_eval
from metaeval.cli import main
from metaeval.errors import InputError
from metaeval.loaders.meta_set import load_meta_sets
from tests.audit.airline import airline_run, is_bad, write_runs

FAST = ["--resamples", "50"]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["meta-eval", *args], catch_exceptions=False)


def test_metadata_is_kept_as_written(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    write_runs(path, 2, 2, checks=True, label="pass")
    loaded = load_meta_sets([path])
    assert not loaded.errors
    assert loaded.runs[1].metadata == {"trial": 1, "model": "m-large", "cost": 0.01,
                                       "end_reason": "user_stop"}


def test_metadata_that_is_not_an_object_is_a_line_error(tmp_path: Path) -> None:
    good = airline_run(0, 0, bad=False, checks=True, label="pass")
    bad = airline_run(0, 1, bad=False, checks=True, label="pass")
    bad["metadata"] = ["cost", 1]
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    loaded = load_meta_sets([path])
    assert [r.id for r in loaded.runs] == ["t00-trial0"]
    assert [str(e) for e in loaded.errors] == [
        f'{path}:2: metadata: got ["cost", 1]; expected a JSON object']


def test_by_metadata_groups_runs_by_the_value_at_the_key(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    runs = write_runs(path, 10, 4, checks=True)
    # one run lacks the key: its own group, not dropped
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    first["label"] = {"verdict": "pass", "criteria": {"no_tool_called": "pass"}}
    del first["metadata"]["model"]
    for i, line in enumerate(lines[1:], start=1):
        record = json.loads(line)
        verdict = "fail" if is_bad(i // 4, i % 4) else "pass"
        record["label"] = {"verdict": verdict, "criteria": {"no_tool_called": verdict}}
        lines[i] = json.dumps(record)
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n")
    result = meta_eval(load_meta_sets([path]).runs, Settings(resamples=20,
                                                             by="metadata.model"))
    groups = dict(result.groups)
    assert sorted(groups) == ["(missing)", "m-large", "m-small"]
    assert (groups["(missing)"].n, groups["m-large"].n, groups["m-small"].n) == (1, 20, 19)
    # the near misses of the large model, counted from the table that made the runs
    large_bad = sum(is_bad(t, k) for t in range(10) for k in range(4) if k % 2)
    cell = dict(groups["m-large"].cells)["no_tool_called"]
    assert (cell.human_fail, len(cell.caught)) == (large_bad, large_bad)
    assert len(runs) == 40


def test_by_task_in_the_table_and_the_json(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    write_runs(path, 3, 2, checks=True, label="pass")
    table = run(*FAST, "--by", "task", str(path))
    assert "per task (k/m" in table.output
    assert "airline-02" in table.output
    document = json.loads(run(*FAST, "--by", "task", "--format", "json", str(path)).output)
    assert document["by"]["key"] == "task"
    assert sorted(document["by"]["groups"]) == ["airline-00", "airline-01", "airline-02"]
    assert document["by"]["groups"]["airline-01"]["n"] == 2
    plain = json.loads(run(*FAST, "--format", "json", str(path)).output)
    assert "by" not in plain  # the default result keeps its keys


@pytest.mark.parametrize("by", ["metadata.", "metadata.a..b", "model", "metadata"])
def test_a_bad_by_is_an_input_error(by: str) -> None:
    with pytest.raises(InputError, match=r"expected 'category', 'task' or 'metadata\.KEY'"):
        check_by(by)


@pytest.mark.parametrize("by", ["category", "task", "metadata.model", "metadata.a.b"])
def test_a_good_by_is_accepted(by: str) -> None:
    assert check_by(by) == by


def test_a_run_with_no_label_is_unlabelled_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    write_runs(path, 2, 2, checks=True)
    lines = path.read_text().splitlines()
    labelled = json.loads(lines[0])
    labelled["label"] = {"verdict": "pass"}
    lines[0] = json.dumps(labelled)
    path.write_text("\n".join(lines) + "\n")
    loaded = load_meta_sets([path])
    assert not loaded.errors and len(loaded.runs) == 4
    result = meta_eval(loaded.runs, Settings(resamples=20))
    assert (result.evaluator.measured.n, result.unlabelled) == (1, 3)
    out = run(*FAST, str(path))
    # The header counts every run graded, not only the evaluator's row (1).
    assert out.output.startswith("meta-eval: 4 runs from 1 file(s);")
    assert ("3 of them with no overall human verdict (unlabelled, or their annotators "
            "tied): not in the evaluator's row") in out.output
