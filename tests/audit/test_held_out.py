"""The golden and held-out sets in use (issue 48, items 1 and 2): ``--set`` picks the
items every judge-audit report measures; a held-out read goes to the ledger beside
the split; a changed judge read on the same held-out set is flagged and refused by
``gate``, the same judge read twice is not, and a fresh draw starts anew; a bad
ledger line is a file:line error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main

RUBRIC = "Score the answer from 1 to 5.\nQuestion: {prompt}\nAnswer: {response}\n"


def scoring_judge(prompt: str) -> str:
    """A judge for these tests: a 5 for an answer that says "good", else a 2."""
    return '{"score": 5}' if "good" in prompt.rsplit("Answer:", 1)[-1] else '{"score": 2}'


def _items(path: Path, count: int, start: int = 0) -> None:
    lines = []
    for n in range(start, start + count):
        good = n % 2 == 0
        lines.append({"id": f"i{n}", "prompt": f"question {n}",
                      "response": f"a {'good' if good else 'poor'} answer {n}",
                      "label": "pass" if good else "fail",
                      "category": "alpha" if n % 3 else "beta"})
    with path.open("a") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rubric.txt").write_text(RUBRIC)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.metaeval]\nallowed_modules = ["tests"]\n'
        '[tool.metaeval.judges.rubric]\ntype = "python"\n'
        'target = "tests.audit.test_held_out:scoring_judge"\n'
        'prompt_template = "rubric.txt"\nreply = "json"\nmodes = ["pointwise"]\n')
    _items(tmp_path / "items.ndjson", 40)
    assert _run("split", "items.ndjson").exit_code == 0
    return tmp_path


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _audit(*args: str, judge: str = "rubric") -> Result:
    return _run("judge-audit", "--judge", judge, "--items", "items.ndjson", "--no-cache",
                "--probes", "files", *args)


def _split(project: Path) -> tuple[set[str], set[str]]:
    data = json.loads((project / "items.split.json").read_text())
    return set(data["golden"]), set(data["held_out"])


def _ledger(project: Path) -> list[dict[str, object]]:
    path = project / "items.ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_the_set_is_golden_by_default_and_every_report_names_it(project: Path) -> None:
    golden, held = _split(project)
    assert len(golden) + len(held) == 40 and held
    done = _audit("--format", "json", "--html", "page.html", "--summary", "summary.md")
    document = json.loads(done.stdout)
    assert document["set"]["name"] == "golden"
    assert document["set"]["chosen_by"] == "the default: a split lies beside the items"
    assert document["agreement"]["labelled_items"] == len(golden) == document["set"]["measured"]
    assert "set: golden (" in (project / "page.html").read_text()
    assert "set: golden (" in (project / "summary.md").read_text()
    table = _audit("--set", "held-out").stdout
    assert f"items: {len(held)} labelled" in table and "set: held-out (" in table
    every = _audit("--set", "all").stdout
    assert "items: 40 labelled" in every and "set: all (every item in the files" in every
    assert not _ledger(project) or all(r["judge"] for r in _ledger(project))
    # Only the held-out read was recorded: golden and all are not held-out reads.
    assert len(_ledger(project)) == 1


def test_without_a_split_all_is_measured_and_a_split_set_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n")
    _items(tmp_path / "items.ndjson", 10)
    done = _audit(judge="steady")
    assert "set: all (every item in the files; no split file; the default: no split" in (
        done.stdout)
    refused = _audit("--set", "held-out", judge="steady")
    assert refused.exit_code == 2
    assert "--set held-out: no split file beside the items (looked for items.split.json)" in (
        refused.output)


def test_a_held_out_read_after_a_rubric_change_is_flagged_and_refused_by_gate(
        project: Path) -> None:
    first = _audit("--set", "held-out", "--format", "json")
    assert json.loads(first.stdout)["set"]["tuned_after_read"] is False
    (project / "first.json").write_text(first.stdout)
    (project / "rubric.txt").write_text(RUBRIC.replace("1 to 5", "1 to 5, strictly"))
    second = _audit("--set", "held-out", "--format", "json")
    document = json.loads(second.stdout)
    assert document["set"]["tuned_after_read"] is True
    assert document["set"]["held_out_read"]["earlier"][0]["judge_version"] == (
        json.loads(first.stdout)["judge"]["version"])
    assert second.exit_code == 1  # whatever its verdict, it may not gate on these figures
    (project / "second.json").write_text(second.stdout)
    ledger = _ledger(project)
    assert [r["tuned_after_read"] for r in ledger] == [False, True]
    table = _audit("--set", "held-out", "--html", "page.html", "--summary", "s.md").stdout
    assert "TUNED AFTER A HELD-OUT READ" in table and "tuned after a held-out read:" in table
    assert "tuned after a held-out read: the gate refuses this result" in (
        project / "page.html").read_text()
    assert "Tuned after a held-out read" in (project / "s.md").read_text()
    refused = _run("gate", "second.json")
    assert refused.exit_code == 1
    assert "judge-audit:rubric.set.tuned_after_read" in refused.stdout
    assert "split --redraw" in refused.stdout
    # The first read is no tuned judge's: gate holds it to its verdict alone.
    assert "set.tuned_after_read" not in _run("gate", "first.json").stdout


def test_the_same_identity_read_twice_is_not_flagged(project: Path) -> None:
    for _ in range(2):
        document = json.loads(_audit("--set", "held-out", "--format", "json").stdout)
        assert document["set"]["tuned_after_read"] is False
    assert document["set"]["held_out_read"]["same_identity_reads"] == 1
    # Another judge name is another judge, not a tuned one.
    other = json.loads(_audit("--set", "held-out", "--format", "json", judge="steady").stdout)
    assert other["set"]["tuned_after_read"] is False
    assert len(_ledger(project)) == 3


def test_a_fresh_draw_lets_the_changed_judge_be_read_once_more(project: Path) -> None:
    assert _audit("--set", "held-out").exit_code in (0, 1)
    (project / "rubric.txt").write_text(RUBRIC + "Be strict.\n")
    assert json.loads(_audit("--set", "held-out", "--format", "json").stdout)["set"][
        "tuned_after_read"] is True
    golden, held = _split(project)
    refused = _run("split", "items.ndjson", "--redraw")
    assert refused.exit_code == 2 and "no labelled item or run the split does not name" in (
        refused.output)
    _items(project / "items.ndjson", 20, start=40)
    done = _run("split", "items.ndjson", "--redraw", "--format", "json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["draw"] == 2
    new_golden, new_held = _split(project)
    new_ids = {f"i{n}" for n in range(40, 60)}
    assert new_held and new_held <= new_ids  # drawn from the items labelled since only
    assert golden | held | (new_ids - new_held) == new_golden
    fresh = json.loads(_audit("--set", "held-out", "--format", "json").stdout)
    assert fresh["set"]["tuned_after_read"] is False and fresh["set"]["draw"] == 2


def test_items_the_split_does_not_know_and_ids_it_names_that_are_gone_are_said(
        project: Path) -> None:
    golden, _ = _split(project)
    gone = sorted(golden)[0]
    lines = (project / "items.ndjson").read_text().splitlines(keepends=True)
    (project / "items.ndjson").write_text("".join(
        line for line in lines if json.loads(line)["id"] != gone))
    _items(project / "items.ndjson", 2, start=40)
    document = json.loads(_audit("--format", "json").stdout)
    assert document["set"]["not_in_split"] == {"count": 2, "ids": ["i40", "i41"]}
    assert document["set"]["missing"] == {"count": 1, "ids": [gone]}
    assert document["agreement"]["labelled_items"] == len(golden) - 1
    table = _audit().stdout
    assert "2 labelled item(s) not in the split, left out" in table and "'i40'" in table
    assert f"1 item(s) of the golden set not in the files: {gone!r}" in table
    assert json.loads(_audit("--set", "all", "--format", "json").stdout)[
        "agreement"]["labelled_items"] == 41


def test_recorded_verdicts_on_items_outside_the_set_are_no_error(project: Path) -> None:
    golden, _ = _split(project)
    (project / "verdicts.jsonl").write_text("".join(
        json.dumps({"id": f"i{n}", "verdict": "pass" if n % 2 == 0 else "fail"}) + "\n"
        for n in range(40)))
    done = _run("judge-audit", "--judge", "logged", "--items", "items.ndjson", "--recorded",
                "verdicts.jsonl", "--set", "golden", "--format", "json")
    document = json.loads(done.stdout)
    assert document["errors"] == [] and document["agreement"]["labelled_items"] == len(golden)


@pytest.mark.parametrize(("line", "field", "message"), [
    ('{"version": 1, "split_draw": 0}', "split_draw", "got 0; expected an integer >= 1"),
    ('{"version": 1, "split_draw": 1, "items": 2, "tuned_after_read": true}', "time",
     "got None; expected a non-empty string"),
    ("not json", "", ""),
    ('{"version": 1, "time": "t", "draw": "d", "split_draw": 1, "judge": {"name": "j", '
     '"version": "v"}, "verdict": "may gate", "items": 3, "kappa": 7, '
     '"tuned_after_read": false}', "kappa", "got 7; expected a number from -1 to 1"),
])
def test_a_bad_ledger_line_is_a_file_line_error(project: Path, line: str, field: str,
                                                message: str) -> None:
    assert _audit("--set", "held-out").exit_code in (0, 1)
    with (project / "items.ledger.jsonl").open("a") as f:
        f.write(line + "\n")
    done = _audit("--set", "held-out")
    assert done.exit_code == 2
    assert f"items.ledger.jsonl:2:{' ' + field + ':' if field else ''}" in done.output
    assert message in done.output and "Traceback" not in done.output
    assert "probe" not in done.output  # refused before the judge was asked
    assert len((project / "items.ledger.jsonl").read_text().splitlines()) == 2  # not appended


def test_another_log_under_the_same_recorded_name_is_another_judge(project: Path) -> None:
    # A judge known by name only is what its log says: the same name over another
    # model's (or another run's) verdicts, read after the first, is a tuned judge.
    golden, held = _split(project)
    for name, flip in (("first.jsonl", set()), ("second.jsonl", {sorted(held)[0]}),
                       ("golden.jsonl", {sorted(golden)[0]})):
        (project / name).write_text("".join(json.dumps(
            {"id": f"i{n}", "verdict": ("fail" if n % 2 == 0 else "pass")
             if f"i{n}" in flip else ("pass" if n % 2 == 0 else "fail")}) + "\n"
            for n in range(40)))

    def read(log: str) -> dict[str, object]:
        done = _run("judge-audit", "--judge", "house", "--items", "items.ndjson",
                    "--recorded", log, "--set", "held-out", "--format", "json")
        measured = json.loads(done.stdout)["set"]
        assert isinstance(measured, dict)
        return measured

    first = read("first.jsonl")
    assert first["tuned_after_read"] is False and first["log"]
    assert read("first.jsonl")["tuned_after_read"] is False  # the same log again
    # A verdict changed on a golden item only: the held-out read is the same.
    assert read("golden.jsonl")["log"] == first["log"]
    second = read("second.jsonl")  # one held-out verdict differs
    assert second["tuned_after_read"] is True and second["log"] != first["log"]


def test_a_redraw_may_hold_out_every_item_labelled_since(project: Path) -> None:
    golden, held = _split(project)
    _items(project / "items.ndjson", 6, start=40)
    done = _run("split", "items.ndjson", "--redraw", "--held-out", "1")
    assert done.exit_code == 0, done.output
    new_golden, new_held = _split(project)
    assert new_held == {f"i{n}" for n in range(40, 46)} and new_golden == golden | held
    document = json.loads(_audit("--set", "held-out", "--format", "json").stdout)
    assert document["agreement"]["labelled_items"] == 6


def test_items_labelled_in_a_labels_file_are_split_and_redrawn(project: Path) -> None:
    # Labelled since on the labelling page: the rows live in a labels file, not the items.
    with (project / "items.ndjson").open("a") as f:
        f.writelines(json.dumps({"id": f"new{n}", "prompt": "q", "response": "r",
                                 "label": None}) + "\n" for n in range(10))
    (project / "me.jsonl").write_text("".join(
        json.dumps({"item_id": f"new{n}", "label": "pass" if n % 2 else "fail",
                    "annotator": "me"}) + "\n" for n in range(10)))
    before = json.loads(_audit("--labels", "me.jsonl", "--format", "json").stdout)
    assert before["set"]["not_in_split"]["count"] == 10
    assert _run("split", "items.ndjson", "--redraw").exit_code == 2  # the items alone: none
    done = _run("split", "items.ndjson", "--redraw", "--labels", "me.jsonl", "--held-out", "1")
    assert done.exit_code == 0, done.output
    _, held = _split(project)
    assert held == {f"new{n}" for n in range(10)}
    after = json.loads(_audit("--labels", "me.jsonl", "--set", "held-out", "--format",
                              "json").stdout)
    assert after["agreement"]["labelled_items"] == 10 and after["set"]["missing"]["count"] == 0
    unknown = _run("split", "items.ndjson", "--redraw", "--labels", "nope.jsonl")
    assert unknown.exit_code == 2 and "nope.jsonl" in unknown.output


def test_a_read_that_cannot_be_recorded_is_not_shown(project: Path) -> None:
    (project / "elsewhere.jsonl").write_text("")
    (project / "items.ledger.jsonl").symlink_to(project / "elsewhere.jsonl")
    done = _audit("--set", "held-out")
    assert done.exit_code == 2 and "items.ledger.jsonl" in done.output
    assert "judge: rubric" not in done.stdout  # no figure of an unrecorded held-out read
    assert (project / "elsewhere.jsonl").read_text() == ""
    assert _audit("--set", "golden").exit_code in (0, 1)  # golden reads keep no ledger


def test_several_judges_side_by_side_read_the_held_out_set_into_the_ledger(
        project: Path) -> None:
    """Side by side, each judge's held-out read is recorded and judged as a single
    audit's would be: a rubric changed after the first read is flagged there too."""
    first = _run("judge-audit", "--judge", "rubric", "--judge", "steady", "--items",
                 "items.ndjson", "--no-cache", "--probes", "files", "--set", "held-out")
    assert first.exit_code in (0, 1, 4), first.output
    assert [json.loads(json.dumps(r["judge"]))["name"] for r in _ledger(project)] == [
        "rubric", "steady"]
    (project / "rubric.txt").write_text(RUBRIC.replace("1 to 5", "1 to 5, strictly"))
    second = _run("judge-audit", "--judge", "rubric", "--judge", "steady", "--items",
                  "items.ndjson", "--no-cache", "--probes", "files", "--set", "held-out",
                  "--gate", "rubric", "--format", "json")
    assert second.exit_code == 1
    assert [r["tuned_after_read"] for r in _ledger(project)] == [False, False, True, False]
