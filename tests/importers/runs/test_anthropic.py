"""Logged Anthropic Messages requests as runs: the events, what is kept, what is named."""

from __future__ import annotations

import json
from pathlib import Path

from metaeval.contract import JsonObject
from metaeval.importers.runs.anthropic import read_anthropic
from metaeval.importers.runs.common import run_line
from metaeval.loaders.meta_set import parse_run
from metaeval.untrusted_json import LoadError
from tests.importers.runs.conftest import NATIVE, REQUEST


def read(tmp_path: Path, *lines: object) -> tuple[list[JsonObject], list[LoadError]]:
    path = tmp_path / "log.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    errors: list[LoadError] = []
    return [run_line(r) for r in read_anthropic([path], errors)], errors


def test_a_logged_request_and_its_reply_become_the_native_run(tmp_path: Path) -> None:
    (line,), errors = read(tmp_path, REQUEST)
    assert errors == []
    assert line["trajectory"] == NATIVE
    assert line["id"] == "refund-7"
    assert line["task"] == {"id": "refund", "instruction":
                            "Order A-1182 arrived broken; refund it.", "criteria": {}}
    assert line["metadata"] == {"model": "claude-x", "stop_reason": "end_turn",
                                "usage": {"input_tokens": 120, "output_tokens": 9},
                                "tool_errors": ["toolu_2"]}
    # The line is a meta-set run once a label is joined to it.
    run, problems = parse_run({**line, "label": {"verdict": "fail"}}, "x:1")
    assert problems == [] and run is not None
    assert run.input.trajectory.answer() == "I could not refund it yet."


def test_a_line_without_an_id_is_named_by_its_file_and_line(tmp_path: Path) -> None:
    bare = {"messages": [{"role": "user", "content": "hi"}]}
    (first, second), errors = read(tmp_path, bare, bare)
    assert errors == []
    assert (first["id"], second["id"]) == ("log-1", "log-2")


def test_every_bad_line_is_named_and_the_good_ones_still_load(tmp_path: Path) -> None:
    lines, errors = read(
        tmp_path,
        {**REQUEST, "mesages": []},
        {"messages": [{"role": "user", "content": [{"type": "audio", "data": "x"}]}]},
        {"messages": [{"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "refund", "input": "A-1"}]}]},
        "not json",
        {**REQUEST, "id": "fine"})
    assert [line["id"] for line in lines] == ["fine"]
    assert [(e.line, e.field) for e in errors] == [
        (1, "mesages"), (2, "messages[0].content[0].type"),
        (3, "messages[0].content[0].input"), (4, "")]
    assert "did you mean 'messages'?" in errors[0].message
    assert "got 'audio'" in errors[1].message
    assert "got 'A-1'; expected an object" in errors[2].message


def test_a_role_or_block_type_that_is_no_string_is_an_error_on_its_line(tmp_path: Path
                                                                         ) -> None:
    lines, errors = read(
        tmp_path,
        {"messages": [{"role": {}, "content": "hi"}]},
        {"messages": [{"role": [], "content": "hi"}]},
        {"messages": [{"role": "user", "content": [{"type": {"a": 1}}]}]},
        {"messages": [{"role": "user", "content": [{"type": ["text"]}]}]},
        {**REQUEST, "id": "fine"})
    assert [line["id"] for line in lines] == ["fine"]
    assert [(e.line, e.field) for e in errors] == [
        (1, "messages[0].role"), (2, "messages[0].role"),
        (3, "messages[0].content[0].type"), (4, "messages[0].content[0].type")]
    assert all(e.message.startswith("got ") for e in errors)


def test_a_meta_set_line_with_such_a_message_is_a_problem_not_a_traceback() -> None:
    messages: list[JsonObject] = [{"role": {}, "content": [{"type": "tool_use"}]},
                                  {"role": "user", "content": [{"type": {"a": 1}}]},
                                  {"role": [], "content": [{"type": "thinking"}]}]
    for message in messages:
        line: JsonObject = {"id": "r", "task": {"id": "t"}, "trajectory": [message],
                            "label": {"verdict": "pass"}}
        run, problems = parse_run(line, "x:1")
        assert run is None and problems
        assert problems[0].field.startswith("trajectory[0]")


def test_default_ids_of_files_of_one_name_in_two_folders_differ(tmp_path: Path) -> None:
    bare = json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n"
    for folder in ("d1", "d2"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "s.jsonl").write_text(bare)
    errors: list[LoadError] = []
    runs = list(read_anthropic([tmp_path / "d1" / "s.jsonl", tmp_path / "d2" / "s.jsonl",
                                tmp_path / "d1" / "s.jsonl"], errors))
    assert errors == []
    assert [r.id for r in runs] == ["d1/s-1", "d2/s-1", "d1/s-1"]


def test_validate_names_such_a_message_in_a_meta_set_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from metaeval.cli.app import main

    good: JsonObject = {"id": "ok", "task": {"id": "t"}, "label": {"verdict": "pass"},
                        "trajectory": [{"role": "user", "content": "hi"}]}
    bad: JsonObject = {**good, "id": "bad", "trajectory": [
        {"role": {}, "content": [{"type": "tool_use"}]}]}
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    done = CliRunner().invoke(main, ["validate", str(path)])
    assert done.exit_code == 2, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)  # no traceback
    assert f"{path}:2: trajectory[0].role: got {{}}" in done.output
