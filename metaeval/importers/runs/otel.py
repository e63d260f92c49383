"""OpenTelemetry GenAI spans (an OTLP JSON export) to runs: one trace, one run.

Reads the OTLP JSON an SDK's file exporter or a collector writes (JSON Lines of
``{"resourceSpans": [...]}`` and ``{"resourceLogs": [...]}``, or one such
document; ``otlp_json`` parses them), groups spans and GenAI log events by
trace, reads the per-message events of the conventions before 1.37 as the 1.37
messages (``otel_events``), and
rebuilds each trace's conversation from the semantic conventions' ``gen_ai.*``
attributes: inference spans (``chat``, ``text_completion``, ``generate_content``)
give the messages (``gen_ai.input.messages``, ``gen_ai.output.messages``,
``gen_ai.system_instructions``, on the span or on its
``gen_ai.client.inference.operation.details`` event), ``execute_tool`` spans the
calls and results. The mapping is docs/import/otel.md. A GenAI span whose
content was not captured, or a part of an unknown type, is an error naming the
trace and span, never skipped; spans of other operations are counted in the
run's metadata.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.contract import (
    Error,
    Event,
    JsonObject,
    JsonValue,
    Message,
    Timeout,
    ToolCall,
    ToolResult,
)
from metaeval.importers.runs.common import (
    INNER_DEPTH,
    BadRecord,
    ImportedRun,
    RunFormat,
    decode_tool_content,
    ended,
    got,
)
from metaeval.importers.runs.otel_events import as_messages
from metaeval.importers.runs.otlp_json import (
    CONTENT_KEYS,
    STATUS_ERROR,
    LogEvent,
    documents,
    records,
    trace_ids,
)
from metaeval.importers.runs.otlp_json import Span as _Span
from metaeval.untrusted_json import JsonInputError, LoadError, parse_json

__all__ = ["FORMAT", "read_otel"]

INFERENCE = {"chat", "text_completion", "generate_content"}
AGENT = {"invoke_agent", "create_agent"}
_ROLES = {"system", "user", "assistant", "tool"}
_MARKERS = {"blob", "file", "uri"}
# The last inference's finish reasons that say the model was cut off (a timeout
# event) or stopped by a filter (an error event): the run has no answer.
_CUT = {"length", "max_tokens", "max_output_tokens"}
_FILTERED = {"content_filter", "safety", "refusal", "guardrail"}


# --- a trace to a run --------------------------------------------------------------------


def _content(span: _Span, key: str) -> JsonValue:
    value = span.attributes.get(key)
    if isinstance(value, str):
        try:
            return parse_json(value, max_depth=INNER_DEPTH)
        except JsonInputError as e:
            raise BadRecord(f"{span.where}.{key}", f"got {got(value)}; expected a JSON "
                            f"list ({e.message})") from e
    return value


@dataclass
class _Conversation:
    """The events of one trace as they are rebuilt, span by span."""

    events: list[Event] = field(default_factory=list)
    started: bool = False
    calls: set[str] = field(default_factory=set)
    results: set[str] = field(default_factory=set)
    tool_errors: list[JsonValue] = field(default_factory=list)
    asked: dict[str, tuple[str, JsonObject]] = field(default_factory=dict)

    def call(self, call_id: str, tool: str, args: JsonObject) -> None:
        if call_id not in self.calls:
            self.calls.add(call_id)
            self.events.append(ToolCall(call_id, tool, args))

    def part_call(self, call_id: str, tool: str, args: JsonObject, where: str) -> None:
        """A ``tool_call`` part: one the messages already hold under its id is the same
        call sent again only when it is the same call; another is an error, not
        silently the first."""
        earlier = self.asked.get(call_id)
        if earlier is not None and earlier != (tool, args):
            raise BadRecord(f"{where}.id", f"got {call_id!r} for a call of {tool!r}; expected "
                            f"an id no other call has (a call of {earlier[0]!r} has it)")
        self.asked[call_id] = (tool, args)
        self.call(call_id, tool, args)

    def result(self, call_id: str, content: JsonValue) -> None:
        if call_id not in self.results:
            self.results.add(call_id)
            self.events.append(ToolResult(call_id, content))

    def message(self, raw: JsonValue, where: str) -> None:
        if not isinstance(raw, dict):
            raise BadRecord(where, f"got {got(raw)}; expected a message {{role, parts}}")
        role = raw.get("role")
        if not isinstance(role, str) or role not in _ROLES:
            raise BadRecord(f"{where}.role", f"got {got(role)}; expected one of "
                            f"{', '.join(sorted(_ROLES))}")
        parts = raw.get("parts")
        if not isinstance(parts, list):
            raise BadRecord(f"{where}.parts", f"got {got(parts)}; expected a list of parts")
        self.parts(str(role), parts, where)

    def parts(self, role: str, parts: list[JsonValue], where: str) -> None:
        text: list[str] = []

        def flush() -> None:
            if text and role == "tool":
                raise BadRecord(where, f"got text {got(''.join(text))} in a tool message; "
                                "expected tool_call_response parts")
            if text:
                self.events.append(Message(role, "".join(text)))
                text.clear()

        for i, part in enumerate(parts):
            at = f"{where}.parts[{i}]"
            if not isinstance(part, dict):
                raise BadRecord(at, f"got {got(part)}; expected a part object")
            kind = part.get("type")
            if not isinstance(kind, str):
                raise BadRecord(f"{at}.type", f"got {got(kind)}; expected a part type (a "
                                "string)")
            if kind == "text":
                content = part.get("content")
                if not isinstance(content, str):
                    raise BadRecord(f"{at}.content", f"got {got(content)}; expected a string")
                text.append(content)
            elif kind in _MARKERS:
                text.append(f"[{kind}]")
            elif kind == "tool_call":
                flush()
                args: JsonValue = part.get("arguments") or {}
                if isinstance(args, str):
                    args = decode_tool_content(args)
                if not isinstance(args, dict):
                    raise BadRecord(f"{at}.arguments", f"got {got(args)}; expected an object")
                self.part_call(_id(part, at), _name(part, at), args, at)
            elif kind == "tool_call_response":
                flush()
                response = part.get("response", part.get("result"))
                self.result(_id(part, at), decode_tool_content(response)
                            if isinstance(response, str) else response)
            elif kind != "reasoning":
                raise BadRecord(f"{at}.type", f"got {got(kind)}; expected text, tool_call, "
                                "tool_call_response, reasoning, blob, file or uri")
        flush()

    def inference(self, span: _Span) -> None:
        inputs = _content(span, "gen_ai.input.messages")
        outputs = _content(span, "gen_ai.output.messages")
        if inputs is None and outputs is None:
            raise BadRecord(f"{span.where}.gen_ai.input.messages", "missing: the "
                            "instrumentation did not capture message content; expected "
                            "gen_ai.input.messages and gen_ai.output.messages (set "
                            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)")
        inputs, outputs = inputs or [], outputs or []
        for key, value in (("gen_ai.input.messages", inputs),
                           ("gen_ai.output.messages", outputs)):
            if not isinstance(value, list):
                raise BadRecord(f"{span.where}.{key}", f"got {got(value)}; expected a list")
        assert isinstance(inputs, list) and isinstance(outputs, list)
        system = _content(span, "gen_ai.system_instructions")
        if system is not None and not self.started:
            if not isinstance(system, list):
                raise BadRecord(f"{span.where}.gen_ai.system_instructions",
                                f"got {got(system)}; expected a list of parts")
            self.parts("system", system, f"{span.where}.gen_ai.system_instructions")
        # Each call re-sends the conversation so far, and the model's earlier turns
        # were read from the outputs of earlier calls: after the first call, only
        # what follows the input's last assistant turn is new (the user's and the
        # tools'), however the history was re-serialised or windowed.
        new = _after_last_assistant(inputs) if self.started else 0
        for i, message in enumerate(inputs[new:], start=new):
            self.message(message, f"{span.where}.gen_ai.input.messages[{i}]")
        for i, message in enumerate(outputs):
            self.message(message, f"{span.where}.gen_ai.output.messages[{i}]")
        self.started = True

    def tool(self, span: _Span) -> None:
        a = span.attributes
        call_id = a.get("gen_ai.tool.call.id")
        if not isinstance(call_id, str) or not call_id:
            raise BadRecord(f"{span.where}.gen_ai.tool.call.id", f"got {got(call_id)}; "
                            "expected the call's id")
        args = a.get("gen_ai.tool.call.arguments", {})
        args = decode_tool_content(args) if isinstance(args, str) else args
        if not isinstance(args, dict):
            raise BadRecord(f"{span.where}.gen_ai.tool.call.arguments", f"got {got(args)}; "
                            "expected a JSON object")
        tool = a.get("gen_ai.tool.name")
        if not isinstance(tool, str) or not tool:
            raise BadRecord(f"{span.where}.gen_ai.tool.name", f"got {got(tool)}; expected the "
                            "tool's name")
        self.call(call_id, tool, args)
        result = a.get("gen_ai.tool.call.result")
        if span.status_code == STATUS_ERROR:
            self.tool_errors.append(call_id)
            if result is None:
                result = f"Error: {span.status_message or a.get('error.type', '')}"
        if result is not None:
            self.result(call_id, decode_tool_content(result) if isinstance(result, str)
                        else result)


def _id(part: JsonObject, where: str) -> str:
    value = part.get("id")
    if not isinstance(value, str) or not value:
        raise BadRecord(f"{where}.id", f"got {got(value)}; expected the call's id")
    return value


def _name(part: JsonObject, where: str) -> str:
    value = part.get("name")
    if not isinstance(value, str) or not value:
        raise BadRecord(f"{where}.name", f"got {got(value)}; expected the tool's name")
    return value


def _after_last_assistant(inputs: list[JsonValue]) -> int:
    """The position after the last assistant message of ``inputs`` (0 if none)."""
    for k in range(len(inputs) - 1, -1, -1):
        message = inputs[k]
        if isinstance(message, dict) and message.get("role") == "assistant":
            return k + 1
    return 0


def _history(span: _Span) -> int:
    """How many messages an inference span re-sent (0 for another span): of two calls
    made in one clock tick, the one that re-sent more came later."""
    value = span.attributes.get("gen_ai.input.messages")
    if isinstance(value, str):
        try:
            value = parse_json(value, max_depth=INNER_DEPTH)
        except JsonInputError:
            return 0  # read (and named) with the conversation
    return len(value) if isinstance(value, list) else 0


def _in_order(spans: list[_Span]) -> list[_Span]:
    """By start time, then end time; spans of one clock tick by the history they
    re-sent, then as listed (a stable sort). The history is parsed only for a tie."""
    spans = sorted(spans, key=lambda s: (s.start, s.end))
    ordered: list[_Span] = []
    for _, tied in itertools.groupby(spans, key=lambda s: (s.start, s.end)):
        group = list(tied)
        ordered.extend(sorted(group, key=_history) if len(group) > 1 else group)
    return ordered


def _conversation_id(genai: list[_Span]) -> str | None:
    """The trace's one ``gen_ai.conversation.id``, None when it has none or several."""
    found: set[str] = set()
    for span in genai:
        value = span.attributes.get("gen_ai.conversation.id")
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            raise BadRecord(f"{span.where}.gen_ai.conversation.id", f"got {got(value)}; "
                            "expected a non-empty string")
        found.add(value)
    return found.pop() if len(found) == 1 else None


def _run(trace: str, spans: list[_Span], source: str) -> ImportedRun | None:
    for span in spans:
        op = span.attributes.get("gen_ai.operation.name")
        if op is not None and (not isinstance(op, str) or not op):
            raise BadRecord(f"{span.where}.gen_ai.operation.name", f"got {got(op)}; expected "
                            "the operation's name (a string)")
    genai = [s for s in spans if "gen_ai.operation.name" in s.attributes]
    if not genai:
        # Older instrumentations write gen_ai.* attributes without the operation
        # (gen_ai.prompt.0.content): a GenAI trace this reader cannot read, not a
        # trace of something else, so it is named rather than passed over.
        for span in spans:
            older = sorted(k for k in span.attributes if k.startswith("gen_ai."))
            if older:
                raise BadRecord(span.where, f"has {', '.join(map(repr, older[:3]))} but no "
                                "'gen_ai.operation.name'; expected the spans of the GenAI "
                                "semantic conventions (an operation per span)")
        return None
    genai = _in_order(genai)
    conversation = _Conversation()
    skipped: dict[str, JsonValue] = {}
    ops = {str(s.attributes["gen_ai.operation.name"]) for s in genai}
    readers = INFERENCE if ops & INFERENCE else AGENT
    metadata: JsonObject = {"trace_id": trace}
    for span in genai:
        op = str(span.attributes["gen_ai.operation.name"])
        for key, name in (("gen_ai.request.model", "model"), ("gen_ai.agent.name", "agent"),
                          ("gen_ai.provider.name", "provider"), ("gen_ai.system", "provider")):
            if isinstance(span.attributes.get(key), str):
                metadata.setdefault(name, span.attributes[key])
        if op in readers:
            conversation.inference(span)
        elif op == "execute_tool":
            conversation.tool(span)
        elif op not in AGENT:
            count = skipped.get(op, 0)
            skipped[op] = (count if isinstance(count, int) else 0) + 1
    if skipped:
        metadata["operations_not_read"] = skipped
    stop = _stop(genai, readers)
    if stop is not None:
        metadata["ended"] = stop.detail
    if len(genai) < len(spans):
        metadata["other_spans"] = len(spans) - len(genai)
    if conversation.tool_errors:
        metadata["tool_errors"] = conversation.tool_errors
    named = _conversation_id(genai)
    instruction = next((e.content for e in conversation.events
                        if isinstance(e, Message) and e.role == "user"), "")
    # Traces of one gen_ai.conversation.id are joined into one run (mapped.joined),
    # which keeps the first trace's id: the conversation's.
    return ImportedRun(named or trace, source, named or trace,
                       tuple(ended(conversation.events, stop)), instruction,
                       metadata=metadata, conversation=named or "")


def _stop(genai: list[_Span], readers: set[str]) -> Timeout | Error | None:
    """How the trace ended when it did not finish: an agent or inference span that
    failed (its status an error), or a last inference cut off by a token limit or a
    filter (``gen_ai.response.finish_reasons``)."""
    for span in genai:
        op = span.attributes["gen_ai.operation.name"]
        if span.status_code == STATUS_ERROR and (op in AGENT or op in readers):
            why = span.status_message or span.attributes.get("error.type") or "an error"
            return Error(f"{span.where} failed: {why}")
    last = next((s for s in reversed(genai)
                 if s.attributes["gen_ai.operation.name"] in readers), None)
    reasons = last.attributes.get("gen_ai.response.finish_reasons") if last else None
    if isinstance(reasons, str):
        reasons = [reasons]
    if last is None or not isinstance(reasons, list):
        return None
    for reason in reasons:
        if reason in _CUT:
            return Timeout(f"{last.where}: finish reason {reason!r}: the model was cut off")
        if reason in _FILTERED:
            return Error(f"{last.where}: finish reason {reason!r}: the reply was filtered")
    return None


def _last_places(paths: list[Path]) -> dict[str, tuple[int, int]]:
    """Where each trace's last span stands (file, line): a first pass over the files,
    which keeps only the trace ids, never the spans."""
    last: dict[str, tuple[int, int]] = {}
    for k, path in enumerate(paths):
        for line, document in documents(path, []):  # the second pass names the errors
            for trace in trace_ids(document):
                last[trace] = (k, line)
    return last


def read_otel(paths: Iterable[Path], errors: list[LoadError]) -> Iterator[ImportedRun]:
    """Every trace with a GenAI span, across all the files given, as a run; a bad
    document line or a bad trace is one error in ``errors``.

    Streamed: a trace's spans are held from its first line to its last, then it
    becomes a run and is let go, so memory holds the traces open at one place in
    the files (as many as ran at once), not the files. The runs come in the order
    their traces end."""
    paths = list(paths)
    last = _last_places(paths)
    traces: dict[str, list[_Span]] = {}
    logged: dict[str, list[LogEvent]] = {}
    first: dict[str, tuple[Path, int]] = {}
    for k, path in enumerate(paths):
        for line, document in documents(path, errors):
            try:
                found, events = records(document)
            except BadRecord as bad:
                errors.append(LoadError(str(path), line, bad.field, bad.message))
                continue
            for span in found:
                traces.setdefault(span.trace, []).append(span)
                first.setdefault(span.trace, (path, line))
            for event in events:
                logged.setdefault(event.trace, []).append(event)
                first.setdefault(event.trace, (path, line))
            seen = dict.fromkeys([*(s.trace for s in found), *(e.trace for e in events)])
            for trace in [t for t in seen if last.get(t) == (k, line)]:
                yield from _ended(trace, traces.pop(trace, []), logged.pop(trace, []),
                                  first.pop(trace), errors)
    for trace in list(first):  # a file that changed between the two passes
        yield from _ended(trace, traces.pop(trace, []), logged.pop(trace, []), first[trace],
                          errors)


def _ended(trace: str, spans: list[_Span], events: list[LogEvent], first: tuple[Path, int],
           errors: list[LoadError]) -> Iterator[ImportedRun]:
    path, line = first
    try:
        _with_events(spans, events)
        run = _run(trace, spans, f"{path}:{line}" if line else f"{path}#trace {trace}")
    except BadRecord as bad:
        errors.append(LoadError(str(path), line, f"trace {trace}: {bad.field}", bad.message))
        return
    if run is not None:
        yield run


def _with_events(spans: list[_Span], logged: list[LogEvent]) -> None:
    """The per-message events of the conventions before 1.37 (log records, span
    events) written onto their inference spans as the 1.37 attributes; a span that
    has those attributes already keeps them. An event whose span is not in the
    trace is an error: its messages would belong to no call."""
    by_span: dict[str, list[LogEvent]] = {}
    for event in logged:
        by_span.setdefault(event.span, []).append(event)
    ids = {span.id for span in spans}
    stray = next((e for e in logged if e.span not in ids), None)
    if stray is not None:
        raise BadRecord(stray.where, f"the span it belongs to ({stray.span}) is not in the "
                        "export; expected the spans beside their events")
    for span in spans:
        events = [*span.events, *by_span.get(span.id, [])]
        if not events or any(key in span.attributes for key in CONTENT_KEYS[:2]):
            continue
        inputs, outputs = as_messages(events)
        span.attributes["gen_ai.input.messages"] = list(inputs)
        span.attributes["gen_ai.output.messages"] = list(outputs)


def sniff(head: bytes, path: Path) -> bool:
    """An OTLP JSON export: a document or a line that opens with ``resourceSpans`` (or
    ``resourceLogs``: the GenAI events of the conventions before 1.37)."""
    exported = b'"resourceSpans"' in head[:4096] or b'"resourceLogs"' in head[:4096]
    return exported and b'"openinference.span.kind"' not in head  # OpenInference's own


FORMAT = RunFormat("otel", "an OTLP JSON export of OpenTelemetry GenAI spans",
                   (".jsonl", ".json"), sniff, "import/otel.md", read_otel, per_call=True)
