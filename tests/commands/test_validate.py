"""`metaeval validate` counts what it loaded, judge items and probes apart, and
checks a judge's recorded verdicts as recorded verdicts, not as a meta-set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.commands.validate import looks_recorded

REPO = Path(__file__).resolve().parents[2]


def _lines(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _items(tmp_path: Path) -> Path:
    folder = tmp_path / "judge"
    folder.mkdir()
    _lines(folder / "point.ndjson",
           *({"id": f"p{i}", "prompt": "q", "response": "r", "label": "pass"} for i in range(3)))
    _lines(folder / "pair.ndjson",
           *({"id": f"c{i}", "prompt": "q", "response_a": "x", "response_b": "y", "label": "a"}
             for i in range(2)),
           {"id": "len1", "prompt": "q", "response": "short", "padded": "short, and long"})
    return folder


def _validate(tmp_path: Path, *args: str) -> Result:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n")
    return CliRunner().invoke(main, ["validate", *args])


def test_judge_items_are_counted_and_probes_apart(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _items(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = _validate(tmp_path, str(folder))
    assert out.exit_code == 0, out.output
    assert out.output.strip() == "5 judge items (and 1 probe) loaded from 2 files; 0 bad lines"
    document = json.loads(_validate(tmp_path, str(folder), "--format", "json").output)
    assert (document["judge_items"], document["probes"], document["loaded"]) == (5, 1, 0)


def test_a_recorded_log_is_checked_as_recorded_verdicts(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _lines(tmp_path / "log.jsonl",
                 {"id": "c0", "order": "ab", "verdict": "a", "raw": "A"},
                 {"id": "c0", "order": "ba", "verdict": "tie"},
                 {"id": "c1", "verdict": 9})
    monkeypatch.chdir(tmp_path)
    out = _validate(tmp_path, "log.jsonl")
    assert out.exit_code == 2
    # One error for the one bad line, not a meta-set's four a line.
    assert out.output.strip().splitlines() == [
        "log.jsonl:3: verdict: got 9; expected a number from 1 to 5 (the judge's scale; "
        "declare another with --scale LOW-HIGH), 'pass', 'fail', 'a', 'b', 'tie' or null "
        "(unscored)",
        "2 recorded verdicts loaded from 1 file; 1 bad line"]
    assert _validate(tmp_path, "--recorded", "log.jsonl", "--scale", "0-10").exit_code == 0


def test_recorded_verdicts_beside_their_items_are_held_to_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _items(tmp_path)
    _lines(tmp_path / "log.jsonl",
                 {"id": "c0", "order": "ab", "verdict": "a"},
                 {"id": "p0", "verdict": "b"},          # a pointwise item: no pair label
                 {"id": "gone", "verdict": "pass"})     # no such item
    monkeypatch.chdir(tmp_path)
    out = _validate(tmp_path, "judge", "log.jsonl")
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert lines[0].startswith("log.jsonl:2: verdict: got 'b'; expected a number from 1 to 5")
    assert lines[1] == "log.jsonl:3: id: got 'gone'; expected the id of a loaded judge item"
    assert lines[2] == ("5 judge items (and 1 probe), 1 recorded verdict loaded from 3 files; "
                        "2 bad lines")


def test_a_log_in_a_folder_is_recognised_and_meta_sets_beside_it_still_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "sets"
    folder.mkdir()
    (folder / "runs.jsonl").write_text(
        (REPO / "meta_sets" / "support_agent.jsonl").read_text())
    _lines(folder / "log.jsonl", {"id": "x", "verdict": "pass"})
    monkeypatch.chdir(tmp_path)
    out = _validate(tmp_path, str(folder))
    assert out.exit_code == 0, out.output
    assert ", 1 recorded verdict loaded from 2 files; 0 bad lines" in out.output


def test_a_meta_set_is_not_taken_for_a_recorded_log(tmp_path: Path) -> None:
    assert not looks_recorded(REPO / "meta_sets" / "support_agent.jsonl")
    # A field no recorded verdict has: not a log, whatever else it holds.
    assert not looks_recorded(_lines(tmp_path / "a.jsonl", {"id": "x", "verdict": "a",
                                                            "task": {}}))
    assert not looks_recorded(_lines(tmp_path / "b.jsonl", {"id": "x", "order": "ab"}))
    assert looks_recorded(_lines(tmp_path / "c.jsonl", {"id": "x", "verdict": None}))


@pytest.mark.parametrize("given", ["judge", "judge/items.jsonl"])
def test_judge_items_in_a_jsonl_file_are_counted_as_items_with_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str) -> None:
    folder = tmp_path / "judge"
    folder.mkdir()
    _lines(folder / "items.jsonl",
           *({"id": f"p{i}", "prompt": "q", "response": "r", "label": "pass"}
             for i in range(30)))
    monkeypatch.chdir(tmp_path)
    out = _validate(tmp_path, given)
    assert out.exit_code == 0, out.output
    assert out.stdout.strip() == "30 judge items loaded from 1 file; 0 bad lines"
    assert out.stderr.strip() == (
        "warning: judge/items.jsonl: "
        "judge items in a .jsonl file: meta-eval reads every .jsonl file under the meta-sets "
        "as runs, and judge-audit's default reads *.ndjson; expected items.ndjson")


def test_a_run_whose_first_line_has_a_prompt_field_is_still_a_meta_set(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = json.loads((REPO / "meta_sets" / "support_agent.jsonl").read_text().splitlines()[0])
    _lines(tmp_path / "runs.jsonl", {**run, "prompt": "not an item: it has a task"})
    monkeypatch.chdir(tmp_path)
    out = _validate(tmp_path, "runs.jsonl")
    assert "judge item" not in out.output
    assert "runs.jsonl:1: prompt: unknown field" in out.output
