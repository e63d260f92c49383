from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from metaeval.contract import (
    Finding,
    JsonObject,
    JsonValue,
    Message,
    Outcome,
    ToolCall,
    ToolResult,
    evaluate,
)
from metaeval.graders import build_graders
from metaeval.loaders.meta_set import MetaRun, load_meta_sets
from tests.builders import CHECKS, record

REPO = Path(__file__).resolve().parents[2]

def write(path: Path, *lines: object) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def test_three_bad_lines_are_each_named_and_the_good_ones_load(tmp_path: Path) -> None:
    bad_label = record("r3", label={"score": 2})
    bad_event = record("r4")
    bad_event["trajectory"] = [{"type": "thought", "content": "hmm"}]
    path = write(tmp_path / "set.jsonl", record("r1"), '{"id": "r2", "task": ', bad_label,
                 bad_event, record("r5"))
    result = load_meta_sets([path])
    assert [r.id for r in result.runs] == ["r1", "r5"]
    errors = [str(e) for e in result.errors]
    assert len(errors) == 3
    assert errors[0].startswith(f"{path}:2: not valid JSON")
    assert errors[1] == f"{path}:3: label.verdict: missing; expected one of 'pass', 'fail'"
    assert errors[2] == (f"{path}:4: trajectory[0].type: got 'thought'; expected one of "
                         "'message', 'tool_call', 'tool_result', 'timeout', 'error'")


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"label": {"verdict": "passed"}}, "label.verdict", "got 'passed'"),
    ({"label": {"verdict": "pass", "score": 7}}, "label.score", "got 7; expected an integer"),
    ({"label": {"verdict": "pass", "criteria": {"refund_isued": "pass"}}},
     "label.criteria.refund_isued", "no check of the task is named 'refund_isued'"),
    ({"final_sate": {}}, "final_sate", "unknown field"),
    ({"final_state": []}, "final_state", "got []; expected a JSON object"),
    ({"id": 12}, "id", "got 12; expected a non-empty string"),
    ({"task": {"id": "t", "checks": [{"grader": "max_steps", "value": -1}]}},
     "task.checks[0].value", "got -1"),
    ({"task": {"id": "t", "checks": [{"grader": "max_steps", "value": 3},
                                     {"grader": "max_steps", "value": 4}]}},
     "task.checks[1].name", "already used"),
    ({"format_version": 2}, "format_version", "got 2; expected 1"),
])
def test_each_field_error_names_field_and_value(tmp_path: Path, change: JsonObject, field: str,
                                                words: str) -> None:
    path = write(tmp_path / "set.jsonl", {**record(), **change})
    result = load_meta_sets([path])
    assert result.runs == ()
    assert [e.field for e in result.errors] == [field]
    assert words in result.errors[0].message
    assert result.errors[0].line == 1


def test_a_tool_result_must_answer_an_earlier_call(tmp_path: Path) -> None:
    orphan = record()
    orphan["trajectory"] = [{"type": "tool_result", "call_id": "c9", "content": 1}]
    result = load_meta_sets([write(tmp_path / "set.jsonl", orphan)])
    assert [str(e) for e in result.errors] == [
        f"{tmp_path / 'set.jsonl'}:1: trajectory[0].call_id: got 'c9'; expected the id of "
        "an earlier tool call"]


def test_duplicate_ids_and_missing_files(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", record("same"))
    b = write(tmp_path / "b.jsonl", record("same"))
    result = load_meta_sets([a, b, tmp_path / "nope.jsonl"])
    assert len(result.runs) == 1
    assert [str(e) for e in result.errors] == [
        f"{tmp_path / 'nope.jsonl'}: no such file or directory",
        f"{b}:1: id: got 'same'; expected an id not already used (first at {a}:1)"]


def to_chat(events: list[JsonObject]) -> list[dict[str, Any]]:
    """The same run as OpenAI chat messages: one assistant turn carries text and calls."""
    chat: list[dict[str, Any]] = []
    for e in events:
        if e["type"] == "message":
            chat.append({"role": e["role"], "content": e["content"]})
        elif e["type"] == "tool_call":
            call = {"id": e["id"], "type": "function",
                    "function": {"name": e["tool"], "arguments": json.dumps(e["args"])}}
            last = chat[-1]
            if last["role"] == "assistant" and "tool_calls" not in last:
                last["tool_calls"] = [call]
            else:
                chat.append({"role": "assistant", "content": None, "tool_calls": [call]})
        else:
            chat.append({"role": "tool", "tool_call_id": e["call_id"],
                         "content": json.dumps(e["content"])})
    return chat


def test_openai_chat_and_native_give_identical_findings(tmp_path: Path) -> None:
    native = record("native")
    messages = to_chat(native["trajectory"])  # type: ignore[arg-type]
    assert messages[3]["tool_calls"]  # one assistant turn carries text and a call
    chat = record("chat", trajectory=messages)
    result = load_meta_sets([write(tmp_path / "set.jsonl", native, chat)])
    assert result.errors == ()
    a, b = result.runs
    assert a.input.trajectory.events == b.input.trajectory.events
    findings = [[g.grade(r.input) for g in build_graders(r.input.task.checks)] for r in (a, b)]

    def decided(fs: list[Finding]) -> list[object]:
        return [(f.grader, f.outcome, f.score, [e.detail for e in f.evidence]) for f in fs]

    assert decided(findings[0]) == decided(findings[1])
    assert [f.outcome for f in findings[0]] == [Outcome.PASS] * 5
    # Evidence names each file's own positions: the chat's calls sit inside messages.
    for (native_f, chat_f) in zip(*findings, strict=True):
        for n, c in zip(native_f.evidence, chat_f.evidence, strict=True):
            assert _names_an_item(n.at, native["trajectory"]), n.at  # type: ignore[arg-type]
            assert _names_an_item(c.at, messages), c.at
    ats = {e.at for f in findings[1] for e in f.evidence}
    assert any(".tool_calls[" in at for at in ats), ats


def _names_an_item(at: str, items: list[Any]) -> bool:
    """``at`` is not a trajectory position, or names an item (and block) of ``items``."""
    found = re.fullmatch(r"trajectory\[(\d+)\](?:\.tool_calls\[(\d+)\]|\.content)?", at)
    if not at.startswith("trajectory["):
        return True
    if found is None or int(found[1]) >= len(items):
        return False
    return found[2] is None or int(found[2]) < len(items[int(found[1])].get("tool_calls", []))


def test_chat_messages_become_events(tmp_path: Path) -> None:
    chat = record(trajectory=[
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": [{"type": "text", "text": "Refund "}, {"type": "text",
                                                                          "text": "A-1"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get_order", "arguments": "{\"order_id\": \"A-1\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "not json"},
        {"type": "timeout", "detail": "60 s"},
    ])
    result = load_meta_sets([write(tmp_path / "set.jsonl", chat)])
    events = result.runs[0].input.trajectory.events
    assert events[1] == Message("user", "Refund A-1")
    assert events[2] == ToolCall("c1", "get_order", {"order_id": "A-1"})
    assert events[3] == ToolResult("c1", "not json")
    assert result.runs[0].input.trajectory.answer() is None


def test_bad_chat_arguments_are_named(tmp_path: Path) -> None:
    chat = record(trajectory=[{"role": "assistant", "tool_calls": [
        {"id": "c1", "function": {"name": "refund", "arguments": "{order_id: A-1}"}}]}])
    result = load_meta_sets([write(tmp_path / "set.jsonl", chat)])
    assert result.errors[0].field == "trajectory[0].tool_calls[0].function.arguments"
    assert "'{order_id: A-1}'" in result.errors[0].message


# The native run of ``record()`` as an Anthropic Messages log writes it: tool calls
# are tool_use blocks in the assistant turn, results tool_result blocks in a user
# turn, and the model's thinking a block that is not what it said.
ANTHROPIC: list[JsonValue] = [
    {"role": "user", "content": "Refund order A-1182 please."},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Look the order up first.", "signature": "sig"},
        {"type": "tool_use", "id": "c1", "name": "get_order", "input": {"order_id": "A-1182"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": "{\"total\": 49.99}"}]},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Let me refund that."},
        {"type": "tool_use", "id": "c2", "name": "refund",
         "input": {"order_id": "A-1182", "amount": 49.99}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c2", "content": [
        {"type": "text", "text": "{\"status\": \"issued\"}"}]}]},
    {"role": "assistant", "content": [{"type": "text", "text": "I've refunded $49.99."}]},
]


def test_anthropic_messages_and_native_give_identical_findings(tmp_path: Path) -> None:
    # Refused before with "expected a string or text parts".
    result = load_meta_sets([write(tmp_path / "set.jsonl", record("native"),
                                   record("anthropic", trajectory=ANTHROPIC))])
    assert result.errors == ()
    a, b = result.runs
    assert a.input.trajectory.events == b.input.trajectory.events
    findings = [[g.grade(r.input) for g in build_graders(r.input.task.checks)] for r in (a, b)]
    assert [(f.outcome, f.score) for f in findings[0]] == [
        (f.outcome, f.score) for f in findings[1]]
    assert [f.outcome for f in findings[0]] == [Outcome.PASS] * 5
    # Evidence points at the block in the file, not at the flattened event.
    assert b.input.trajectory.origins == tuple(
        # a string or text parts alone read as an OpenAI chat message does: the item
        f"trajectory[{i}]" if _plain(m) else f"trajectory[{i}].content[{k}]"
        for i, m in enumerate(ANTHROPIC) if isinstance(m, dict)
        for k in _event_blocks(m))


def _plain(message: dict[str, JsonValue]) -> bool:
    content = message["content"]
    assert isinstance(content, str | list)
    return isinstance(content, str) or all(
        isinstance(b, dict) and b.get("type") == "text" for b in content)


def _event_blocks(message: dict[str, JsonValue]) -> list[int]:
    """The index of each block that starts an event (thinking starts none; adjacent
    text blocks are one message), written out independently of the reader."""
    content = message["content"]
    if isinstance(content, str):
        return [0]
    assert isinstance(content, list)
    starts, in_text = [], False
    for k, block in enumerate(content):
        kind = block["type"] if isinstance(block, dict) else None
        if kind in ("text", "image", "document"):
            if not in_text:
                starts.append(k)
            in_text = True
        elif kind == "thinking":
            continue
        else:
            starts.append(k)
            in_text = False
    return starts


def test_an_unknown_anthropic_block_is_named_not_skipped(tmp_path: Path) -> None:
    bad: list[JsonValue] = [*ANTHROPIC[:5], {"role": "assistant", "content": [
        {"type": "text", "text": "Done."}, {"type": "tool_use_v9", "id": "c3"}]}]
    result = load_meta_sets([write(tmp_path / "set.jsonl", record(trajectory=bad))])
    assert result.runs == ()
    assert [(e.line, e.field) for e in result.errors] == [(1, "trajectory[5].content[1].type")]
    assert "'tool_use_v9'" in result.errors[0].message


def test_a_bad_anthropic_turn_is_one_error_not_one_more_for_each_result(tmp_path: Path
                                                                        ) -> None:
    bad: list[JsonValue] = [ANTHROPIC[0], {"role": "assistant", "content": [
        {"type": "tool_use", "id": "c1", "name": "get_order", "input": {}},
        {"type": "hologram"}]}, ANTHROPIC[2]]
    result = load_meta_sets([write(tmp_path / "set.jsonl", record(trajectory=bad))])
    assert [e.field for e in result.errors] == ["trajectory[1].content[1].type"]


def test_a_tool_result_in_an_assistant_turn_is_refused(tmp_path: Path) -> None:
    bad: list[JsonValue] = [ANTHROPIC[0], {"role": "assistant", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": "ok"}]}]
    result = load_meta_sets([write(tmp_path / "set.jsonl", record(trajectory=bad))])
    assert result.errors[0].field == "trajectory[1].content[0].type"
    assert "'tool_result' in the assistant turn" in result.errors[0].message


def test_a_runs_metadata_is_an_object_kept_out_of_grading(tmp_path: Path) -> None:
    # What an importer keeps of a harness's run (model, epoch, scores) was an
    # unknown field before, so an imported run could not load.
    result = load_meta_sets([write(tmp_path / "set.jsonl",
                                   record("kept", metadata={"model": "m", "epoch": 2}),
                                   record("bad", metadata=["m"]))])
    assert [r.id for r in result.runs] == ["kept"]
    assert [(e.line, e.field) for e in result.errors] == [(2, "metadata")]
    assert "expected a JSON object" in result.errors[0].message


def starter_run(run_id: str) -> MetaRun:
    runs = {r.id: r for r in load_meta_sets([REPO / "meta_sets"]).runs}
    return runs[run_id]


def test_the_starter_meta_set_loads_cleanly() -> None:
    result = load_meta_sets([REPO / "meta_sets" / "support_agent.jsonl"])
    assert result.errors == ()
    assert len(result.runs) >= 10
    verdicts = {r.label.verdict for r in result.runs}
    assert verdicts == {Outcome.PASS, Outcome.FAIL}


def test_a_timeout_after_the_user_message_is_unscored_not_passed_nor_failed() -> None:
    x = record("t", trajectory=[
        {"type": "message", "role": "user", "content": "Refund A-1182."},
        {"type": "timeout", "detail": "60 s"}],
        final_state={"refunds": [{"order_id": "A-1182"}]})
    x["task"] = {"id": "refund", "checks": [
        {"grader": "answer_contains", "text": "refund"},
        {"grader": "state_includes", "path": "refunds", "match": {"order_id": "A-1182"}}]}
    run = parse_one(x)
    graders = build_graders(run.input.task.checks)
    finding = graders[0].grade(run.input)
    assert finding.outcome is Outcome.UNSCORED
    assert finding.reason == "no answer in the trace"
    assert evaluate(run.input, graders).outcome is Outcome.UNSCORED


def test_a_claimed_refund_in_the_starter_set_fails_state_includes() -> None:
    run = starter_run("claimed-refund-01")
    assert "refund has been processed" in (run.input.trajectory.answer() or "")
    graders = {g.name: g for g in build_graders(run.input.task.checks)}
    assert graders["refund_issued"].grade(run.input).outcome is Outcome.FAIL
    assert evaluate(run.input, list(graders.values())).outcome is Outcome.FAIL


def parse_one(raw: JsonObject) -> MetaRun:
    from metaeval.loaders.meta_set import parse_run

    run, problems = parse_run(raw, "test:1")
    assert problems == [] and run is not None
    return run


CALL = {"type": "tool_call", "id": "c1", "tool": "get_order", "args": {"order_id": "A-1182"}}


@pytest.mark.parametrize(("event", "field", "hint"), [
    # The typo that validated clean and then failed a run people passed: no args at all.
    ({"type": "tool_call", "id": "c1", "tool": "get_order", "arg": {"order_id": "A-1182"}},
     "trajectory[1].arg", "; did you mean 'args'?"),
    ({"type": "message", "role": "assistant", "contents": "Done."}, "trajectory[1].contents",
     "; did you mean 'content'?"),
    ({"type": "timeout", "details": "60 s"}, "trajectory[1].details",
     "; did you mean 'detail'?"),
    ({"type": "message", "role": "assistant", "content": "Done.", "timestamp": 3},
     "trajectory[1].timestamp", ""),
    ({"role": "assistant", "content": "Done.", "reasoning": "..."}, "trajectory[1].reasoning",
     ""),
    ({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "argument": "{}"}}]},
     "trajectory[1].tool_calls[0].function.argument", "; did you mean 'arguments'?"),
    ({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "typ": "function", "function": {"name": "f", "arguments": "{}"}}]},
     "trajectory[1].tool_calls[0].typ", "; did you mean 'type'?"),
])
def test_an_unknown_key_in_an_event_is_an_error_with_a_hint(tmp_path: Path, event: JsonObject,
                                                           field: str, hint: str) -> None:
    run = record(trajectory=[{"type": "message", "role": "user", "content": "Refund A-1182."},
                             event])
    result = load_meta_sets([write(tmp_path / "set.jsonl", run)])
    assert result.runs == ()
    assert [(e.line, e.field) for e in result.errors] == [(1, field)]
    message = result.errors[0].message
    assert message.startswith("unknown field; expected one of ")
    assert message.endswith(hint) if hint else "did you mean" not in message


def test_every_key_of_the_openai_chat_format_is_accepted(tmp_path: Path) -> None:
    chat = record(trajectory=[
        {"role": "system", "content": "Be brief.", "name": "policy"},
        {"role": "user", "content": "Refund A-1182.", "name": "customer"},
        {"role": "assistant", "content": None, "refusal": None, "annotations": [],
         "audio": None, "function_call": None, "tool_calls": [
             {"id": "c1", "type": "function",
              "function": {"name": "get_order", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{}", "name": "get_order"},
        {"role": "assistant", "content": "Refunded."}])
    result = load_meta_sets([write(tmp_path / "set.jsonl", chat)])
    assert result.errors == ()
    assert result.runs[0].input.trajectory.answer() == "Refunded."


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"final_sate": {}}, "final_sate", "unknown field; expected one of category, final_state, "
     "format_version, id, initial_state, label, metadata, task, trajectory; did you mean "
     "'final_state' or 'initial_state'?"),
    ({"label": {"verdict": "pass", "criteria": {"refund_isued": "pass"}}},
     "label.criteria.refund_isued", "; did you mean 'refund_issued'?"),
    ({"task": {"id": "t", "checks": CHECKS, "critera": {}}}, "task.critera",
     "; did you mean 'criteria'?"),
    ({"label": {"verdict": "pass", "rational": "fine"}}, "label.rational",
     "; did you mean 'rationale'?"),
    ({"task": {"id": "t", "checks": [{"grader": "no_tool_called", "tools": "refund"}]}},
     "task.checks[0].tools", "; did you mean 'tool'?"),
])
def test_a_misspelt_key_at_any_level_gets_a_did_you_mean(tmp_path: Path, change: JsonObject,
                                                        field: str, words: str) -> None:
    result = load_meta_sets([write(tmp_path / "set.jsonl", {**record(), **change})])
    assert [e.field for e in result.errors] == [field]
    assert words in result.errors[0].message


def test_a_run_without_a_trajectory_is_refused_and_an_empty_one_is_not(tmp_path: Path) -> None:
    missing = record("missing")
    del missing["trajectory"]
    empty = record("empty", trajectory=[])
    result = load_meta_sets([write(tmp_path / "set.jsonl", missing, empty)])
    assert [str(e) for e in result.errors] == [
        f"{tmp_path / 'set.jsonl'}:1: trajectory: missing; expected a list of events"]
    assert [r.id for r in result.runs] == ["empty"]


def test_a_bad_tool_call_is_one_error_not_one_more_for_its_result(tmp_path: Path) -> None:
    native = record("native")
    native["trajectory"][1]["arg"] = native["trajectory"][1].pop("args")  # type: ignore
    chat = record("chat", trajectory=to_chat(record()["trajectory"]))  # type: ignore[arg-type]
    chat["trajectory"][1]["tool_calls"][0]["function"]["argument"] = "{}"  # type: ignore
    orphan = record("orphan")
    orphan["trajectory"][1]["id"] = "c9"  # type: ignore
    result = load_meta_sets([write(tmp_path / "set.jsonl", native, chat, orphan)])
    assert [(e.line, e.field) for e in result.errors] == [
        (1, "trajectory[1].arg"), (2, "trajectory[1].tool_calls[0].function.argument"),
        (3, "trajectory[2].call_id")]  # a good call under another id answers nothing


@pytest.mark.parametrize(("task", "criteria", "fields"), [
    # A grader refused by allowed_modules: one error, not a second for the label
    # that names its check ("no check ... expected one of none").
    ({"id": "t", "checks": [{"grader": "evilpkg.graders:exact", "name": "exact"}]},
     {"exact": "pass"}, ["task.checks[0].grader"]),
    ({"id": "t", "checks": [{"grader": "max_steps", "value": 3},
                            {"grader": "max_steps", "value": -1, "name": "short"}]},
     {"short": "pass", "max_steps": "pass"}, ["task.checks[1].value"]),
    # A task not read at all says so once.
    ([], {"exact": "pass"}, ["task"]),
    # With every check read, a criterion naming none of them is still an error.
    ({"id": "t", "checks": [{"grader": "max_steps", "value": 3}]}, {"exact": "pass"},
     ["label.criteria.exact"]),
])
def test_a_refused_check_is_one_error_not_a_cascade(
        tmp_path: Path, task: JsonValue, criteria: JsonObject, fields: list[str]) -> None:
    label: JsonObject = {"verdict": "pass", "criteria": criteria}
    line: JsonObject = {**record(), "task": task, "label": label}
    result = load_meta_sets([write(tmp_path / "set.jsonl", line)])
    assert [e.field for e in result.errors] == fields
    assert not any("the task has no checks" in e.message for e in result.errors)
