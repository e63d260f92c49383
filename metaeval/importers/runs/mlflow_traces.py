"""MLflow traces to runs, and their human feedback to labels: one trace, one run.

Reads the trace JSON MLflow 3 writes itself: ``Trace.to_json()`` (``{"info":
TraceInfo, "data": {"spans": [...]}}``) one a line, one whole document, a list of
them, or what ``mlflow traces search --output json`` prints (``{"traces": [...]}``).
The conversation is rebuilt from the ``CHAT_MODEL`` and ``LLM`` spans in start order
(their ``mlflow.spanInputs`` ``messages`` and ``mlflow.spanOutputs``, the OpenAI chat
shape the autologging writes): the first call's messages, then what each later call
added after its last assistant message, and every call's reply. A ``TOOL`` span
answers the model's last unanswered call of its name, or is a call of its own. How
the run ended: the trace's ``state`` ``ERROR`` or a failed root span, a failed
``GUARDRAIL`` span, and a reply cut by its token limit. Expectations become the
task's criteria; every assessment is kept in the metadata; ``HUMAN`` feedback is
read as labels (``assessment_labels``), any other source's is counted, never read
as a person's. The mapping is docs/import/mlflow.md. Never imports MLflow.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.contract import Error, Event, JsonObject, JsonValue, Message, Timeout, ToolCall
from metaeval.contract import ToolResult as Result
from metaeval.errors import InputError
from metaeval.importers.runs.common import (
    INNER_DEPTH,
    BadRecord,
    ImportedRun,
    RunFormat,
    chat_events,
    decode_tool_content,
    ended,
    got,
)
from metaeval.untrusted_json import (
    JsonInputError,
    LoadError,
    Record,
    parse_json,
    read_json_or_lines,
)

__all__ = ["FORMAT", "AssessmentLabels", "assessment_labels", "read_mlflow"]

SPAN_TYPES = {"LLM", "CHAIN", "AGENT", "TOOL", "CHAT_MODEL", "RETRIEVER", "PARSER", "EMBEDDING",
              "RERANKER", "MEMORY", "UNKNOWN", "WORKFLOW", "TASK", "GUARDRAIL", "EVALUATOR"}
STATES = {"OK", "ERROR", "IN_PROGRESS", "STATE_UNSPECIFIED"}
_STATUS = {"STATUS_CODE_UNSET": False, "STATUS_CODE_OK": False, "STATUS_CODE_ERROR": True}
_CUT = {"length", "max_tokens"}
_FILTERED = {"content_filter"}
SESSION = "mlflow.trace.session"
"""The trace metadata key MLflow groups a conversation's traces by."""
_PASS = {"pass", "yes", "true"}
_FAIL = {"fail", "no", "false"}


def _attribute(attributes: JsonObject, key: str, where: str) -> JsonValue:
    """An ``mlflow.*`` attribute of a span: MLflow writes each one as JSON text."""
    raw = attributes.get(key)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise BadRecord(f"{where}.attributes.{key}", f"got {got(raw)}; expected JSON text, as "
                        "MLflow writes a span's attributes")
    try:
        return parse_json(raw, max_depth=INNER_DEPTH)
    except JsonInputError as e:
        raise BadRecord(f"{where}.attributes.{key}", f"not JSON ({e.message}); expected JSON "
                        "text, as MLflow writes a span's attributes") from e


@dataclass(frozen=True, slots=True)
class _Span:
    id: str
    parent: str | None
    name: str
    kind: str
    start: int
    end: int
    failed: bool
    message: str
    attributes: JsonObject
    where: str

    def value(self, key: str) -> JsonValue:
        return _attribute(self.attributes, key, self.where)


def _int(value: JsonValue, where: str) -> int:
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 64:
        return value
    raise BadRecord(where, f"got {got(value)}; expected a time in nanoseconds")


def _text(value: JsonValue, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise BadRecord(where, f"got {got(value)}; expected a non-empty string")
    return value


def _span(raw: JsonValue, i: int) -> _Span:
    where = f"data.spans[{i}]"
    if not isinstance(raw, dict):
        raise BadRecord(where, f"got {got(raw)}; expected a span object")
    span_id = _text(raw.get("span_id"), f"{where}.span_id")
    where = f"span {span_id} ({raw.get('name')!r})"
    parent = raw.get("parent_span_id")
    if parent is not None:
        parent = _text(parent, f"{where}.parent_span_id")
    attributes = raw.get("attributes")
    if not isinstance(attributes, dict):
        raise BadRecord(f"{where}.attributes", f"got {got(attributes)}; expected an object")
    status = raw.get("status")
    code = status.get("code") if isinstance(status, dict) else None
    if not isinstance(status, dict) or not isinstance(code, str) or code not in _STATUS:
        raise BadRecord(f"{where}.status.code", f"got {got(code)}; expected one of "
                        f"{', '.join(_STATUS)}")
    message = status.get("message") or ""
    # MLflow's own default for a span no one typed is UNKNOWN; a type of the user's
    # own (span_type takes any string) is kept, and counted in the run's metadata.
    kind = _attribute(attributes, "mlflow.spanType", where) or "UNKNOWN"
    if not isinstance(kind, str):
        raise BadRecord(f"{where}.attributes.mlflow.spanType", f"got {got(kind)}; expected a "
                        f"span type: one of {', '.join(sorted(SPAN_TYPES))}, or a name")
    return _Span(span_id, parent, _text(raw.get("name"), f"{where}.name"), kind,
                 _int(raw.get("start_time_unix_nano"), f"{where}.start_time_unix_nano"),
                 _int(raw.get("end_time_unix_nano"), f"{where}.end_time_unix_nano"),
                 _STATUS[code], message if isinstance(message, str) else str(message),
                 attributes, where)


def _after_last_assistant(messages: list[JsonValue]) -> int:
    for k in range(len(messages) - 1, -1, -1):
        message = messages[k]
        if isinstance(message, dict) and message.get("role") == "assistant":
            return k + 1
    return 0


def _replies(outputs: JsonValue, where: str) -> tuple[list[tuple[JsonValue, str]], list[str]]:
    """A chat span's reply messages (each with its field) and finish reasons."""
    if isinstance(outputs, str):
        return [({"role": "assistant", "content": outputs}, where)], []
    if isinstance(outputs, dict) and isinstance(outputs.get("choices"), list):
        choices = outputs["choices"]
        assert isinstance(choices, list)
        found = [(c.get("message") if isinstance(c, dict) else c, f"{where}.choices[{k}].message")
                 for k, c in enumerate(choices)]
        reasons = [str(c.get("finish_reason")) for c in choices if isinstance(c, dict)]
        return found, reasons
    if isinstance(outputs, dict) and "role" in outputs:
        return [(outputs, where)], []
    raise BadRecord(where, f"got {got(outputs)}; expected a chat completion ({{choices: "
                    "[{message}]}}), a message or a string")


@dataclass
class _Conversation:
    """The run rebuilt span by span: the history each model call re-sent read once."""

    events: list[Event] = field(default_factory=list)
    started: bool = False
    reasons: list[str] = field(default_factory=list)
    tool_errors: list[JsonValue] = field(default_factory=list)

    def _add(self, events: list[Event]) -> None:
        calls = {e.id for e in self.events if isinstance(e, ToolCall)}
        answered = {e.call_id for e in self.events if isinstance(e, Result)}
        self.events += [e for e in events
                        if not (isinstance(e, ToolCall) and e.id in calls)
                        and not (isinstance(e, Result) and e.call_id in answered)]

    def chat(self, span: _Span) -> None:
        inputs_at = f"{span.where}.attributes.mlflow.spanInputs"
        shape = span.value("mlflow.message.format")
        if shape is not None and shape != "openai":
            raise BadRecord(f"{span.where}.attributes.mlflow.message.format", f"got "
                            f"{got(shape)}; expected 'openai' (chat-completions messages)")
        inputs = span.value("mlflow.spanInputs")
        messages = inputs.get("messages") if isinstance(inputs, dict) else None
        if not isinstance(messages, list):
            hint = (" (a Responses API call: its input items are not read)"
                    if isinstance(inputs, dict) and "input" in inputs else "")
            raise BadRecord(inputs_at, f"got {got(inputs)}{hint}; expected {{messages: [...]}}, "
                            "chat-completions messages")
        new = _after_last_assistant(messages) if self.started else 0
        for i, message in enumerate(messages[new:], start=new):
            self._add(chat_events(message, f"{inputs_at}.messages[{i}]"))
        self.started = True
        if span.failed:
            return  # a call that raised has no reply; the next call re-sends the history
        outputs_at = f"{span.where}.attributes.mlflow.spanOutputs"
        replies, self.reasons = _replies(span.value("mlflow.spanOutputs"), outputs_at)
        for reply, where in replies:
            self._add(chat_events(reply, where))

    def tool(self, span: _Span) -> None:
        """A tool that ran: its result answers the first unanswered call of its name (a
        later call's history re-sends it, read once); a tool no model call asked for is
        a call of its own, so that a prohibition still sees it."""
        names = {span.name}
        function = span.value("mlflow.spanFunctionName")
        if isinstance(function, str):
            names.add(function)
        answered = {e.call_id for e in self.events if isinstance(e, Result)}
        waiting = [e for e in self.events if isinstance(e, ToolCall)
                   and e.id not in answered and e.tool in names]
        if waiting:
            call_id = waiting[0].id
        else:
            inputs = span.value("mlflow.spanInputs")
            call_id = f"span:{span.id}"
            self.events.append(ToolCall(call_id, span.name, inputs if isinstance(inputs, dict)
                                        else {"input": inputs}))
        if span.failed:
            self.tool_errors.append(call_id)
            self.events.append(Result(call_id, f"Error: {span.message or 'the tool failed'}",
                                      is_error=True))
            return
        output = span.value("mlflow.spanOutputs")
        self.events.append(Result(call_id, decode_tool_content(output) if isinstance(output, str)
                                  else output))


def _spans(data: JsonValue) -> list[_Span]:
    raw = data.get("spans") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise BadRecord("data.spans", f"got {got(raw)}; expected a list of spans (a trace "
                        "searched with --no-include-spans has none)")
    return sorted((_span(s, i) for i, s in enumerate(raw)), key=lambda s: (s.start, s.end))


def _ended(state: str, spans: list[_Span], reasons: list[str]) -> Timeout | Error | None:
    for span in spans:
        if span.kind == "GUARDRAIL" and span.failed:
            return Error(f"guardrail {span.name!r} tripped: {span.message or 'its span failed'}")
    ids = {s.id for s in spans}
    root = next((s for s in spans if s.parent is None or s.parent not in ids), None)
    if state == "ERROR" or (root is not None and root.failed):
        failed = [s for s in spans if s.failed]
        first = root if root is not None and root.failed else (failed[0] if failed else None)
        detail = f"{first.where} failed: {first.message or 'an error'}" if first else \
            "the trace's state is ERROR"
        return Error(detail)
    if state == "IN_PROGRESS":
        return Error("the trace was exported in progress: the run had not ended")
    if any(r in _CUT for r in reasons):
        return Timeout("the last reply's finish reason is 'length': the model was cut off")
    if any(r in _FILTERED for r in reasons):
        return Error("the last reply's finish reason is 'content_filter'")
    return None


def _assessments(info: JsonObject) -> list[JsonObject]:
    raw = info.get("assessments", [])
    if not isinstance(raw, list):
        raise BadRecord("info.assessments", f"got {got(raw)}; expected a list")
    for i, a in enumerate(raw):
        if not isinstance(a, dict) or not isinstance(a.get("assessment_name"), str) or (
                "feedback" in a) == ("expectation" in a):
            raise BadRecord(f"info.assessments[{i}]", f"got {got(a)}; expected an assessment "
                            "(assessment_name, source, and feedback or expectation)")
    return [a for a in raw if isinstance(a, dict)]


def _source(a: JsonObject) -> tuple[str, str]:
    source = a.get("source")
    kind = source.get("source_type") if isinstance(source, dict) else None
    who = source.get("source_id") if isinstance(source, dict) else None
    return (kind if isinstance(kind, str) else "", who if isinstance(who, str) else "")


def _valid(a: JsonObject) -> bool:
    """False for an assessment a later one overrode (MLflow keeps it, marked)."""
    return a.get("valid") is not False


def _kept(a: JsonObject) -> JsonObject:
    kind, who = _source(a)
    body = a.get("feedback") if "feedback" in a else a.get("expectation")
    value = body.get("value") if isinstance(body, dict) else None
    kept: JsonObject = {"name": a["assessment_name"], "kind": "feedback" if "feedback" in a
                        else "expectation", "source_type": kind, "source_id": who,
                        "value": value}
    for key in ("rationale", "span_id"):
        if a.get(key) is not None:
            kept[key] = a[key]
    if not _valid(a):
        kept["valid"] = False
    return kept


def _criteria(assessments: list[JsonObject]) -> JsonObject:
    criteria: JsonObject = {}
    for i, a in enumerate(assessments):
        if "expectation" not in a or not _valid(a) or a.get("span_id"):
            continue
        body = a["expectation"]
        value = body.get("value") if isinstance(body, dict) else None
        name = str(a["assessment_name"])
        if name in criteria and criteria[name] != value:
            raise BadRecord(f"info.assessments[{i}].expectation.value", f"got {got(value)} and "
                            f"{got(criteria[name])} for expectation {name!r}; expected one")
        criteria[name] = value
    return criteria


def _run(info: JsonObject, data: JsonValue, source: str) -> ImportedRun:
    trace_id = _text(info.get("trace_id"), "info.trace_id")
    state = info.get("state")
    if not isinstance(state, str) or state not in STATES:
        raise BadRecord("info.state", f"got {got(state)}; expected one of "
                        f"{', '.join(sorted(STATES))}")
    spans = _spans(data)
    conversation = _Conversation()
    metadata: JsonObject = {"trace_id": trace_id, "state": state}
    guardrails: JsonObject = {}
    evaluations: list[JsonValue] = []
    model_errors: list[JsonValue] = []
    custom: JsonObject = {}
    for span in spans:
        if span.kind in ("CHAT_MODEL", "LLM"):
            conversation.chat(span)
            if span.failed:
                model_errors.append(f"{span.where}: {span.message}")
            model = span.value("mlflow.llm.model")
            if isinstance(model, str):
                metadata.setdefault("model", model)
        elif span.kind == "TOOL":
            conversation.tool(span)
        elif span.kind == "GUARDRAIL":
            guardrails[span.name] = span.failed
        elif span.kind == "EVALUATOR":
            evaluations.append({"name": span.name, "output": span.value("mlflow.spanOutputs")})
        elif span.kind not in SPAN_TYPES:
            own = custom.get(span.kind, 0)
            custom[span.kind] = (own if isinstance(own, int) else 0) + 1
    stop = _ended(state, spans, conversation.reasons)
    if stop is None and not conversation.started and not any(
            isinstance(e, ToolCall) for e in conversation.events):
        # A run stopped before its first model call (a guardrail) is its end alone;
        # one that ended well with nothing recorded has nothing to grade.
        raise BadRecord("data.spans", "no CHAT_MODEL, LLM or TOOL span: nothing of the run "
                        "was recorded; expected a model call's messages (mlflow.openai.autolog, "
                        "or a span of type CHAT_MODEL with inputs {messages})")
    assessments = _assessments(info)
    tags = info.get("tags") if isinstance(info.get("tags"), dict) else {}
    trace_meta = info.get("trace_metadata")
    trace_meta = trace_meta if isinstance(trace_meta, dict) else {}
    assert isinstance(tags, dict)
    name = tags.get("mlflow.traceName")
    session = trace_meta.get(SESSION)
    kept: list[tuple[str, JsonValue]] = [
        ("trace_name", name), ("session", session), ("user", trace_meta.get("mlflow.trace.user")),
        ("tags", {k: v for k, v in tags.items() if not k.startswith("mlflow.")}),
        ("guardrails", guardrails), ("evaluations", evaluations), ("model_errors", model_errors),
        ("span_types_not_read", custom),
        ("tool_errors", conversation.tool_errors),
        ("assessments", list[JsonValue]([_kept(a) for a in assessments])),
        ("ended", stop.detail if stop is not None else None)]
    for key, value in kept:
        if value not in (None, {}, []):
            metadata[key] = value
    instruction = next((e.content for e in conversation.events
                        if isinstance(e, Message) and e.role == "user"), "")
    return ImportedRun(trace_id, source, name if isinstance(name, str) and name else trace_id,
                       tuple(ended(conversation.events, stop)), instruction,
                       _criteria(assessments), metadata=metadata,
                       conversation=session if isinstance(session, str) else "")


def _traces(record: Record) -> Iterator[tuple[str, JsonValue]]:
    """The traces a record holds, each with its field in the record ('' for itself)."""
    value = record.value
    listed = value.get("traces") if isinstance(value, dict) else None
    if isinstance(listed, list):
        yield from ((f"traces[{i}]", t) for i, t in enumerate(listed))
    elif isinstance(value, list):
        yield from ((f"[{i}]", t) for i, t in enumerate(value))
    else:
        yield "", value


def _trace(trace: JsonValue) -> tuple[JsonObject, JsonValue]:
    """A trace's ``info`` and ``data``; an MLflow 2 trace is named as one."""
    info = trace.get("info") if isinstance(trace, dict) else None
    if isinstance(trace, dict) and isinstance(info, dict):
        if "request_id" in info and "trace_id" not in info:
            raise BadRecord("info", "an MLflow 2 trace (info.request_id); expected the trace "
                            "JSON MLflow 3 writes (info.trace_id)")
        if "data" in trace:
            return info, trace["data"]
    raise BadRecord("", f"got {got(trace)}; expected an MLflow trace ({{info, data}}, as "
                    "Trace.to_json() writes it)")


def _field(at: str, trace_id: JsonValue, field_: str) -> str:
    """An error's field: the trace (its id, or its place in the record), then the field."""
    prefix = f"trace {trace_id}" if isinstance(trace_id, str) and trace_id else at
    return f"{prefix}: {field_}" if prefix and field_ else prefix or field_


def _trace_id(trace: JsonValue) -> JsonValue:
    info = trace.get("info") if isinstance(trace, dict) else None
    return info.get("trace_id") if isinstance(info, dict) else None


def read_mlflow(paths: Iterable[Path], errors: list[LoadError]) -> Iterator[ImportedRun]:
    """Every trace of the files as a run; a bad record or trace is one error."""
    for path in paths:
        for record in read_json_or_lines(path, errors):
            for at, trace in _traces(record):
                trace_id = _trace_id(trace)
                source = (f"{path}:{record.line}" if record.line
                          else f"{path}:trace {trace_id if isinstance(trace_id, str) else at}")
                try:
                    info, data = _trace(trace)
                    yield _run(info, data, source)
                except BadRecord as bad:
                    errors.append(record.error(_field(at, trace_id, bad.field), bad.message))


def _label(value: JsonValue) -> str:
    """A feedback value as a label: ``True``/``False`` and the words MLflow's judges and
    review app write (``yes``/``no``, ``pass``/``fail``); anything else is passed as
    written, for the labels check to refuse with the row named."""
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if isinstance(value, str):
        word = value.strip().casefold()
        if word in _PASS:
            return "pass"
        if word in _FAIL:
            return "fail"
        return "unsure" if word == "unsure" else value
    return json.dumps(value)


class AssessmentLabels:
    """The ``HUMAN`` feedback of the traces in one file as labels-file rows
    (``RunFormat.labels``); ``not_read`` counts the feedback left out, by why: another
    source's (``LLM_JUDGE``, ``CODE``), one a later assessment overrode, one on a span."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.not_read: dict[str, int] = {}
        self._rows: list[tuple[str, dict[str, object]]] | None = None
        self._problems: list[str] = []

    def __iter__(self) -> Iterator[tuple[str, dict[str, object]]]:
        # The rows are kept (left_out counts them once) with the file's errors, so a
        # torn last line or one bad trace costs its own feedback, not every trace's.
        if self._rows is None:
            self._rows, self._problems = [], []
            self._rows += self._read(self._problems)
        yield from self._rows
        if self._problems:
            more = len(self._problems) - 3
            raise InputError("; ".join(self._problems[:3])
                             + (f" (and {more} more lines or traces)" if more > 0 else ""))

    def _skip(self, why: str) -> None:
        self.not_read[why] = self.not_read.get(why, 0) + 1

    @property
    def left_out(self) -> list[str]:
        """The feedback read and not given as rows, said as warnings where the labels
        are read (``labels_files``)."""
        notes = []
        for why, count in sorted(self.not_read.items()):
            if why == "overridden":
                what = "overridden by a later assessment"
            elif why == "on a span":
                what = "on a span, not on the whole trace"
            else:
                what = (f"from source type {why}: a verdict of no person (kept in the runs' "
                        "metadata.assessments)")
            notes.append(f"{count} feedback {what}: not read as labels")
        return notes

    def _read(self, problems: list[str]) -> Iterator[tuple[str, dict[str, object]]]:
        """The rows of every trace read; each trace or line that could not be read is
        said in ``problems`` (its line, its trace, its field), and the rest read on."""
        errors: list[LoadError] = []
        for record in read_json_or_lines(self.path, errors):
            for at, trace in _traces(record):
                try:
                    info, _ = _trace(trace)
                    trace_id = _text(info.get("trace_id"), "info.trace_id")
                    assessments = _assessments(info)
                except BadRecord as bad:
                    parts = [f"line {record.line}" if record.line else "",
                             _field(at, _trace_id(trace), bad.field), bad.message]
                    problems.append(": ".join(p for p in parts if p))
                    continue
                source = (f"{self.path}:{record.line}" if record.line
                          else f"{self.path}:trace {trace_id}")
                yield from self._rows_of(trace_id, assessments, source)
        for error in errors:
            parts = [f"line {error.line}" if error.line else "", error.field, error.message]
            problems.append(": ".join(p for p in parts if p))

    def _rows_of(self, trace_id: str, assessments: list[JsonObject], source: str
                 ) -> Iterator[tuple[str, dict[str, object]]]:
        for a in assessments:
            if "feedback" not in a:
                continue  # an expectation: the task's criteria, not a verdict
            kind, who = _source(a)
            if not _valid(a):
                self._skip("overridden")
            elif a.get("span_id"):
                self._skip("on a span")
            elif kind != "HUMAN":
                self._skip(kind or "no source type")
            else:
                body = a["feedback"]
                value = body.get("value") if isinstance(body, dict) else None
                rationale = a.get("rationale")
                yield source, {"run_id": trace_id, "check": a["assessment_name"],
                               "label": None if value is None else _label(value),
                               "annotator": who or None, "rationale": rationale}


def assessment_labels(path: Path) -> AssessmentLabels:
    """The labels a file of MLflow traces carries: its traces' ``HUMAN`` feedback."""
    return AssessmentLabels(path)


def sniff(head: bytes, path: Path) -> bool:
    """MLflow trace JSON: a trace info's ``trace_location`` up front."""
    first = head[:4096]
    return b'"trace_location"' in first and b'"info"' in first


FORMAT = RunFormat("mlflow", "MLflow 3 traces as Trace.to_json() or `mlflow traces search "
                   "--output json` writes them, with their assessments", (".jsonl", ".json"),
                   sniff, "import/mlflow.md", read_mlflow, extra="mlflow", per_call=True,
                   labels=assessment_labels)
