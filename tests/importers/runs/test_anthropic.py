"""Logged Anthropic Messages requests as runs: the events, what is kept, what is named."""

from __future__ import annotations

import json
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue
from metaeval.importers.runs.anthropic import read_anthropic
from metaeval.importers.runs.common import run_line
from metaeval.loaders.meta_set import parse_run
from metaeval.untrusted_json import LoadError

# A request as a harness logs it before the last call, with the reply it got.
REQUEST: JsonObject = {
    "id": "refund-7", "task_id": "refund", "model": "claude-x", "max_tokens": 1024,
    "system": [{"type": "text", "text": "You are a support agent."}],
    "messages": [
        {"role": "user", "content": "Order A-1182 arrived broken; refund it."},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should check the order.", "signature": "s"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_order",
             "input": {"order_id": "A-1182"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1",
             "content": "{\"total\": 49.99}"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_2", "name": "refund",
             "input": {"order_id": "A-1182", "amount": 49.99}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
             "content": [{"type": "text", "text": "Error: refunds are closed"}]}]}],
    "response": {"id": "msg_9", "type": "message", "role": "assistant", "model": "claude-x",
                 "content": [{"type": "text", "text": "I could not refund it yet."}],
                 "stop_reason": "end_turn", "stop_sequence": None,
                 "usage": {"input_tokens": 120, "output_tokens": 9}},
}

# The same run written by hand in the native format: the other side of the comparison.
NATIVE: list[JsonValue] = [
    {"type": "message", "role": "system", "content": "You are a support agent."},
    {"type": "message", "role": "user", "content": "Order A-1182 arrived broken; refund it."},
    {"type": "message", "role": "assistant", "content": "Checking."},
    {"type": "tool_call", "id": "toolu_1", "tool": "get_order", "args": {"order_id": "A-1182"}},
    {"type": "tool_result", "call_id": "toolu_1", "content": {"total": 49.99}},
    {"type": "tool_call", "id": "toolu_2", "tool": "refund",
     "args": {"order_id": "A-1182", "amount": 49.99}},
    {"type": "tool_result", "call_id": "toolu_2", "content": "Error: refunds are closed"},
    {"type": "message", "role": "assistant", "content": "I could not refund it yet."},
]


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
