"""The GenAI conventions before 1.37: one event a message, read as the messages of 1.37.

Before semantic conventions 1.37 an inference's content was not on its span but
in one event a message (``gen_ai.system.message``, ``gen_ai.user.message``,
``gen_ai.assistant.message``, ``gen_ai.tool.message``, one ``gen_ai.choice`` a
choice), emitted as log records tied to the span (OpenTelemetry's own
``opentelemetry-instrumentation-openai-v2`` by default) or as span events. This
module rewrites a span's events into ``gen_ai.input.messages`` and
``gen_ai.output.messages`` of the 1.37 shape (``{role, parts}``), so one reader
(``otel``) reads both conventions. An event without its content (the
instrumentation did not capture it) or of a shape not known here is an error
naming it, never skipped.
"""

from __future__ import annotations

from collections.abc import Sequence

from metaeval.contract import JsonObject, JsonValue
from metaeval.importers.runs.common import BadRecord, got
from metaeval.importers.runs.otlp_json import LogEvent

__all__ = ["INPUT_EVENTS", "OUTPUT_EVENT", "as_messages"]

INPUT_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}
OUTPUT_EVENT = "gen_ai.choice"
_CAPTURE = ("the instrumentation did not capture message content (set "
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)")


def _calls(raw: JsonValue, where: str) -> list[JsonValue]:
    """``tool_calls`` (``[{id, type, function: {name, arguments}}]``) as parts."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise BadRecord(f"{where}.tool_calls", f"got {got(raw)}; expected a list of calls")
    parts: list[JsonValue] = []
    for i, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(function, dict):
            raise BadRecord(f"{where}.tool_calls[{i}]", f"got {got(call)}; expected "
                            "{id, function: {name, arguments}}")
        parts.append({"type": "tool_call", "id": call.get("id"), "name": function.get("name"),
                      "arguments": function.get("arguments")})
    return parts


def _message(role: str, body: JsonValue, where: str) -> JsonObject:
    if not isinstance(body, dict):
        raise BadRecord(where, f"got {got(body)}; expected the event's body (an object)")
    content = body.get("content")
    if role == "tool":
        if content is None:
            raise BadRecord(f"{where}.content", f"missing: {_CAPTURE}")
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": body.get("id"),
                                           "response": content}]}
    parts: list[JsonValue] = []
    if isinstance(content, str):
        parts.append({"type": "text", "content": content})
    elif content is not None:
        raise BadRecord(f"{where}.content", f"got {got(content)}; expected a string")
    parts += _calls(body.get("tool_calls"), where)
    if not parts:
        raise BadRecord(f"{where}.content", f"missing: {_CAPTURE}")
    return {"role": role, "parts": parts}


def as_messages(events: Sequence[LogEvent]) -> tuple[list[JsonValue], list[JsonValue]]:
    """A span's events as (input messages, output messages) of the 1.37 shape; events
    of other GenAI names are named as errors."""
    inputs: list[JsonValue] = []
    outputs: list[JsonValue] = []
    for event in events:
        if event.name in INPUT_EVENTS:
            inputs.append(_message(INPUT_EVENTS[event.name], event.body, event.where))
        elif event.name == OUTPUT_EVENT:
            body = event.body
            message = body.get("message") if isinstance(body, dict) else None
            if message is None:
                raise BadRecord(f"{event.where}.message", f"missing: {_CAPTURE}")
            if not isinstance(message, dict):
                raise BadRecord(f"{event.where}.message", f"got {got(message)}; expected "
                                "{role, content, tool_calls}")
            role = message.get("role", "assistant")
            outputs.append(_message(role if isinstance(role, str) else "assistant", message,
                                    f"{event.where}.message"))
        else:
            raise BadRecord(event.where, f"got the event {event.name!r}; expected one of "
                            f"{', '.join([*INPUT_EVENTS, OUTPUT_EVENT])}")
    return inputs, outputs
