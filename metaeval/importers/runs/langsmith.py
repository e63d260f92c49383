"""LangSmith run trees to runs: one trace (a root run and its child runs), one run.

Reads runs as the langsmith SDK returns them from ``Client.list_runs`` (or
``read_run``), written one a line (``run.model_dump_json()``), or a file holding
a list of them or the ``/runs/query`` answer (``{"runs": [...]}``); child runs
nested in ``child_runs`` (``read_run(load_child_runs=True)``) are read too. The
runs of a trace (``trace_id``) are put in the order they ran (``dotted_order``);
``llm`` runs whose ``inputs.messages`` are OpenAI or LangChain chat messages give the
conversation (the first call's messages, then what each later call added after
its last assistant message, and every call's reply), ``tool`` runs give the tool
calls and their results, a root's ``error`` or a reply cut by its token limit says
how the run ended. Traces of one LangSmith thread (``extra.metadata``
``session_id``, ``thread_id`` or ``conversation_id``) are
one conversation. LangSmith feedback (``Client.list_feedback``, one a line) is read
as labels (``feedback_labels``). The mapping is docs/import/langsmith.md. A run of
a type not known here, a model call whose messages are of no known shape, a trace
whose root or a parent is not in the files: an error naming the trace and the run,
never skipped. Never imports the SDK.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.contract import Error, Event, JsonObject, JsonValue, Message, Timeout, ToolCall
from metaeval.contract import ToolResult as Result
from metaeval.errors import InputError
from metaeval.importers.runs.common import (
    BadRecord,
    ImportedRun,
    RunFormat,
    chat_events,
    decode_tool_content,
    ended,
    got,
)
from metaeval.untrusted_json import LoadError, Record, read_json_or_lines

__all__ = ["FORMAT", "feedback_labels", "read_langsmith"]

RUN_TYPES = {"llm", "chain", "tool", "retriever", "embedding", "prompt", "parser"}
THREAD_KEYS = ("session_id", "thread_id", "conversation_id")
"""The metadata keys LangSmith groups a project's traces into threads by."""
# LangChain's AgentExecutor returns this text, not an error, when it runs out of steps.
EARLY_STOP = "Agent stopped due to iteration limit or time limit."


@dataclass(frozen=True)
class _Held:
    source: str
    """``file:line`` of the record the run was read from."""
    where: str
    """``run ID (NAME)``: how an error names the run."""
    run: JsonObject


@dataclass
class _Trace:
    id: str
    runs: dict[str, _Held] = field(default_factory=dict)


class _At(Exception):
    """A ``BadRecord`` in the run read from ``source``."""

    def __init__(self, source: str, bad: BadRecord) -> None:
        super().__init__(source)
        self.source = source
        self.bad = bad


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _str(run: JsonObject, key: str, where: str) -> str:
    value = run.get(key)
    if not isinstance(value, str) or not value:
        raise BadRecord(f"{where}.{key}" if where else key, f"got {got(value)}; expected a "
                        "non-empty string")
    return value


def _object(run: JsonObject, key: str, where: str) -> JsonObject:
    value = run.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRecord(f"{where}.{key}", f"got {got(value)}; expected an object")
    return value


@dataclass
class _Conversation:
    """The trace's events, run by run in the order they ran."""

    events: list[Event] = field(default_factory=list)
    calls: int = 0
    tool_errors: list[str] = field(default_factory=list)
    stop: Timeout | Error | None = None

    def _add(self, events: list[Event]) -> None:
        """Events of a message, less a call or a result already read (a tool run's
        result, re-sent in the next call's history)."""
        calls = {e.id for e in self.events if isinstance(e, ToolCall)}
        answered = {e.call_id for e in self.events if isinstance(e, Result)}
        self.events += [e for e in events
                        if not (isinstance(e, ToolCall) and e.id in calls)
                        and not (isinstance(e, Result) and e.call_id in answered)]

    def model(self, run: JsonObject, where: str) -> None:
        at = f"{where}.inputs.messages"
        raw = _object(run, "inputs", where).get("messages")
        if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], list):
            raw, at = raw[0], f"{at}[0]"  # LangChain's: a batch of one prompt
        dicts = [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
        if not isinstance(raw, list) or len(dicts) != len(raw):
            raise BadRecord(at, f"got {got(raw)}; expected the model call's chat messages "
                            "(OpenAI's {role, content}, or LangChain's)")
        messages = [_chat(m, f"{at}[{i}]") for i, m in enumerate(dicts)]
        new = 0
        if self.calls:
            new = next((k + 1 for k in range(len(messages) - 1, -1, -1)
                        if messages[k].get("role") == "assistant"), 0)
        for i, message in enumerate(messages[new:], start=new):
            self._add(chat_events(message, f"{at}[{i}]"))
        self.calls += 1
        outputs = run.get("outputs")
        if not outputs and (run.get("error") is not None or run.get("end_time") is None):
            return  # the call failed or never ended: no reply (the root says how it ended)
        reply, finish = _reply(outputs, where)
        self._add(chat_events(reply, f"{where}.outputs"))
        if finish in ("length", "max_tokens"):
            self.stop = Timeout(f"the model's reply was cut at its token limit ({finish!r})")
        elif finish == "content_filter":
            self.stop = Error("the model's reply was withheld by its content filter")
        else:
            self.stop = None  # a later call that finished supersedes an earlier cut

    def tool(self, run: JsonObject, where: str, run_id: str) -> None:
        """A tool that ran: the result of the first unanswered call of its name, or, when
        no model call asked for it (the model is not traced), a call of its own."""
        name = _str(run, "name", where)
        inputs = _object(run, "inputs", where)
        answered = {e.call_id for e in self.events if isinstance(e, Result)}
        waiting = [e for e in self.events if isinstance(e, ToolCall)
                   and e.id not in answered and e.tool == name]
        call_id = waiting[0].id if waiting else run_id
        if not waiting:
            self.events.append(ToolCall(run_id, name, inputs))
        error = run.get("error")
        if error is not None:
            if not isinstance(error, str):
                raise BadRecord(f"{where}.error", f"got {got(error)}; expected a string")
            self.tool_errors.append(call_id)
            self.events.append(Result(call_id, f"Error: {_first_line(error)}"))
            return
        outputs = run.get("outputs")
        if outputs is None:
            return  # never ended: no result
        if not isinstance(outputs, dict):
            raise BadRecord(f"{where}.outputs", f"got {got(outputs)}; expected an object")
        # The SDK keeps a returned object as the outputs, and anything else as {output};
        # a LangChain tool returns its ToolMessage.
        value: JsonValue = outputs["output"] if set(outputs) == {"output"} else outputs
        if isinstance(value, dict) and value.get("lc") == 1:
            value = value.get("kwargs")
        if isinstance(value, dict) and value.get("type") == "tool" and "content" in value:
            value = value["content"]
        self.events.append(Result(call_id, decode_tool_content(value)
                                  if isinstance(value, str) else value))


_LANGCHAIN_ROLES = {"human": "user", "HumanMessage": "user", "ai": "assistant",
                    "AIMessage": "assistant", "AIMessageChunk": "assistant",
                    "system": "system", "SystemMessage": "system", "tool": "tool",
                    "ToolMessage": "tool"}


def _chat(raw: JsonObject, where: str) -> JsonObject:
    """A message as an OpenAI chat message: LangChain's, serialized (``{"lc": 1, "id":
    [..., "HumanMessage"], "kwargs": {...}}``) or dumped (``{"type": "human", ...}``),
    mapped; one with a ``role`` as it is."""
    if "role" in raw:
        return raw
    serialized = raw.get("lc") == 1
    body = raw.get("kwargs") if serialized else raw
    if not isinstance(body, dict):
        raise BadRecord(f"{where}.kwargs", f"got {got(body)}; expected the message's fields")
    kind = body.get("type")
    names = raw.get("id")
    if kind is None and serialized and isinstance(names, list) and names:
        kind = names[-1]
    role = _LANGCHAIN_ROLES.get(kind) if isinstance(kind, str) else None
    if role is None:
        raise BadRecord(f"{where}.type", f"got {got(kind)}; expected an OpenAI message "
                        f"(role) or a LangChain one ({', '.join(sorted(_LANGCHAIN_ROLES))})")
    message: JsonObject = {"role": role, "content": body.get("content")}
    if role == "tool":
        message["tool_call_id"] = body.get("tool_call_id")
    calls = body.get("tool_calls")
    if role == "assistant" and isinstance(calls, list) and calls:
        message["tool_calls"] = [
            {"id": c.get("id"), "function": {"name": c.get("name"),
                                             "arguments": c.get("args") or {}}}
            if isinstance(c, dict) else c for c in calls]
    return message


def _generation(outputs: JsonObject, where: str) -> tuple[JsonValue, JsonValue]:
    """LangChain's ``LLMResult``: the first generation's message and finish reason."""
    generations = outputs["generations"]
    first = generations[0] if isinstance(generations, list) and generations else None
    first = first[0] if isinstance(first, list) and first else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(first, dict) or not isinstance(message, dict):
        raise BadRecord(f"{where}.outputs.generations[0][0]", f"got {got(first)}; expected "
                        "{message, generation_info}")
    reply = _chat(message, f"{where}.outputs.generations[0][0].message")
    info = first.get("generation_info")
    body = message.get("kwargs") if message.get("lc") == 1 else message
    meta = body.get("response_metadata") if isinstance(body, dict) else None
    for found in (info, meta):
        if isinstance(found, dict) and (found.get("finish_reason") or found.get("stop_reason")):
            return reply, found.get("finish_reason") or found.get("stop_reason")
    return reply, None


def _reply(outputs: JsonValue, where: str) -> tuple[JsonValue, JsonValue]:
    """A model call's reply message and its finish reason: an OpenAI chat completion
    (``choices[0].message``), LangChain's ``generations``, or the message itself
    (``role``, ``content``)."""
    if isinstance(outputs, dict) and "generations" in outputs:
        return _generation(outputs, where)
    if isinstance(outputs, dict) and isinstance(outputs.get("choices"), list):
        choices = outputs["choices"]
        assert isinstance(choices, list)
        first = choices[0] if choices else None
        if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
            raise BadRecord(f"{where}.outputs.choices[0]", f"got {got(first)}; expected "
                            "{message, finish_reason}")
        return first["message"], first.get("finish_reason")
    if isinstance(outputs, dict) and "role" in outputs:
        return outputs, outputs.get("finish_reason")
    keys = sorted(outputs) if isinstance(outputs, dict) else outputs
    raise BadRecord(f"{where}.outputs", f"got {got(keys)}; expected an OpenAI chat completion "
                    "(choices), LangChain's generations, or a message (role, content)")


def _ordered(trace: _Trace) -> tuple[_Held, list[tuple[str, _Held]]]:
    """The trace's root and every run (with its id) in the order they ran, each
    checked to hang from a run of the files."""
    roots = [rid for rid, held in trace.runs.items() if held.run.get("parent_run_id") is None]
    first = next(iter(trace.runs.values()))
    if len(roots) != 1:
        named = ", ".join(roots) or "none in the files"
        raise _At(first.source, BadRecord("parent_run_id", (
            f"the trace has {len(roots)} runs with no parent ({named}); expected one root "
            "run (an export filtered by run type or by is_root lacks it)")))
    for held in trace.runs.values():
        parent = held.run.get("parent_run_id")
        if parent is not None and parent not in trace.runs:
            raise _At(held.source, BadRecord(f"{held.where}.parent_run_id", (
                f"got {got(parent)}, a run not in the files; expected the whole trace")))
    runs = sorted(trace.runs.items(), key=lambda r: (str(r[1].run.get("dotted_order") or ""),
                                                     str(r[1].run.get("start_time", ""))))
    return trace.runs[roots[0]], runs


def _only_text(values: JsonObject) -> str | None:
    texts = [v for v in values.values() if isinstance(v, str)]
    return texts[0] if len(values) == 1 and texts else None


def _how_it_ended(root: JsonObject, where: str) -> Timeout | Error | None:
    error = root.get("error")
    if error is not None:
        if not isinstance(error, str):
            raise BadRecord(f"{where}.error", f"got {got(error)}; expected a string")
        first = _first_line(error)
        if "GraphRecursionError" in first or "Recursion limit" in first:
            return Timeout(f"{first}: a step limit")
        return Error(f"the run failed: {first}")
    if root.get("end_time") is None:
        return Timeout("the run had not ended when it was exported (no end_time)")
    if EARLY_STOP in str(_object(root, "outputs", where).get("output", "")):
        return Timeout(f"{EARLY_STOP!r}: a step or time limit")
    return None


def _run(trace: _Trace) -> ImportedRun:
    top, runs = _ordered(trace)
    talk = _Conversation()
    errors: list[JsonValue] = []
    model: JsonValue = None
    for rid, held in runs:
        run, where = held.run, held.where
        kind = run.get("run_type")
        try:
            if kind == "llm":
                talk.model(run, where)
                meta = _object(_object(run, "extra", where), "metadata", f"{where}.extra")
                model = model or meta.get("ls_model_name")
            elif kind == "tool":
                talk.tool(run, where, rid)
        except BadRecord as bad:
            raise _At(held.source, bad) from None
        if kind != "tool" and held is not top and run.get("error") is not None:
            errors.append({"run": run.get("name"), "run_type": kind,
                           "error": _first_line(str(run.get("error")))})
    try:
        return _whole(trace, top, talk, errors, model)
    except BadRecord as bad:
        raise _At(top.source, bad) from None


def _whole(trace: _Trace, top: _Held, talk: _Conversation, errors: list[JsonValue],
           model: JsonValue) -> ImportedRun:
    root, root_where = top.run, top.where
    events = talk.events
    inputs, outputs = _object(root, "inputs", root_where), _object(root, "outputs", root_where)
    if not talk.calls:
        # No model call traced: the root's one text in, its one text out.
        asked, answer = _only_text(inputs), _only_text(outputs)
        events = ([Message("user", asked)] if asked else []) + events + (
            [Message("assistant", answer)] if answer else [])
    stop = _how_it_ended(root, root_where) or talk.stop
    extra = _object(root, "extra", root_where)
    run_metadata = _object(extra, "metadata", f"{root_where}.extra")
    thread = next((run_metadata[k] for k in THREAD_KEYS if run_metadata.get(k)), None)
    if thread is not None and not isinstance(thread, str | int):
        raise BadRecord(f"{root_where}.extra.metadata", f"got a thread id {got(thread)}; "
                        "expected a string")
    name = _str(root, "name", root_where)
    metadata: JsonObject = {"trace_id": trace.id, "name": name, "run_metadata": run_metadata}
    tool_errors: JsonValue = list(talk.tool_errors) or None
    pairs: tuple[tuple[str, JsonValue], ...] = (
        ("project", root.get("session_name") or root.get("session_id")),
        ("tags", root.get("tags") or None), ("model", model),
        ("thread", thread), ("tool_errors", tool_errors),
        ("errors", errors or None), ("ended", stop.detail if stop else None))
    for key, value in pairs:
        if value is not None:
            metadata[key] = value
    if not talk.calls and not _only_text(outputs) and outputs:
        metadata["outputs"] = outputs
    instruction = next((e.content for e in events
                        if isinstance(e, Message) and e.role == "user"), "")
    return ImportedRun(trace.id, top.source, name, tuple(ended(events, stop)), instruction,
                       metadata=metadata, conversation="" if thread is None else str(thread))


def _flattened(value: JsonValue) -> Iterator[tuple[str, JsonValue]]:
    """The runs a record holds, each with where it stands in the record: a run, a
    list of runs, ``{"runs": [...]}``, and the ``child_runs`` nested in each."""
    if isinstance(value, dict) and "run_type" not in value and isinstance(
            value.get("runs"), list):
        value = value["runs"]
    stack: list[tuple[str, JsonValue]] = (
        [(f"[{i}]", v) for i, v in enumerate(value)][::-1] if isinstance(value, list)
        else [("", value)])
    while stack:
        where, run = stack.pop()
        yield where, run
        children = run.get("child_runs") if isinstance(run, dict) else None
        if isinstance(children, list):
            stack += [(f"{where}.child_runs[{i}]", c) for i, c in enumerate(children)][::-1]


def _file_runs(record: Record, traces: dict[str, _Trace], errors: list[LoadError]) -> None:
    for at, run in _flattened(record.value):
        try:
            if not isinstance(run, dict):
                raise BadRecord(at or "run", f"got {got(run)}; expected a LangSmith run "
                                "object")
            if "run_type" not in run and "key" in run and "run_id" in run:
                raise BadRecord(at or "key", "a feedback record, not a run; give feedback "
                                "to --labels langsmith:PATH")
            if "id" not in run and "run_type" not in run:
                # Another tool's record (an MLflow trace, a Langfuse page): say what
                # was expected, not that an id is missing.
                raise BadRecord(at or "run", f"got {got(run)}; expected a LangSmith run "
                                "(id, trace_id, run_type, ... as list_runs returns it)")
            rid = _str(run, "id", at)
            kind = run.get("run_type")
            if not isinstance(kind, str) or kind not in RUN_TYPES:
                raise BadRecord(f"{at}.run_type".lstrip("."), f"got {got(kind)}; expected "
                                f"one of {', '.join(sorted(RUN_TYPES))}")
            parent = run.get("parent_run_id")
            if parent is not None and (not isinstance(parent, str) or not parent):
                raise BadRecord(f"{at}.parent_run_id".lstrip("."), f"got {got(parent)}; "
                                "expected a run id or null")
            trace_id = run.get("trace_id") or (rid if parent is None else None)
            if not isinstance(trace_id, str):
                raise BadRecord(f"{at}.trace_id".lstrip("."), f"got {got(trace_id)}; "
                                "expected the trace's id")
        except BadRecord as bad:
            errors.append(record.error(bad.field, bad.message))
            continue
        trace = traces.setdefault(trace_id, _Trace(trace_id))
        if rid in trace.runs:
            errors.append(record.error(f"{at}.id".lstrip("."), f"run {rid!r} again; first at "
                                       f"{trace.runs[rid].source}"))
            continue
        trace.runs[rid] = _Held(record.source, f"run {rid} ({run.get('name')!s})", run)


def read_langsmith(paths: Iterable[Path], errors: list[LoadError]) -> Iterator[ImportedRun]:
    """Every trace of the files as a run, in the order the traces started; a bad run
    or a bad trace is one error in ``errors``."""
    traces: dict[str, _Trace] = {}
    for path in paths:
        for record in read_json_or_lines(path, errors):
            _file_runs(record, traces, errors)
    built: list[tuple[str, ImportedRun]] = []
    for trace in traces.values():
        try:
            run = _run(trace)
        except _At as at:
            file, _, line = at.source.rpartition(":")
            errors.append(LoadError(file, int(line) if line.isdigit() else 0,
                                    f"trace {trace.id}: {at.bad.field}", at.bad.message))
            continue
        root = next(h.run for h in trace.runs.values() if h.run.get("parent_run_id") is None)
        built.append((str(root.get("dotted_order") or root.get("start_time") or ""), run))
    yield from (run for _, run in sorted(built, key=lambda b: b[0]))


_VALUES = ("pass", "fail", "unsure")


def _verdict(feedback: JsonObject) -> str:
    """A feedback's label: ``score`` 1 or true pass, 0 or false fail; with no score,
    a ``value`` of pass, fail or unsure. Anything else is written as it came, for the
    labels reader to refuse on the feedback's line, never a guess."""
    score, value = feedback.get("score"), feedback.get("value")
    if score is not None:
        if score is True or (type(score) in (int, float) and score == 1):
            return "pass"
        if score is False or (type(score) in (int, float) and score == 0):
            return "fail"
        return f"score={score!r}"
    if isinstance(value, str) and value in _VALUES:
        return value
    return f"value={value!r}"


def _annotator(feedback: JsonObject) -> str:
    """Who gave the feedback: its source's ``user_name``, ``user_id``, or the
    ``annotator`` of its ``source_info`` (``feedback_source.metadata``); feedback of
    a model (an online evaluator) is no person's and is refused by its label."""
    source = feedback.get("feedback_source")
    source = source if isinstance(source, dict) else {}
    info = source.get("metadata")
    info = info if isinstance(info, dict) else {}
    for value in (source.get("user_name"), source.get("user_id"), info.get("annotator")):
        if isinstance(value, str) and value:
            return value
    return ""


def feedback_labels(path: Path) -> Iterator[tuple[str, dict[str, object]]]:
    """LangSmith feedback (``Client.list_feedback``, one a line) as labels-file rows:
    ``run_id`` the run it is on, ``check`` its ``key``, ``label`` from its score or
    value, ``annotator`` who gave it, ``rationale`` its ``comment``. A file that
    cannot be read is an ``InputError``; a bad feedback is a row the labels reader
    refuses on its line (a model's feedback, a score other than 0 or 1)."""
    errors: list[LoadError] = []
    for record in read_json_or_lines(path, errors):
        items = record.value if isinstance(record.value, list) else [record.value]
        for item in items:
            feedback = item if isinstance(item, dict) else {}
            if "run_type" in feedback:
                raise BadRecord("run_type", f"line {record.line} is a run, not feedback; give "
                                "runs to --runs langsmith:PATH and feedback to --labels")
            if "key" not in feedback and "run_id" not in feedback:
                raise BadRecord("key", f"line {record.line}: got {got(item)}; expected "
                                "LangSmith feedback (run_id, key, score or value, as "
                                "list_feedback returns it)")
            source = feedback.get("feedback_source")
            kind = source.get("type") if isinstance(source, dict) else None
            # A model's feedback (an online evaluator) is no person's label.
            label = f"feedback_source.type={kind!r}" if kind == "model" else _verdict(feedback)
            yield record.source, {
                "run_id": feedback.get("run_id"), "check": feedback.get("key"),
                "label": label, "annotator": _annotator(feedback),
                "rationale": feedback.get("comment") or ""}
    if errors:
        raise InputError("; ".join(map(str, errors)))


def sniff(head: bytes, path: Path) -> bool:
    """Runs as the SDK returns them: ``run_type`` and ``start_time`` among the first
    keys (``dotted_order`` comes after the inputs, which may be long)."""
    first = head[:4096]
    return b'"run_type"' in first and (b'"start_time"' in first or b'"dotted_order"' in head)


FORMAT = RunFormat("langsmith", "LangSmith run trees, runs as the SDK's list_runs returns "
                   "them (JSON Lines)", (".jsonl", ".json"), sniff, "import/langsmith.md",
                   read_langsmith, per_call=True, labels=feedback_labels)
