"""OpenTelemetry GenAI spans as runs, on OTLP JSON that the OpenTelemetry SDK wrote:
the spans made by opentelemetry-util-genai (the semantic conventions' own helper),
exported by the SDK's OTLP JSON file exporter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util.genai.handler import TelemetryHandler
from opentelemetry.util.genai.types import (
    InputMessage,
    MessagePart,
    OutputMessage,
    TextPart,
    ToolCallRequestPart,
    ToolCallResponsePart,
)

from metaeval.commands.import_runs import Imported, ImportRequest, import_runs
from metaeval.contract import JsonValue
from tests.importers.runs.conftest import CAPTURE, export

# The run the spans below record, written by hand in the native format.
NATIVE: list[JsonValue] = [
    {"type": "message", "role": "system", "content": "You are a support agent."},
    {"type": "message", "role": "user", "content": "Refund order A-1182."},
    {"type": "message", "role": "assistant", "content": "Let me look it up."},
    {"type": "tool_call", "id": "c1", "tool": "get_order", "args": {"order_id": "A-1182"}},
    {"type": "tool_result", "call_id": "c1", "content": {"total": 49.99}},
    {"type": "tool_call", "id": "c2", "tool": "refund", "args": {"order_id": "A-1182"}},
    {"type": "tool_result", "call_id": "c2", "content": "Error: refunds are closed"},
    {"type": "message", "role": "assistant", "content": "I could not refund it yet."},
]


def agent_run(handler: TelemetryHandler, conversation: str) -> None:
    """One agent run as an instrumented app records it: a chat call asks for a
    tool, the tool runs, the next chat call re-sends the history with the result."""
    user = InputMessage(role="user", parts=[TextPart(content="Refund order A-1182.")])
    ask: list[MessagePart] = [
        TextPart(content="Let me look it up."),
        ToolCallRequestPart(arguments={"order_id": "A-1182"}, name="get_order", id="c1")]
    with handler.invoke_local_agent(agent_name="support", conversation_id=conversation):
        with handler.inference("anthropic", request_model="claude-x") as chat:
            chat.system_instruction = [TextPart(content="You are a support agent.")]
            chat.input_messages = [user]
            chat.output_messages = [OutputMessage(role="assistant", parts=list(ask),
                                                  finish_reason="tool_call")]
        with handler.tool("get_order") as call:
            call.tool_call_id = "c1"
            call.arguments = {"order_id": "A-1182"}
            call.tool_result = {"total": 49.99}
        with handler.inference("anthropic", request_model="claude-x") as chat:
            chat.input_messages = [
                user, InputMessage(role="assistant", parts=list(ask)),
                InputMessage(role="tool", parts=[ToolCallResponsePart(
                    response="{\"total\": 49.99}", id="c1")])]
            chat.output_messages = [OutputMessage(role="assistant", parts=[
                ToolCallRequestPart(arguments={"order_id": "A-1182"}, name="refund",
                                    id="c2")], finish_reason="tool_call")]
        with pytest.raises(RuntimeError), handler.tool("refund") as call:
            call.tool_call_id = "c2"
            call.arguments = {"order_id": "A-1182"}
            raise RuntimeError("refunds are closed")
        with handler.inference("anthropic", request_model="claude-x") as chat:
            chat.input_messages = [user, InputMessage(role="assistant", parts=list(ask))]
            chat.output_messages = [OutputMessage(role="assistant", parts=[
                TextPart(content="I could not refund it yet.")], finish_reason="stop")]


def imported(*paths: Path) -> Imported:
    return import_runs(ImportRequest("otel", paths))


def test_a_trace_of_genai_spans_becomes_the_native_run(provider: TracerProvider,
                                                        tmp_path: Path) -> None:
    export(provider, tmp_path / "spans.jsonl")
    agent_run(TelemetryHandler(tracer_provider=provider), "conv-1")
    provider.force_flush()
    result = imported(tmp_path / "spans.jsonl")
    assert result.errors == ()
    (line,) = result.lines
    assert line["trajectory"] == NATIVE
    assert (line["id"], line["task"]) == ("conv-1", {"id": "conv-1", "instruction":
                                                     "Refund order A-1182.", "criteria": {}})
    metadata = line["metadata"]
    assert isinstance(metadata, dict)
    assert (metadata["model"], metadata["agent"], metadata["provider"]) == (
        "claude-x", "support", "anthropic")
    assert metadata["tool_errors"] == ["c2"]


def test_one_document_and_json_lines_give_the_same_runs(provider: TracerProvider,
                                                         tmp_path: Path) -> None:
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    export(provider, tmp_path / "spans.jsonl")
    agent_run(TelemetryHandler(tracer_provider=provider), "conv-1")
    document = tmp_path / "export.json"
    document.write_text(json.dumps(encode_spans(memory.get_finished_spans()).to_dict(),
                                   indent=2))
    assert imported(document).lines == imported(tmp_path / "spans.jsonl").lines
    assert len(imported(document).lines) == 1


def test_traces_are_runs_and_spans_without_genai_are_counted(provider: TracerProvider,
                                                            tmp_path: Path) -> None:
    export(provider, tmp_path / "spans.jsonl")
    handler = TelemetryHandler(tracer_provider=provider)
    tracer = provider.get_tracer("shop")
    agent_run(handler, "conv-1")
    with tracer.start_as_current_span("GET /orders"):  # a trace of its own: not a run
        pass
    with tracer.start_as_current_span("request"):  # a GenAI trace with one more span
        agent_run(handler, "conv-2")
    result = imported(tmp_path / "spans.jsonl")
    assert result.errors == ()
    assert [line["id"] for line in result.lines] == ["conv-1", "conv-2"]
    second = result.lines[1]["metadata"]
    assert isinstance(second, dict) and second["other_spans"] == 1
    first = result.lines[0]["metadata"]
    assert isinstance(first, dict) and "other_spans" not in first


def test_spans_without_captured_content_are_an_error_naming_the_trace(
        provider: TracerProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    export(provider, tmp_path / "spans.jsonl")
    agent_run(TelemetryHandler(tracer_provider=provider), "conv-1")
    monkeypatch.setenv(CAPTURE, "NO_CONTENT")
    agent_run(TelemetryHandler(tracer_provider=provider), "conv-2")
    result = imported(tmp_path / "spans.jsonl")
    assert [line["id"] for line in result.lines] == ["conv-1"]
    (error,) = result.errors
    assert error.field.startswith("trace ") and error.field.endswith(
        "('chat claude-x').gen_ai.input.messages")
    assert CAPTURE in error.message


def test_a_bad_line_and_an_unknown_part_are_named(provider: TracerProvider,
                                                  tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    export(provider, spans)
    handler = TelemetryHandler(tracer_provider=provider)
    agent_run(handler, "conv-1")
    with handler.inference("anthropic", request_model="claude-x") as chat:
        chat.input_messages = [InputMessage(role="user", parts=[TextPart(content="hi")])]
        chat.output_messages = [OutputMessage(role="assistant", parts=[
            TextPart(content="hello")], finish_reason="length")]
    # That reply's part given a type no convention has, as a newer SDK might write.
    text = spans.read_text().replace('\\"type\\":\\"text\\"}],\\"finish_reason\\":\\"length\\"',
                                     '\\"type\\":\\"hologram\\"}],\\"finish_reason\\":\\"length\\"')
    assert "hologram" in text
    spans.write_text(text + "{\"resourceSpans\": 3}\n")
    result = imported(spans)
    assert [line["id"] for line in result.lines] == ["conv-1"]
    fields = [(e.line, e.field) for e in result.errors]
    lines = len(text.splitlines())
    assert (lines + 1, "resourceSpans") in fields
    bad_part = [e for e in result.errors if e.field.endswith(".parts[0].type")]
    assert len(bad_part) == 1 and "got 'hologram'" in bad_part[0].message


def test_an_older_conventions_trace_is_named_not_passed_over(provider: TracerProvider,
                                                             tmp_path: Path) -> None:
    export(provider, tmp_path / "spans.jsonl")
    tracer = provider.get_tracer("legacy")
    with tracer.start_as_current_span("openai.chat") as span:  # per-index prompt attributes
        span.set_attributes({"gen_ai.system": "openai", "gen_ai.prompt.0.role": "user",
                             "gen_ai.prompt.0.content": "Refund A-1182."})
    with tracer.start_as_current_span("GET /health"):  # no gen_ai.*: not a run, no error
        pass
    result = imported(tmp_path / "spans.jsonl")
    assert result.lines == ()
    (error,) = result.errors
    assert error.field.endswith("('openai.chat')")
    assert "'gen_ai.prompt.0.content'" in error.message and "gen_ai.operation.name" in error.message
