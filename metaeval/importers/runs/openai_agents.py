"""OpenAI Agents SDK traces to runs: one trace (one ``Runner.run``), one run.

Reads the items the SDK's tracing exports (``Trace.export()`` and
``Span.export()``: ``{"object": "trace"}`` and ``{"object": "trace.span",
"span_data": ...}``), one a line, as a ``TracingExporter`` given to the SDK's
``BatchTraceProcessor`` writes them, or a line holding a list of them or the
ingest payload ``{"data": [...]}``. The conversation is rebuilt from the
``generation`` spans (the chat messages each model call was sent and returned):
the first call's messages, then what each later call added after its last
assistant message, and every call's output. ``function`` spans give a result no
later call re-sent; ``guardrail`` spans with ``triggered`` and an ``agent`` span's
error (``Max turns exceeded``) say how the run ended. ``group_id`` is the
conversation several traces share. The mapping is docs/import/openai-agents.md.
The traces are held until the files are read (the SDK writes a trace's spans in
the order they end, the trace's first span last). A span of a type not known
here, or a model call whose messages were not recorded, is an error naming the
trace and span, never skipped. Never imports the SDK.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.contract import Error, Event, JsonObject, JsonValue, Message, Timeout, ToolCall
from metaeval.contract import ToolResult as Result
from metaeval.importers.runs.common import (
    BadRecord,
    ImportedRun,
    RunFormat,
    chat_events,
    decode_tool_content,
    ended,
    got,
)
from metaeval.untrusted_json import LoadError, read_json_or_lines

__all__ = ["FORMAT", "ChatConversation", "read_openai_agents"]

SPAN_TYPES = {"agent", "function", "generation", "response", "guardrail", "handoff", "custom",
              "mcp_tools", "speech", "transcription", "speech_group"}


@dataclass
class _Trace:
    id: str
    source: str
    header: JsonObject = field(default_factory=dict)
    spans: list[tuple[str, JsonObject]] = field(default_factory=list)


def _items(value: JsonValue) -> list[JsonValue]:
    data = value.get("data") if isinstance(value, dict) else None
    if isinstance(data, list):
        return data
    return value if isinstance(value, list) else [value]


def _after_last_assistant(messages: list[JsonValue]) -> int:
    for k in range(len(messages) - 1, -1, -1):
        message = messages[k]
        if isinstance(message, dict) and message.get("role") == "assistant":
            return k + 1
    return 0


@dataclass
class ChatConversation:
    """A conversation rebuilt from chat-completions calls, call by call (also the
    OpenInference reader's): the history each call re-sent is read once."""

    events: list[Event] = field(default_factory=list)
    started: bool = False
    tool_errors: list[JsonValue] = field(default_factory=list)
    guardrails: JsonObject = field(default_factory=dict)
    stop: Timeout | Error | None = None

    def generation(self, data: JsonObject, where: str) -> None:
        inputs, outputs = data.get("input"), data.get("output")
        if not isinstance(inputs, list) or not isinstance(outputs, list):
            raise BadRecord(f"{where}.span_data.input", "missing: the model call's messages "
                            "were not recorded; expected input and output lists (the SDK "
                            "leaves them out when trace_include_sensitive_data is off)")
        new = _after_last_assistant(inputs) if self.started else 0
        for i, message in enumerate(inputs[new:], start=new):
            self._add(chat_events(message, f"{where}.span_data.input[{i}]"))
        for i, message in enumerate(outputs):
            self._add(chat_events(message, f"{where}.span_data.output[{i}]"))
        self.started = True

    def _add(self, events: list[Event]) -> None:
        """Events of a message, less a call or result already read (a result a
        ``function`` span gave, re-sent in the next call's history)."""
        calls = {e.id for e in self.events if isinstance(e, ToolCall)}
        answered = {e.call_id for e in self.events if isinstance(e, Result)}
        self.events += [e for e in events
                        if not (isinstance(e, ToolCall) and e.id in calls)
                        and not (isinstance(e, Result) and e.call_id in answered)]

    def function(self, data: JsonObject, error: JsonValue) -> None:
        """A tool that ran after the last model call: its result, which no later call
        re-sent, answers the last unanswered call of its name."""
        answered = {e.call_id for e in self.events if isinstance(e, Result)}
        waiting = [e for e in self.events if isinstance(e, ToolCall) and e.id not in answered
                   and e.tool == data.get("name")]
        if error is not None and waiting:
            self.tool_errors.append(waiting[0].id)
        if not waiting:
            return
        output = data.get("output")
        if isinstance(output, str):
            self.events.append(Result(waiting[0].id, decode_tool_content(output)))
        elif error is not None:
            message = error.get("message") if isinstance(error, dict) else error
            self.events.append(Result(waiting[0].id, f"Error: {message}"))

    def failed(self, kind: str, data: JsonObject, error: JsonValue) -> None:
        if kind == "guardrail":
            name = str(data.get("name", ""))
            self.guardrails[name] = data.get("triggered") is True
            if data.get("triggered") is True and not isinstance(self.stop, Error):
                self.stop = Error(f"guardrail {name!r} tripped")
        if error is None or kind not in ("agent", "custom"):
            return
        message = error.get("message") if isinstance(error, dict) else error
        detail = error.get("data") if isinstance(error, dict) else None
        if message == "Max turns exceeded" and self.stop is None:
            turns = detail.get("max_turns") if isinstance(detail, dict) else None
            self.stop = Timeout(f"max turns {turns} exceeded: a step limit")
        elif self.stop is None and message != "Guardrail tripwire triggered":
            self.stop = Error(f"{kind} span failed: {message}")


def _run(trace: _Trace) -> ImportedRun:
    rebuilt = ChatConversation()
    agents: list[JsonValue] = []
    model: JsonValue = None
    spans = sorted(trace.spans, key=lambda s: str(s[1].get("started_at", "")))
    for where, span in spans:
        data = span.get("span_data")
        kind = data.get("type") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(kind, str) or kind not in SPAN_TYPES:
            raise BadRecord(f"{where}.span_data.type", f"got {got(kind)}; expected one of "
                            f"{', '.join(sorted(SPAN_TYPES))}")
        error = span.get("error")
        if kind == "generation":
            rebuilt.generation(data, where)
            model = model or data.get("model")
        elif kind == "response":
            raise BadRecord(f"{where}.span_data", "a Responses API call, whose span holds only "
                            "its response id; expected generation spans with their messages "
                            "(an OpenAIChatCompletionsModel, or the OpenInference export)")
        elif kind == "function":
            rebuilt.function(data, error)
        elif kind == "agent" and data.get("name") not in agents:
            agents.append(data.get("name"))
        rebuilt.failed(kind, data, error)
    header = trace.header
    workflow = header.get("workflow_name")
    metadata: JsonObject = {"trace_id": trace.id, "agents": agents,
                            "guardrails": rebuilt.guardrails}
    for key, value in (("workflow", workflow), ("group_id", header.get("group_id")),
                       ("trace_metadata", header.get("metadata")), ("model", model)):
        if value is not None:
            metadata[key] = value
    if rebuilt.tool_errors:
        metadata["tool_errors"] = rebuilt.tool_errors
    if rebuilt.stop is not None:
        metadata["ended"] = rebuilt.stop.detail
    group = header.get("group_id")
    instruction = next((e.content for e in rebuilt.events
                        if isinstance(e, Message) and e.role == "user"), "")
    return ImportedRun(trace.id, trace.source, workflow if isinstance(workflow, str)
                       and workflow else trace.id, tuple(ended(rebuilt.events, rebuilt.stop)),
                       instruction, metadata=metadata,
                       conversation=group if isinstance(group, str) else "")


def read_openai_agents(paths: Iterable[Path], errors: list[LoadError]
                       ) -> Iterator[ImportedRun]:
    """Every trace of the files as a run, in the order each trace was first met; a
    bad item or a bad trace is one error in ``errors``."""
    traces: dict[str, _Trace] = {}
    for path in paths:
        for record in read_json_or_lines(path, errors):
            for i, item in enumerate(_items(record.value)):
                where = "" if item is record.value else f"[{i}]"
                kind = item.get("object") if isinstance(item, dict) else None
                trace_id = (item.get("id") if kind == "trace" else item.get("trace_id")
                            ) if isinstance(item, dict) else None
                if kind not in ("trace", "trace.span") or not isinstance(trace_id, str) \
                        or not trace_id:
                    errors.append(record.error(f"{where}.object".lstrip("."), (
                        f"got {got(item)}; expected an exported trace or span "
                        '({"object": "trace" | "trace.span", ...})')))
                    continue
                assert isinstance(item, dict)
                trace = traces.setdefault(trace_id, _Trace(trace_id, f"{path}:{record.line}"))
                if kind == "trace":
                    trace.header = item
                else:
                    trace.spans.append((f"span {item.get('id')}", item))
    for trace in traces.values():
        try:
            yield _run(trace)
        except BadRecord as bad:
            file, _, line = trace.source.rpartition(":")
            errors.append(LoadError(file, int(line) if line.isdigit() else 0,
                                    f"trace {trace.id}: {bad.field}", bad.message))


def sniff(head: bytes, path: Path) -> bool:
    """Exported Agents SDK items: ``"object": "trace"`` or ``"trace.span"`` up front."""
    first = head[:4096]
    return b'"object": "trace' in first or b'"object":"trace' in first


FORMAT = RunFormat("openai-agents", "OpenAI Agents SDK traces, the items its tracing exports "
                   "(JSON Lines)", (".jsonl", ".json"), sniff, "import/openai-agents.md",
                   read_openai_agents, per_call=True)
