"""OpenInference spans (Arize Phoenix's conventions, an OTLP JSON export) to runs:
one trace, one run.

OpenInference instrumentations (``openinference-instrumentation-openai``, ...)
write ``openinference.span.kind`` on each span and flatten the messages of an
``LLM`` span into attributes (``llm.input_messages.0.message.role``,
``llm.output_messages.0.message.tool_calls.0.tool_call.function.name``). The
conversation is rebuilt from the ``LLM`` spans in start order (the first call's
messages, then what each later call added after its last assistant message, and
every call's output); a ``TOOL`` span gives a result no later call re-sent; a
``GUARDRAIL`` span whose status is an error ends the run with an ``error`` event,
as does a failed ``AGENT`` or ``CHAIN`` span; an ``LLM`` output cut by its token
limit ends it with a ``timeout``. ``EVALUATOR`` spans are kept in the metadata.
The mapping is docs/import/openinference.md. The spans are held until the files
are read. Never imports OpenInference or OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from metaeval.contract import Error, JsonObject, JsonValue, Message, Timeout
from metaeval.importers.runs.common import (
    INNER_DEPTH,
    BadRecord,
    ImportedRun,
    RunFormat,
    ended,
    got,
)
from metaeval.importers.runs.openai_agents import ChatConversation
from metaeval.importers.runs.otlp_json import STATUS_ERROR, Span, documents, records
from metaeval.untrusted_json import JsonInputError, LoadError, parse_json

__all__ = ["FORMAT", "read_openinference"]

KIND = "openinference.span.kind"
KINDS = {"LLM", "TOOL", "CHAIN", "AGENT", "GUARDRAIL", "EVALUATOR", "RETRIEVER", "EMBEDDING",
         "RERANKER", "PROMPT", "UNKNOWN"}
_CUT = {"length", "max_tokens"}
_FILTERED = {"content_filter"}


def _nested(attributes: JsonObject, prefix: str) -> list[JsonValue]:
    """The flattened list under ``prefix`` (``llm.input_messages``) rebuilt:
    ``prefix.0.message.role`` -> ``[{"message": {"role": ...}}]``; numeric parts
    are list positions."""
    root: dict[str, JsonValue] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix + "."):
            continue
        node = root
        parts = key[len(prefix) + 1:].split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise BadRecord(key, f"got a value and a table at {part!r}; expected one")
            node = child
        node[parts[-1]] = value
    listed = _listed(root)
    return listed if isinstance(listed, list) else []


def _listed(node: JsonValue) -> JsonValue:
    if not isinstance(node, dict):
        return node
    if node and all(k.isdigit() for k in node):
        return [_listed(node[k]) for k in sorted(node, key=int)]
    return {k: _listed(v) for k, v in node.items()}


def _chat(raw: JsonValue, where: str) -> JsonValue:
    """An OpenInference message (``{"message": {role, content | contents, tool_calls,
    tool_call_id}}``) as a chat-completions message."""
    message = raw.get("message") if isinstance(raw, dict) else None
    if not isinstance(message, dict):
        raise BadRecord(where, f"got {got(raw)}; expected {{message: {{role, content}}}}")
    out: JsonObject = {"role": message.get("role")}
    content = message.get("content")
    contents = message.get("contents")
    if content is None and isinstance(contents, list):
        content = [c.get("message_content") for c in contents if isinstance(c, dict)]
    out["content"] = content
    if "tool_call_id" in message:
        out["tool_call_id"] = message["tool_call_id"]
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [c.get("tool_call") if isinstance(c, dict) else c for c in calls]
    return out


def _messages(span: Span, key: str) -> list[JsonValue]:
    return [_chat(m, f"{span.where}.{key}.{i}") for i, m in
            enumerate(_nested(span.attributes, key))]


def _finish(span: Span) -> list[str]:
    """The finish reasons an LLM span's ``output.value`` (the provider's JSON) names."""
    value = span.attributes.get("output.value")
    if not isinstance(value, str) or span.attributes.get("output.mime_type") != \
            "application/json":
        return []
    try:
        parsed = parse_json(value, max_depth=INNER_DEPTH)
    except JsonInputError:
        return []
    choices = parsed.get("choices") if isinstance(parsed, dict) else None
    return [str(c.get("finish_reason")) for c in (choices if isinstance(choices, list) else [])
            if isinstance(c, dict)]


def _run(trace: str, spans: list[Span], source: str) -> ImportedRun | None:
    kinds = [s for s in spans if KIND in s.attributes]
    if not kinds:
        return None
    conversation = ChatConversation()
    metadata: JsonObject = {"trace_id": trace}
    evaluations: list[JsonValue] = []
    guardrails: JsonObject = {}
    stop: Timeout | Error | None = None
    last_llm: Span | None = None
    for span in sorted(kinds, key=lambda s: (s.start, s.end)):
        kind = span.attributes[KIND]
        if not isinstance(kind, str) or kind.upper() not in KINDS:
            raise BadRecord(f"{span.where}.{KIND}", f"got {got(kind)}; expected one of "
                            f"{', '.join(sorted(KINDS))}")
        kind = kind.upper()
        failed = span.status_code == STATUS_ERROR
        if kind == "LLM":
            inputs, outputs = (_messages(span, "llm.input_messages"),
                               _messages(span, "llm.output_messages"))
            if not inputs and not outputs:
                raise BadRecord(f"{span.where}.llm.input_messages", "missing: the messages "
                                "were not recorded (OPENINFERENCE_HIDE_INPUTS or _OUTPUTS?); "
                                "expected llm.input_messages and llm.output_messages")
            conversation.generation({"input": inputs, "output": outputs}, span.where)
            last_llm = span
            for key, name in (("llm.model_name", "model"), ("llm.system", "provider")):
                if isinstance(span.attributes.get(key), str):
                    metadata.setdefault(name, span.attributes[key])
        elif kind == "TOOL":
            conversation.function({"name": span.attributes.get("tool.name"),
                                   "output": span.attributes.get("output.value")},
                                  {"message": span.status_message} if failed else None)
        elif kind == "GUARDRAIL":
            guardrails[span.name] = failed
            if failed and not isinstance(stop, Error):
                stop = Error(f"guardrail {span.name!r} tripped: "
                             f"{span.status_message or 'its span failed'}")
        elif kind == "EVALUATOR":
            evaluations.append({"name": span.name,
                                "output": span.attributes.get("output.value")})
        elif kind in ("AGENT", "CHAIN") and failed and stop is None:
            stop = Error(f"{span.where} failed: {span.status_message or 'an error'}")
    if stop is None and last_llm is not None:
        reasons = _finish(last_llm)
        if any(r in _CUT for r in reasons):
            stop = Timeout(f"{last_llm.where}: finish reason 'length': the model was cut off")
        elif any(r in _FILTERED for r in reasons):
            stop = Error(f"{last_llm.where}: finish reason 'content_filter'")
    if guardrails:
        metadata["guardrails"] = guardrails
    if evaluations:
        metadata["evaluations"] = evaluations
    if conversation.tool_errors:
        metadata["tool_errors"] = conversation.tool_errors
    if stop is not None:
        metadata["ended"] = stop.detail
    session = next((s.attributes["session.id"] for s in kinds
                    if isinstance(s.attributes.get("session.id"), str)), "")
    instruction = next((e.content for e in conversation.events
                        if isinstance(e, Message) and e.role == "user"), "")
    return ImportedRun(trace, source, trace, tuple(ended(conversation.events, stop)),
                       instruction, metadata=metadata, conversation=str(session))


def read_openinference(paths: Iterable[Path], errors: list[LoadError]
                       ) -> Iterator[ImportedRun]:
    """Every trace with an OpenInference span as a run; a bad document line or a bad
    trace is one error in ``errors``."""
    traces: dict[str, list[Span]] = {}
    first: dict[str, str] = {}
    for path in paths:
        for line, document in documents(path, errors):
            try:
                found, _ = records(document)
            except BadRecord as bad:
                errors.append(LoadError(str(path), line, bad.field, bad.message))
                continue
            for span in found:
                traces.setdefault(span.trace, []).append(span)
                first.setdefault(span.trace, f"{path}:{line}" if line else
                                 f"{path}#trace {span.trace}")
    for trace, spans in traces.items():
        try:
            run = _run(trace, spans, first[trace])
        except BadRecord as bad:
            file, _, line_text = first[trace].rpartition(":")
            errors.append(LoadError(file or first[trace], int(line_text) if
                                    line_text.isdigit() else 0, f"trace {trace}: {bad.field}",
                                    bad.message))
            continue
        if run is not None:
            yield run


def sniff(head: bytes, path: Path) -> bool:
    """An OTLP JSON export whose spans carry ``openinference.span.kind``."""
    return b'"resourceSpans"' in head[:4096] and b'"openinference.span.kind"' in head


FORMAT = RunFormat("openinference", "an OTLP JSON export of OpenInference spans (Arize "
                   "Phoenix's conventions)", (".jsonl", ".json"), sniff,
                   "import/openinference.md", read_openinference, per_call=True)
