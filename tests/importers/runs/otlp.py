"""OTLP JSON written by hand, for the cases no SDK writes: a bad attribute, spans out
of order, a status written as its enum name."""

from __future__ import annotations

import json
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue


def value(v: JsonValue) -> JsonObject:
    """A Python value as an OTLP AnyValue (lists and objects as a JSON string)."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, str):
        return {"stringValue": v}
    return {"stringValue": json.dumps(v)}


def span(span_id: str, op: str, start: int, end: int, attributes: JsonObject | None = None,
         *, raw: list[JsonValue] | None = None, trace: str = "t1") -> JsonObject:
    """A span of operation ``op``: ``attributes`` as Python values, ``raw`` as
    key-value pairs already in OTLP form."""
    kvs: list[JsonValue] = [{"key": "gen_ai.operation.name", "value": value(op)}]
    kvs += [{"key": k, "value": value(v)} for k, v in (attributes or {}).items()]
    kvs += raw or []
    return {"traceId": trace, "spanId": span_id, "name": f"{op} m",
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(end), "attributes": kvs}


def chat(span_id: str, start: int, end: int, inputs: list[JsonValue],
         outputs: list[JsonValue], *, trace: str = "t1", **more: JsonValue) -> JsonObject:
    """An inference span; ``more``: attributes by their name with ``_`` for ``.``."""
    attributes: JsonObject = {"gen_ai.input.messages": inputs,
                              "gen_ai.output.messages": outputs}
    attributes.update({k.replace("__", "."): v for k, v in more.items()})
    return span(span_id, "chat", start, end, attributes, trace=trace)


def text(role: str, content: str) -> JsonObject:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def document(*spans: JsonValue) -> JsonObject:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def write(path: Path, *documents: JsonValue) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in documents))
    return path
