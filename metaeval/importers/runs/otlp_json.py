"""OTLP JSON, as an SDK's file exporter or a collector writes it: spans and log
records with their attributes as JSON values, each bad field named.

Shared by the GenAI readers (``otel``, the conventions' messages; ``otel_events``,
the per-message events of the conventions before 1.37). Reads
``ExportTraceServiceRequest`` documents (``resourceSpans``) and
``ExportLogsServiceRequest`` documents (``resourceLogs``), one a line or one a file;
never imports OpenTelemetry.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue
from metaeval.importers.runs.common import BadRecord, got
from metaeval.untrusted_json import LoadError, read_json_or_lines

__all__ = ["CONTENT_KEYS", "DETAILS_EVENT", "STATUS_ERROR", "LogEvent", "Span", "documents",
           "key_values", "records", "trace_ids"]

DETAILS_EVENT = "gen_ai.client.inference.operation.details"
CONTENT_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")

STATUS_ERROR = 2
"""``Status.code`` of a span that failed (OTLP's ``STATUS_CODE_ERROR``)."""
# A status code as the JSON mapping writes it (a number) or as some exporters do
# (the enum's name): anything else is an error, never read as OK.
_STATUS_CODES: dict[JsonValue, int] = {0: 0, 1: 1, 2: 2, "STATUS_CODE_UNSET": 0,
                                       "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


@dataclass(frozen=True, slots=True)
class LogEvent:
    """A GenAI event of the conventions before 1.37 (``gen_ai.user.message``, ...): a
    log record (``eventName``, or its ``event.name`` attribute) or a span event, with
    the span it belongs to and its body (a log record's body; a span event's
    attributes)."""

    trace: str
    span: str
    name: str
    body: JsonValue
    where: str
    attributes: JsonObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Span:
    trace: str
    id: str
    name: str
    start: int
    end: int
    attributes: JsonObject
    status_code: int
    status_message: str
    events: tuple[LogEvent, ...] = ()
    """Its span events named as GenAI events of the conventions before 1.37."""

    @property
    def where(self) -> str:
        return f"span {self.id} ({self.name!r})"


# --- OTLP JSON -------------------------------------------------------------------------


_INT64 = re.compile(r"-?[0-9]{1,19}")
_INT64_RANGE = range(-(1 << 63), 1 << 63)
_UINT64 = re.compile(r"[0-9]{1,20}")
# Each AnyValue kind and the JSON types its value may have.
_SCALARS: dict[str, tuple[type, ...]] = {"stringValue": (str,), "boolValue": (bool,),
                                         "doubleValue": (int, float)}


def _int64(value: JsonValue, where: str) -> int:
    """An ``intValue``: an int64, written as a string of ASCII digits (or a number)."""
    if isinstance(value, str) and _INT64.fullmatch(value):
        number: JsonValue = int(value)  # at most 19 digits: never past int()'s limit
    else:
        number = value
    if isinstance(number, int) and not isinstance(number, bool) and number in _INT64_RANGE:
        return number
    raise BadRecord(where, f"got {got(value)}; expected an integer (a string of digits, "
                    "within int64)")


def any_value(raw: JsonValue, where: str) -> JsonValue:
    """An OTLP ``AnyValue`` (``{"stringValue": ...}``, ``arrayValue``, ...) as JSON."""
    if not isinstance(raw, dict) or len(raw) > 1:
        raise BadRecord(where, f"got {got(raw)}; expected an OTLP AnyValue with one key")
    if not raw:
        return None
    ((kind, value),) = raw.items()
    if kind in _SCALARS:
        if isinstance(value, _SCALARS[kind]) and (kind == "boolValue"
                                                  or not isinstance(value, bool)):
            return value
        raise BadRecord(where, f"got {got(raw)}; expected a {kind.removesuffix('Value')}")
    if kind == "intValue":  # int64 is a string in the JSON mapping
        return _int64(value, where)
    if kind == "bytesValue" and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True).hex()
        except (binascii.Error, ValueError):
            raise BadRecord(where, f"got {got(value)}; expected base64") from None
    if kind == "arrayValue" and isinstance(value, dict):
        items = value.get("values", [])
        if isinstance(items, list):
            return [any_value(v, f"{where}[{i}]") for i, v in enumerate(items)]
    if kind == "kvlistValue" and isinstance(value, dict):
        return key_values(value.get("values", []), where)
    raise BadRecord(where, f"got {got(raw)}; expected stringValue, boolValue, intValue, "
                    "doubleValue, bytesValue, arrayValue or kvlistValue")


def key_values(raw: JsonValue, where: str) -> JsonObject:
    if not isinstance(raw, list):
        raise BadRecord(where, f"got {got(raw)}; expected a list of key-value pairs")
    out: JsonObject = {}
    for i, kv in enumerate(raw):
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise BadRecord(f"{where}[{i}]", f"got {got(kv)}; expected {{key, value}}")
        out[str(kv["key"])] = any_value(kv.get("value", {}), f"{where}.{kv['key']}")
    return out


def nanos(raw: JsonValue, where: str) -> int:
    """A fixed64 time: a string of ASCII digits (or a number) below 2**64."""
    if isinstance(raw, str) and _UINT64.fullmatch(raw):
        raw = int(raw)
    if isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw < 1 << 64:
        return raw
    raise BadRecord(where, f"got {got(raw)}; expected nanoseconds since the epoch")


def olist(obj: JsonObject, key: str, where: str) -> list[JsonValue]:
    value = obj.get(key, [])
    if not isinstance(value, list):
        raise BadRecord(f"{where}.{key}" if where else key, f"got {got(value)}; expected a list")
    return value


def spans(document: JsonValue) -> Iterator[Span]:
    """Every span of one ExportTraceServiceRequest, with GenAI event content merged
    into its attributes."""
    if not isinstance(document, dict) or "resourceSpans" not in document:
        raise BadRecord("", f"got {got(document)}; expected an OTLP JSON export "
                        "({\"resourceSpans\": [...]})")
    for r, resource in enumerate(olist(document, "resourceSpans", "")):
        at = f"resourceSpans[{r}]"
        if not isinstance(resource, dict):
            raise BadRecord(at, f"got {got(resource)}; expected an object")
        for s, scope in enumerate(olist(resource, "scopeSpans", at)):
            sat = f"{at}.scopeSpans[{s}]"
            if not isinstance(scope, dict):
                raise BadRecord(sat, f"got {got(scope)}; expected an object")
            for k, raw in enumerate(olist(scope, "spans", sat)):
                yield span(raw, f"{sat}.spans[{k}]")


def span(raw: JsonValue, where: str) -> Span:
    if not isinstance(raw, dict):
        raise BadRecord(where, f"got {got(raw)}; expected a span object")
    trace, span_id = raw.get("traceId"), raw.get("spanId")
    if not isinstance(trace, str) or not trace or not isinstance(span_id, str) or not span_id:
        raise BadRecord(where, "expected traceId and spanId (hex strings); got "
                        f"{got(trace)} and {got(span_id)}")
    attributes = key_values(raw.get("attributes", []), f"{where}.attributes")
    old: list[LogEvent] = []
    for e, event in enumerate(olist(raw, "events", where)):
        name = event.get("name") if isinstance(event, dict) else None
        if not isinstance(event, dict) or not isinstance(name, str):
            continue
        at = f"{where}.events[{e}]"
        if name == DETAILS_EVENT:
            details = key_values(event.get("attributes", []), f"{at}.attributes")
            attributes.update({k: v for k, v in details.items() if k in CONTENT_KEYS})
        elif name.startswith("gen_ai."):
            body = key_values(event.get("attributes", []), f"{at}.attributes")
            old.append(LogEvent(trace, span_id, name, body, at))
    status = raw.get("status") or {}
    code = status.get("code", 0) if isinstance(status, dict) else 0
    message = status.get("message", "") if isinstance(status, dict) else ""
    if isinstance(code, bool) or not isinstance(code, int | str) or code not in _STATUS_CODES:
        raise BadRecord(f"{where}.status.code", f"got {got(code)}; expected 0, 1, 2, "
                        "STATUS_CODE_UNSET, STATUS_CODE_OK or STATUS_CODE_ERROR")
    return Span(trace, span_id, str(raw.get("name", "")),
                 nanos(raw.get("startTimeUnixNano", 0), f"{where}.startTimeUnixNano"),
                 nanos(raw.get("endTimeUnixNano", 0), f"{where}.endTimeUnixNano"),
                 attributes, _STATUS_CODES[code], message if isinstance(message, str) else "",
                 tuple(old))


def documents(path: Path, errors: list[LoadError]) -> Iterator[tuple[int, JsonValue]]:
    """One export document (line 0), or one a line of JSON Lines, streamed."""
    for record in read_json_or_lines(path, errors):
        yield record.line, record.value



def trace_ids(document: JsonValue) -> Iterator[str]:
    """The trace ids of a document's spans, unchecked (``_spans`` checks them)."""
    resources = document.get("resourceSpans") if isinstance(document, dict) else None
    for resource in resources if isinstance(resources, list) else []:
        scopes = resource.get("scopeSpans") if isinstance(resource, dict) else None
        for scope in scopes if isinstance(scopes, list) else []:
            spans = scope.get("spans") if isinstance(scope, dict) else None
            for span in spans if isinstance(spans, list) else []:
                trace = span.get("traceId") if isinstance(span, dict) else None
                if isinstance(trace, str):
                    yield trace




def records(document: JsonValue) -> tuple[list[Span], list[LogEvent]]:
    """The spans of a traces document, or the GenAI events of a logs document (log
    records of other names are not GenAI's and are passed over)."""
    if isinstance(document, dict) and "resourceLogs" in document:
        return [], list(_log_events(document))
    return list(spans(document)), []


def _log_events(document: JsonObject) -> Iterator[LogEvent]:
    for r, resource in enumerate(olist(document, "resourceLogs", "")):
        at = f"resourceLogs[{r}]"
        if not isinstance(resource, dict):
            raise BadRecord(at, f"got {got(resource)}; expected an object")
        for s, scope in enumerate(olist(resource, "scopeLogs", at)):
            sat = f"{at}.scopeLogs[{s}]"
            if not isinstance(scope, dict):
                raise BadRecord(sat, f"got {got(scope)}; expected an object")
            for k, raw in enumerate(olist(scope, "logRecords", sat)):
                where = f"{sat}.logRecords[{k}]"
                if not isinstance(raw, dict):
                    raise BadRecord(where, f"got {got(raw)}; expected a log record")
                attributes = key_values(raw.get("attributes", []), f"{where}.attributes")
                name = raw.get("eventName") or attributes.get("event.name")
                if not isinstance(name, str) or not name.startswith("gen_ai."):
                    continue
                trace, span_id = raw.get("traceId"), raw.get("spanId")
                if not isinstance(trace, str) or not trace or not isinstance(span_id, str) \
                        or not span_id:
                    raise BadRecord(where, f"the GenAI event {name!r} names no span; expected "
                                    f"traceId and spanId, got {got(trace)} and {got(span_id)}")
                body = any_value(raw.get("body", {}), f"{where}.body")
                yield LogEvent(trace, span_id, name, body, f"log record {name!r} of span "
                               f"{span_id}", attributes)

