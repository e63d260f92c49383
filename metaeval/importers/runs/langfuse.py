"""Langfuse traces to runs, and Langfuse scores to labels: one trace, one run.

Reads what Langfuse's public API returns, as the SDK's client gives it and a
team's script writes it (``page.json()``, one a line, or one JSON document):
observations (``GET /api/public/v2/observations``: ``{"data": [...], "meta"}``
pages, or single observations) and scores (``GET /api/public/v3/scores``, or a
score as ``POST /api/public/scores`` takes it, with its ``traceId``). Observations
are grouped by ``traceId``; the conversation is rebuilt from the ``GENERATION``
observations in start order (chat messages: the first call's input, what each
later call added after its last assistant message, every call's output), a
``TOOL`` observation gives a result no later call re-sent, and an observation at
level ``ERROR`` (a ``GUARDRAIL`` that tripped, a failed ``AGENT``) ends the run
with an ``error`` event. Scores people entered (``source: ANNOTATION``) are the
labels (``langfuse_labels``); API and EVAL scores are the harness's own, kept in
the run's ``metadata.scores`` and ``scores`` (for ``--label-from``), never labels.
The mapping is docs/import/langfuse.md. Observations are held until the files
are read (a trace's observations may come in several pages). An item of an
unknown shape is an error naming its file, line and field. Never imports Langfuse.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from metaeval.contract import Error, Event, JsonObject, JsonValue, Message, ToolCall, ToolResult
from metaeval.importers.runs.common import (
    INNER_DEPTH,
    BadRecord,
    ImportedRun,
    RunFormat,
    ended,
    got,
)
from metaeval.importers.runs.openai_agents import ChatConversation
from metaeval.untrusted_json import JsonInputError, LoadError, parse_json, read_json_or_lines

__all__ = ["FORMAT", "LangfuseLabels", "langfuse_labels", "read_langfuse",
           "read_langfuse_labels"]

TYPES = {"SPAN", "GENERATION", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EVALUATOR",
         "EMBEDDING", "GUARDRAIL"}
LEVELS = {"DEBUG", "DEFAULT", "WARNING", "ERROR"}
SOURCES = {"ANNOTATION", "API", "EVAL"}
DATA_TYPES = {"BOOLEAN", "NUMERIC", "CATEGORICAL", "TEXT", "CORRECTION"}
VERDICTS = ("pass", "fail", "unsure")
MAX_OBSERVATIONS = 10_000
"""Observations one trace may hold: the whole trace is held until the files are read."""
MAX_TRACES = 100_000
"""Traces the files may hold, for the same reason."""


@dataclass
class _Trace:
    id: str
    source: str
    observations: list[tuple[str, JsonObject]] = field(default_factory=list)
    scores: list[JsonObject] = field(default_factory=list)
    too_big: bool = False


def _items(value: JsonValue) -> list[JsonValue]:
    data = value.get("data") if isinstance(value, dict) else None
    if isinstance(data, list):
        return data
    return value if isinstance(value, list) else [value]


def _is_score(item: JsonObject) -> bool:
    return "dataType" in item and ("source" in item or "traceId" in item)


def _score_trace(score: JsonObject) -> str | None:
    """The trace a score is on: its ``subject`` (v3: a trace, or an observation with its
    ``traceId``), or its ``traceId`` (as the SDK posts it); None on a session's."""
    subject = score.get("subject")
    if isinstance(subject, dict):
        kind = subject.get("kind")
        trace = subject.get("id") if kind == "trace" else subject.get("traceId")
        return trace if kind in ("trace", "observation") and isinstance(trace, str) else None
    trace = score.get("traceId")
    return trace if isinstance(trace, str) and trace else None


def _decoded(raw: JsonValue, where: str) -> JsonValue:
    """An input or output: the v2 API returns them as the raw strings stored, JSON
    inside when the SDK wrote a value; a string that is not JSON stays a string."""
    if not isinstance(raw, str):
        return raw
    try:
        return parse_json(raw, max_depth=INNER_DEPTH)
    except JsonInputError as e:
        if "nested deeper" in str(e):
            raise BadRecord(where, str(e)) from None
        return raw


def _messages(raw: JsonValue, where: str, output: bool) -> list[JsonValue]:
    """A generation's input or output as chat messages: a list of them, an object
    with ``messages``, one message (an output), or the text alone (a prompt: the
    user's message; a reply: the assistant's)."""
    value = _decoded(raw, where)
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        messages: JsonValue = value["messages"]
        assert isinstance(messages, list)
        return messages
    if isinstance(value, list):
        return value
    if output and isinstance(value, dict) and "role" in value:
        return [value]
    if isinstance(value, str):  # a prompt or a reply given as its text alone
        return [{"role": "assistant" if output else "user", "content": value}]
    if output and value is None:
        return []
    expected = ("a message, a list of messages or the reply's text" if output else
                "a list of chat messages (or {\"messages\": [...]}) or the prompt's text")
    if value is None:
        raise BadRecord(where, f"missing (not recorded, or not asked for: the `io` fields); "
                        f"expected {expected}")
    raise BadRecord(where, f"got {got(value)}; expected {expected}")


def _text(value: JsonValue) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _observation(item: JsonObject, where: str) -> tuple[str, str, str]:
    """An observation's type, name and level, checked."""
    kind, name, level = item.get("type"), item.get("name"), item.get("level") or "DEFAULT"
    if not isinstance(kind, str) or kind not in TYPES:
        raise BadRecord(f"{where}.type", f"got {got(kind)}; expected one of "
                        f"{', '.join(sorted(TYPES))}")
    if name is not None and not isinstance(name, str):
        raise BadRecord(f"{where}.name", f"got {got(name)}; expected a string")
    if not isinstance(level, str) or level not in LEVELS:
        raise BadRecord(f"{where}.level", f"got {got(level)}; expected one of "
                        f"{', '.join(sorted(LEVELS))}")
    return kind, name or "", level


def _started(observation: tuple[str, JsonObject]) -> datetime:
    """When an observation started: its ``startTime``, read as a time (the API's
    strings leave out a zero fraction, so they do not sort as text)."""
    where, item = observation
    raw = item.get("startTime")
    try:
        started = datetime.fromisoformat(raw) if isinstance(raw, str) else None
    except ValueError:
        started = None
    if started is None:
        raise BadRecord(f"{where}.startTime", f"got {got(raw)}; expected an ISO 8601 time")
    return started if started.tzinfo else started.replace(tzinfo=UTC)


def _failed(kind: str, name: str, item: JsonObject) -> Error:
    message = item.get("statusMessage")
    said = f": {message}" if isinstance(message, str) and message else ""
    if kind == "GUARDRAIL":
        return Error(f"guardrail {name!r} tripped{said}")
    return Error(f"{kind.lower()} {name!r} at level ERROR{said}")


def _tool(rebuilt: ChatConversation, item: JsonObject, name: str, level: str,
          where: str) -> None:
    """A ``TOOL`` observation: the result of the model's last unanswered call of that
    name; a tool no model call asked for (the harness ran it) is a call and its result
    of its own, so that a check of what was called sees it."""
    output = _decoded(item.get("output"), f"{where}.output")
    error = (item.get("statusMessage") or "ERROR") if level == "ERROR" else None
    answered = {e.call_id for e in rebuilt.events if isinstance(e, ToolResult)}
    if any(isinstance(e, ToolCall) and e.id not in answered and e.tool == name
           for e in rebuilt.events):
        rebuilt.function({"name": name, "output": None if output is None
                          else _text(output)}, error)
        return
    call_id = str(item.get("id") or where)
    args = _decoded(item.get("input"), f"{where}.input")
    rebuilt.events.append(ToolCall(call_id, name, args if isinstance(args, dict)
                                   else {} if args is None else {"input": args}))
    if error is not None:
        rebuilt.tool_errors.append(call_id)
    if output is not None:
        rebuilt.events.append(ToolResult(call_id, output))
    elif error is not None:
        rebuilt.events.append(ToolResult(call_id, f"Error: {error}"))


def _conversation(trace: _Trace) -> tuple[list[Event], Error | None, JsonObject]:
    """The trace's events, how it ended and what it says beside them."""
    rebuilt = ChatConversation()
    stop: Error | None = None
    seen: JsonObject = {}
    root: JsonObject | None = None
    generations = 0
    for where, item in sorted(trace.observations, key=_started):
        kind, name, level = _observation(item, where)
        if root is None and not item.get("parentObservationId"):
            root = item
        for key in ("sessionId", "userId", "traceName", "model", "environment", "release"):
            value = item.get(key)
            if isinstance(value, str) and value and key not in seen:
                seen[key] = value
        if kind == "GENERATION":
            generations += 1
            data: JsonObject = {
                "input": _messages(item.get("input"), f"{where}.input", False),
                "output": _messages(item.get("output"), f"{where}.output", True)}
            try:
                rebuilt.generation(data, where)
            except BadRecord as bad:  # the Agents SDK's paths, named as this format's
                raise BadRecord(bad.field.replace(".span_data.", "."), bad.message) from None
        elif kind == "TOOL":
            _tool(rebuilt, item, name, level, where)
        if level == "ERROR" and kind != "TOOL" and stop is None:
            stop = _failed(kind, name, item)
    events = rebuilt.events
    if generations == 0 and root is not None:
        # No model call recorded (an @observe'd function alone, or a run stopped
        # before its first call): the root's input and output are the exchange,
        # around the tools that ran.
        said = _decoded(root.get("input"), "input")
        answer = _decoded(root.get("output"), "output")
        events = [*([Message("user", _text(said))] if said is not None else []), *events,
                  *([Message("assistant", _text(answer))] if answer is not None
                    and stop is None else [])]
    seen["tool_errors"] = list(rebuilt.tool_errors)
    if root is not None and isinstance(root.get("name"), str):
        seen["root"] = root["name"]
    return events, stop, seen


def _score_view(score: JsonObject) -> JsonObject:
    view: JsonObject = {k: score[k] for k in ("name", "value", "stringValue", "dataType",
                                               "source", "authorUserId", "comment")
                        if score.get(k) is not None}
    return view


def _run(trace: _Trace) -> ImportedRun:
    events, stop, seen = _conversation(trace)
    metadata: JsonObject = {"trace_id": trace.id}
    for key, kept in (("traceName", "trace_name"), ("root", "root_observation"),
                      ("sessionId", "session_id"), ("userId", "user_id"), ("model", "model"),
                      ("environment", "environment"), ("release", "release")):
        if key in seen:
            metadata[kept] = seen[key]
    if seen["tool_errors"]:
        metadata["tool_errors"] = seen["tool_errors"]
    if stop is not None:
        metadata["ended"] = stop.detail
    scores: dict[str, JsonValue] = {}
    if trace.scores:
        metadata["scores"] = [_score_view(s) for s in trace.scores]
    for score in trace.scores:
        name = score.get("name")
        if score.get("source") == "ANNOTATION" or not isinstance(name, str):
            continue
        value = score.get("value") if score.get("stringValue") is None else score["stringValue"]
        if name in scores and scores[name] != value:
            raise BadRecord(f"scores.{name}", f"two scores named {name!r} on the trace "
                            f"({got(scores[name])} and {got(value)}); expected one")
        scores[name] = value
    task = seen.get("traceName") or seen.get("root") or trace.id
    session = seen.get("sessionId")
    instruction = next((e.content for e in events
                        if isinstance(e, Message) and e.role == "user"), "")
    return ImportedRun(trace.id, trace.source, str(task), tuple(ended(events, stop, True)),
                       instruction, metadata=metadata, scores=scores,
                       conversation=session if isinstance(session, str) else "")


def _collect(paths: Iterable[Path], errors: list[LoadError]) -> dict[str, _Trace]:
    traces: dict[str, _Trace] = {}

    def trace_of(trace_id: str, source: str) -> _Trace | None:
        if trace_id not in traces and len(traces) >= MAX_TRACES:
            return None
        return traces.setdefault(trace_id, _Trace(trace_id, source))

    for path in paths:
        for record in read_json_or_lines(path, errors):
            for i, item in enumerate(_items(record.value)):
                where = "" if item is record.value else (
                    f"data[{i}]" if isinstance(record.value, dict) else f"[{i}]")
                if isinstance(item, dict) and _is_score(item):
                    trace_id = _score_trace(item)
                    if trace_id is None:
                        errors.append(record.error(f"{where}.subject".lstrip("."), (
                            f"got {got(item.get('subject'))}; expected the trace or "
                            "observation the score is on (a session's or an experiment's "
                            "score labels no run; ask for the `subject` fields)")))
                        continue
                    trace = trace_of(trace_id, record.source)
                    if trace is not None:
                        trace.scores.append(item)
                        continue
                elif isinstance(item, dict) and isinstance(item.get("traceId"), str) \
                        and item["traceId"] and "type" in item and "startTime" in item:
                    trace = trace_of(str(item["traceId"]), record.source)
                    if trace is not None and len(trace.observations) < MAX_OBSERVATIONS:
                        trace.observations.append((f"observation {item.get('id')}", item))
                        continue
                    if trace is not None and not trace.too_big:
                        # Named once, and no run: a trace cut short would be graded
                        # as if it were whole.
                        trace.too_big = True
                        errors.append(record.error(where, (
                            f"trace {trace.id} holds more than {MAX_OBSERVATIONS} "
                            "observations; expected at most that many")))
                    if trace is not None:
                        continue
                else:
                    errors.append(record.error(where, (
                        f"got {got(item)}; expected an observation (id, traceId, type, "
                        "startTime) or a score (name, value, dataType, source) as Langfuse's "
                        "public API returns them")))
                    continue
                errors.append(record.error(where, f"more than {MAX_TRACES} traces; expected "
                                                  "at most that many"))
    return traces


def _load_error(trace: _Trace, bad: BadRecord) -> LoadError:
    file, _, line = trace.source.rpartition(":")
    return LoadError(file, int(line) if line.isdigit() else 0, f"trace {trace.id}: {bad.field}",
                     bad.message)


def read_langfuse(paths: Iterable[Path], errors: list[LoadError]) -> Iterator[ImportedRun]:
    """Every trace with observations in the files as a run, in the order each was first
    met; a bad item or a bad trace is one error in ``errors``. A trace with scores but
    no observation is no run (its scores still label it if another file has it)."""
    for trace in _collect(paths, errors).values():
        if not trace.observations or trace.too_big:
            continue
        try:
            yield _run(trace)
        except BadRecord as bad:
            errors.append(_load_error(trace, bad))


def _verdict(score: JsonObject) -> str:
    """A person's score as pass, fail or unsure; a score that has none is an error."""
    kind, value, text = score.get("dataType"), score.get("value"), score.get("stringValue")
    if kind == "BOOLEAN":
        # v3 returns a boolean; v1 and the SDK's post, 1 or 0 (stringValue "True"/"False").
        if value is True or (value == 1 and not isinstance(value, bool)):
            return "pass"
        if value is False or (value == 0 and not isinstance(value, bool)):
            return "fail"
        raise BadRecord("value", f"got {got(value)}; expected true or false (1 or 0)")
    if kind == "CATEGORICAL":
        category = text if isinstance(text, str) else value
        if isinstance(category, str) and category.casefold() in VERDICTS:
            return category.casefold()
        raise BadRecord("value", f"got {got(category)}; expected a category pass, fail or "
                        "unsure (a score config whose categories are those)")
    raise BadRecord("dataType", f"got {got(kind)}; expected BOOLEAN or CATEGORICAL: a "
                    f"{kind} score holds no pass or fail, and metaeval draws no line through "
                    "it for you (a NUMERIC score's threshold is a decision of your own: make "
                    "it a BOOLEAN score config)")


def read_langfuse_labels(path: Path, errors: list[LoadError], passed_over: list[str] | None = None
                         ) -> list[tuple[str, dict[str, object]]]:
    """The ANNOTATION scores of ``path`` as labels-file rows (``run_id`` the trace,
    ``check`` the score's name, ``annotator`` its ``authorUserId``, ``rationale`` its
    comment); a score that cannot be a label is one error in ``errors``. API and EVAL
    scores are no person's label: they are passed over here (the runs keep them),
    each source's count said in ``passed_over``."""
    rows: list[tuple[str, dict[str, object]]] = []
    others: dict[str, int] = {}
    for record in read_json_or_lines(path, errors):
        for i, item in enumerate(_items(record.value)):
            if not isinstance(item, dict) or not _is_score(item):
                continue  # the observations beside them are the runs' reader's
            where = "" if item is record.value else (
                f"data[{i}]" if isinstance(record.value, dict) else f"[{i}]")
            try:
                source = item.get("source")
                if not isinstance(source, str) or source not in SOURCES:
                    raise BadRecord("source", f"got {got(source)}; expected one of "
                                    f"{', '.join(sorted(SOURCES))}")
                if source != "ANNOTATION":
                    others[source] = others.get(source, 0) + 1
                    continue
                rows.append((record.source, _label_row(item)))
            except BadRecord as bad:
                at = ".".join(p for p in (where, bad.field) if p)
                errors.append(record.error(at, f"score {item.get('id')!s}: {bad.message}"))
    total = sum(others.values())
    if not rows and not any(e.path == str(path) for e in errors):
        errors.append(LoadError(str(path), 0, "", (
            f"no ANNOTATION score; expected the scores people entered (the file holds "
            f"{total} API or EVAL score{'' if total == 1 else 's'}, which are no person's "
            "label: `metaeval import langfuse --label-from NAME` reads one of those)")))
    if passed_over is not None:
        passed_over += [f"{count} {source} score{'' if count == 1 else 's'} passed over: no "
                        "person's label (kept in the runs' metadata.scores; --label-from "
                        "NAME reads one)" for source, count in sorted(others.items())]
    return rows


def _label_row(score: JsonObject) -> dict[str, object]:
    trace, name, author = _score_trace(score), score.get("name"), score.get("authorUserId")
    if trace is None:
        raise BadRecord("subject", f"got {got(score.get('subject'))}; expected the trace or "
                        "observation the score is on")
    if not isinstance(name, str) or not name:
        raise BadRecord("name", f"got {got(name)}; expected the score's name")
    if not isinstance(author, str) or not author:
        raise BadRecord("authorUserId", f"got {got(author)}; expected the person who scored "
                        "(ask for the `annotation` fields)")
    comment = score.get("comment")
    return {"run_id": trace, "check": name, "label": _verdict(score), "annotator": author,
            "rationale": comment if isinstance(comment, str) else ""}


class LangfuseLabels:
    """``RunFormat.labels`` of one file: iterated, the good rows, then every score
    that cannot be a label named in one ``BadRecord`` (line, field, score id, value),
    which ``--labels langfuse:PATH`` reports as the file's error: the good rows are
    read, the command fails on the bad ones, never passing them over. ``left_out``:
    once iterated, what was read and gave no row (API and EVAL scores), for the
    labels reader to say."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.left_out: list[str] = []

    def __iter__(self) -> Iterator[tuple[str, dict[str, object]]]:
        errors: list[LoadError] = []
        self.left_out = []
        yield from read_langfuse_labels(self.path, errors, self.left_out)
        if errors:
            # One line however many scores are bad (the error printer shows a newline
            # as '\n'): the first three named, the rest counted.
            said = [": ".join(p for p in (f"line {e.line}" if e.line else "", e.field,
                                          e.message) if p) for e in errors[:3]]
            more = len(errors) - len(said)
            raise BadRecord("", "; ".join(said) + (f" (and {more} more)" if more else ""))


def langfuse_labels(path: Path) -> LangfuseLabels:
    """The labels of ``path`` (``LangfuseLabels``), read as they are iterated."""
    return LangfuseLabels(path)


def sniff(head: bytes, path: Path) -> bool:
    """A Langfuse API object up front: an observation's ``traceId`` with its
    ``startTime``, or a score's ``dataType``."""
    first = head[:4096]
    return b'"traceId"' in first and (b'"startTime"' in first or b'"dataType"' in first)


FORMAT = RunFormat("langfuse", "Langfuse observations and scores as its public API returns "
                   "them (JSON Lines); ANNOTATION scores as labels", (".jsonl", ".json"),
                   sniff, "import/langfuse.md", read_langfuse, extra="langfuse",
                   per_call=True, labels=langfuse_labels)
