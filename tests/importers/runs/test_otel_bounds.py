"""OTLP JSON no SDK writes but a file may hold: each bad record is one error naming its
file and line (or trace), never a traceback, and every other trace is still read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metaeval.commands.import_runs import Imported, ImportRequest, import_runs
from metaeval.contract import JsonObject, JsonValue
from tests.importers.runs.otlp import chat, document, span, text, value, write

GOOD = document(chat("s1", 1, 2, [text("user", "q")], [text("assistant", "a")],
                     trace="good", gen_ai__conversation__id="conv-good"))


def imported(path: Path) -> Imported:
    return import_runs(ImportRequest("otel", (path,)))


def events(line: JsonObject) -> list[JsonObject]:
    trajectory = line["trajectory"]
    assert isinstance(trajectory, list)
    return [e for e in trajectory if isinstance(e, dict)]


def metadata(line: JsonObject) -> JsonObject:
    found = line["metadata"]
    assert isinstance(found, dict)
    return found


def with_attribute(key: str, raw: JsonValue) -> JsonObject:
    """A trace whose inference span has attribute ``key`` in OTLP form ``raw``."""
    bad = chat("s2", 1, 2, [text("user", "q")], [text("assistant", "a")], trace="bad")
    attributes = bad["attributes"]
    assert isinstance(attributes, list)
    attributes.append({"key": key, "value": raw})
    return document(bad)


@pytest.mark.parametrize("raw", ["²", "9" * 5000, "-", "1_000", " 1", "9223372036854775808"])
def test_an_int_value_that_is_no_int64_is_an_error_on_its_line(tmp_path: Path,
                                                              raw: str) -> None:
    result = imported(write(tmp_path / "s.jsonl", GOOD,
                            with_attribute("gen_ai.usage.input_tokens", {"intValue": raw})))
    assert [line["id"] for line in result.lines] == ["conv-good"]
    (error,) = result.errors
    assert (error.line, error.field) == (2, "resourceSpans[0].scopeSpans[0].spans[0]"
                                         ".attributes.gen_ai.usage.input_tokens")
    assert "expected an integer" in error.message


def test_an_int64_at_its_bounds_is_read(tmp_path: Path) -> None:
    result = imported(write(tmp_path / "s.jsonl", with_attribute(
        "gen_ai.usage.input_tokens", {"intValue": "-9223372036854775808"})))
    assert result.errors == () and len(result.lines) == 1


@pytest.mark.parametrize("raw", [
    {"arrayValue": {"values": [{"stringValue": "c"}]}},
    {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "c"}}]}},
    {"stringValue": ""}, {"boolValue": True}])
def test_a_conversation_id_that_is_no_string_is_an_error_naming_the_trace(
        tmp_path: Path, raw: JsonObject) -> None:
    result = imported(write(tmp_path / "s.jsonl", GOOD,
                            with_attribute("gen_ai.conversation.id", raw)))
    assert [line["id"] for line in result.lines] == ["conv-good"]
    (error,) = result.errors
    assert error.line == 2
    assert error.field == "trace bad: span s2 ('chat m').gen_ai.conversation.id"
    assert "expected a non-empty string" in error.message


@pytest.mark.parametrize(("message", "field"), [
    ({"role": ["user"], "parts": []}, "gen_ai.input.messages[0].role"),
    ({"role": {}, "parts": []}, "gen_ai.input.messages[0].role"),
    ({"role": "user", "parts": [{"type": {"a": 1}}]}, "gen_ai.input.messages[0].parts[0].type"),
    ({"role": "user", "parts": [{"type": ["text"]}]}, "gen_ai.input.messages[0].parts[0].type")])
def test_a_role_or_part_type_that_is_no_string_is_an_error(tmp_path: Path, message: JsonObject,
                                                           field: str) -> None:
    bad = document(chat("s2", 1, 2, [message], [text("assistant", "a")], trace="bad"))
    result = imported(write(tmp_path / "s.jsonl", GOOD, bad))
    assert [line["id"] for line in result.lines] == ["conv-good"]
    (error,) = result.errors
    assert (error.line, error.field) == (2, f"trace bad: span s2 ('chat m').{field}")
    assert error.message.startswith("got ")


def test_spans_of_equal_times_listed_out_of_order_give_each_message_once(tmp_path: Path
                                                                         ) -> None:
    # Two calls that start and end in the same nanosecond (a coarse clock), the later
    # one listed first: the second re-sends the first's exchange as its history.
    first = chat("s1", 5, 5, [text("user", "q1")], [text("assistant", "a1")])
    second = chat("s2", 5, 5, [text("user", "q1"), text("assistant", "a1"), text("user", "q2")],
                  [text("assistant", "a2")])
    result = imported(write(tmp_path / "s.jsonl", document(second, first)))
    assert result.errors == ()
    (line,) = result.lines
    said = [(e["role"], e["content"]) for e in events(line)]
    assert said == [("user", "q1"), ("assistant", "a1"), ("user", "q2"), ("assistant", "a2")]


def test_spans_listed_in_order_are_read_in_that_order(tmp_path: Path) -> None:
    first = chat("s1", 5, 5, [text("user", "q1")], [text("assistant", "a1")])
    second = chat("s2", 5, 5, [text("user", "q1"), text("assistant", "a1"), text("user", "q2")],
                  [text("assistant", "a2")])
    (line,) = imported(write(tmp_path / "s.jsonl", document(first, second))).lines
    assert len(events(line)) == 4


def test_a_byte_that_is_not_utf8_is_named_by_its_line(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", GOOD)
    bad = json.dumps(document(chat("s2", 1, 2, [text("user", "q@")], [text("assistant", "a")],
                                   trace="bad"))).encode().replace(b"q@", b"q\xff")
    path.write_bytes(path.read_bytes() + bad + b"\n")
    result = imported(path)
    assert [line["id"] for line in result.lines] == ["conv-good"]
    (error,) = result.errors
    assert error.line == 2 and "not UTF-8: byte 0xff" in error.message


def test_a_pretty_printed_document_with_a_nan_is_one_error_naming_the_nan(tmp_path: Path
                                                                          ) -> None:
    path = tmp_path / "export.json"
    text_ = json.dumps(with_attribute("gen_ai.request.temperature", {"doubleValue": 0.5}),
                       indent=2).replace("0.5", "NaN")
    path.write_text(text_)
    result = imported(path)
    assert result.lines == ()
    (error,) = result.errors
    assert error.line == 0 and "NaN" in error.message


def test_an_older_conventions_span_is_named_once_with_what_it_has(tmp_path: Path) -> None:
    older: JsonObject = {"traceId": "t1", "spanId": "s1", "name": "openai.chat",
                         "attributes": [{"key": "gen_ai.prompt.0.content",
                                         "value": value("hi")}]}
    (error,) = imported(write(tmp_path / "s.jsonl", document(older))).errors
    assert error.message.startswith("has 'gen_ai.prompt.0.content' but no "
                                    "'gen_ai.operation.name'")
    # The attribute it lacks is not among those it is said to have.
    assert error.message.count("gen_ai.operation.name") == 1


def test_an_operation_name_that_is_no_string_is_an_error_not_an_older_trace(
        tmp_path: Path) -> None:
    odd = span("s1", "chat", 1, 2)
    attributes = odd["attributes"]
    assert isinstance(attributes, list)
    attributes[0] = {"key": "gen_ai.operation.name", "value": {"intValue": "3"}}
    (error,) = imported(write(tmp_path / "s.jsonl", document(odd))).errors
    assert error.field.endswith(".gen_ai.operation.name")
    assert "got 3; expected" in error.message


def test_two_tool_call_parts_of_one_id_are_an_error(tmp_path: Path) -> None:
    call: JsonObject = {"type": "tool_call", "id": "c1", "name": "refund", "arguments": {}}
    other: JsonObject = {**call, "name": "cancel"}
    bad = document(chat("s2", 1, 2, [text("user", "q")],
                        [{"role": "assistant", "parts": [call, other]}], trace="bad"))
    result = imported(write(tmp_path / "s.jsonl", GOOD, bad))
    assert [line["id"] for line in result.lines] == ["conv-good"]
    (error,) = result.errors
    assert error.field.endswith("gen_ai.output.messages[0].parts[1].id")
    assert "'c1'" in error.message


def test_the_same_call_resent_in_a_later_history_is_not_a_repeat(tmp_path: Path) -> None:
    call: JsonObject = {"type": "tool_call", "id": "c1", "name": "refund", "arguments": {}}
    answer: JsonObject = {"type": "tool_call_response", "id": "c1", "response": "ok"}
    asked: JsonObject = {"role": "assistant", "parts": [call]}
    first = chat("s1", 1, 2, [text("user", "q")], [asked])
    second = chat("s2", 3, 4, [text("user", "q"), asked, {"role": "tool", "parts": [answer]}],
                  [text("assistant", "done")])
    result = imported(write(tmp_path / "s.jsonl", document(first, second)))
    assert result.errors == ()
    assert [e["type"] for e in events(result.lines[0])] == [
        "message", "tool_call", "tool_result", "message"]


@pytest.mark.parametrize("code", [2, "STATUS_CODE_ERROR"])
def test_a_failed_tool_span_is_an_error_whichever_way_its_code_is_written(
        tmp_path: Path, code: JsonValue) -> None:
    tool = span("s2", "execute_tool", 3, 4, {"gen_ai.tool.call.id": "c1",
                                             "gen_ai.tool.name": "refund"})
    tool["status"] = {"code": code, "message": "closed"}
    asked: JsonObject = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "refund", "arguments": {}}]}
    (line,) = imported(write(tmp_path / "s.jsonl", document(
        chat("s1", 1, 2, [text("user", "q")], [asked]), tool))).lines
    assert metadata(line)["tool_errors"] == ["c1"]
    assert events(line)[-1] == {
        "type": "tool_result", "call_id": "c1", "content": "Error: closed"}


@pytest.mark.parametrize("code", [1, "STATUS_CODE_OK", 0, "STATUS_CODE_UNSET"])
def test_a_tool_span_that_did_not_fail_is_no_tool_error(tmp_path: Path,
                                                        code: JsonValue) -> None:
    tool = span("s2", "execute_tool", 3, 4, {"gen_ai.tool.call.id": "c1",
                                             "gen_ai.tool.name": "refund",
                                             "gen_ai.tool.call.result": "ok"})
    tool["status"] = {"code": code}
    asked: JsonObject = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "refund", "arguments": {}}]}
    (line,) = imported(write(tmp_path / "s.jsonl", document(
        chat("s1", 1, 2, [text("user", "q")], [asked]), tool))).lines
    assert "tool_errors" not in metadata(line)


@pytest.mark.parametrize("code", ["STATUS_CODE_BROKEN", 7, True, 2.0])
def test_a_status_code_of_no_known_value_is_an_error(tmp_path: Path, code: JsonValue) -> None:
    tool = span("s2", "execute_tool", 3, 4, {"gen_ai.tool.call.id": "c1",
                                             "gen_ai.tool.name": "refund"})
    tool["status"] = {"code": code}
    (error,) = imported(write(tmp_path / "s.jsonl", document(tool))).errors
    assert error.field.endswith("status.code") and "STATUS_CODE_ERROR" in error.message


@pytest.mark.parametrize(("attributes", "field"), [
    ({"gen_ai.tool.call.id": "c1"}, "gen_ai.tool.name"),
    ({"gen_ai.tool.call.id": "c1", "gen_ai.tool.name": ""}, "gen_ai.tool.name"),
    ({"gen_ai.tool.name": "refund"}, "gen_ai.tool.call.id")])
def test_a_tool_span_without_an_id_or_name_is_an_error(tmp_path: Path, attributes: JsonObject,
                                                       field: str) -> None:
    tool = span("s2", "execute_tool", 3, 4, attributes)
    (error,) = imported(write(tmp_path / "s.jsonl", document(tool))).errors
    assert error.field.endswith(field)


def test_json_lines_whose_first_line_is_bad_are_still_read_a_line_at_a_time(
        tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"resourceSpans": [\n' + json.dumps(GOOD) + "\n")
    result = imported(path)
    assert [line["id"] for line in result.lines] == ["conv-good"]
    assert [(e.line, e.message.startswith("not valid JSON")) for e in result.errors] == [
        (1, True)]


def test_a_trace_whose_spans_are_spread_over_lines_and_files_is_one_run(tmp_path: Path
                                                                        ) -> None:
    # Two traces interleaved (as a batch exporter writes runs made at once), one of
    # them ending in a second file.
    a1 = chat("a1", 1, 2, [text("user", "qa")], [text("assistant", "aa")], trace="A")
    b1 = chat("b1", 1, 2, [text("user", "qb")], [text("assistant", "ab")], trace="B")
    a2 = chat("a2", 3, 4, [text("user", "qa"), text("assistant", "aa"), text("user", "qa2")],
              [text("assistant", "aa2")], trace="A")
    first = write(tmp_path / "1.jsonl", document(a1), document(b1))
    second = write(tmp_path / "2.jsonl", document(a2))
    result = import_runs(ImportRequest("otel", (first, second)))
    assert result.errors == ()
    assert [(line["id"], len(events(line))) for line in result.lines] == [("B", 2), ("A", 4)]
