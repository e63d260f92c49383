"""What the run importers share: the imported run, its meta-set line, and record errors.

Each importer turns one foreign record (an inspect_ai sample, a logged Anthropic
Messages request, an OpenTelemetry trace) into an ``ImportedRun`` whose trajectory
is the native event list of a meta-set line; ``run_line`` renders it. Importers
report a bad record as a ``LoadError`` naming its file, line or record, field and
value, and never drop a record silently: a record of an unknown shape is an error.
This module must never import a format's own library (that is each importer's,
lazily).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
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
from metaeval.errors import clipped
from metaeval.untrusted_json import MAX_DEPTH, JsonInputError, LoadError, parse_json

__all__ = ["FORMAT_VERSION", "INNER_DEPTH", "BadRecord", "ImportedRun", "LabelRows", "LabelRule",
           "Reader", "RunFormat", "chat_events", "decode_tool_content", "ended", "event_json",
           "got", "json_value", "run_line"]

FORMAT_VERSION = 1
"""The meta-set format version the lines are written in (``meta_set.FORMAT_VERSION``,
which this module cannot import: the meta-set reader imports the Anthropic one)."""

# Tool arguments and results are often JSON inside a string; the value lands at
# level 4 of a meta-set line, so it gets the levels left there.
INNER_DEPTH = MAX_DEPTH - 3


class BadRecord(Exception):
    """One problem in one foreign record: ``field`` is its path inside the record."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def got(value: object) -> str:
    """A bad value as an error echoes it: short, with what it was."""
    return clipped(repr(value))


@dataclass(frozen=True, slots=True)
class ImportedRun:
    """One run read from a foreign format, ready to become a meta-set line.

    ``scores``: what the harness itself decided (inspect_ai's scorers), by scorer
    name, kept so that a score can become a candidate label (``LabelRule``). A state
    left None is absent from the line (the format records none): a state check on
    the run is then unscored, never passed on two empty states.
    """

    id: str
    source: str
    task_id: str
    trajectory: tuple[Event, ...]
    instruction: str = ""
    criteria: JsonObject = field(default_factory=dict)
    initial_state: JsonObject | None = None
    final_state: JsonObject | None = None
    metadata: JsonObject = field(default_factory=dict)
    scores: Mapping[str, JsonValue] = field(default_factory=dict)
    conversation: str = ""
    """The conversation the run belongs to, when the format names one: runs of one
    conversation are joined into one (``metaeval.importers.runs.join``)."""


Reader = Callable[[Iterable[Path], list[LoadError]], Iterator["ImportedRun"]]
"""Reads every file given; each bad record one ``LoadError``, the good runs yielded."""


LabelRows = Callable[[Path], Iterable[tuple[str, dict[str, object]]]]
"""A format's labels reader: ``(source, columns)`` pairs, ``source`` being the
record's place (``file:line`` or ``file:trace <id>``)."""


@dataclass(frozen=True, slots=True)
class RunFormat:
    """One run format, as the registry (``metaeval.importers.runs.FORMATS``) holds it:
    its name on the command line, what it reads (one line, for the CLI's help and
    the docs' index), the suffixes a directory given for it expands to, which files
    it claims (``sniff``: the first bytes of a file, and its path), its mapping page
    under docs/, the extra its library comes in (if any) and its reader."""

    name: str
    summary: str
    suffixes: tuple[str, ...]
    sniff: Callable[[bytes, Path], bool]
    docs: str
    read: Reader
    extra: str = ""
    per_call: bool = False
    """One record a model call (each re-sending the history): records of one
    conversation are joined into one run (``mapped.joined``)."""
    labels: LabelRows | None = None
    """For a format that carries people's verdicts (MLflow assessments, Langfuse
    scores): its labels as labels-file rows, each ``(source, columns)`` with the
    columns of a labels file (``run_id``, ``check``, ``label``, ``annotator``,
    ``rationale``); ``--labels FORMAT:PATH`` checks and joins them as a file's.
    A verdict it cannot map is given as it is (the labels-file checks refuse that row
    alone, naming it); a file it cannot read at all raises ``BadRecord`` (one error
    naming the file). A ``source`` that does not start with the file's path is
    prefixed with it."""


def event_json(event: Event) -> JsonObject:
    """One event as a native meta-set event object."""
    if isinstance(event, Message):
        return {"type": "message", "role": event.role, "content": event.content}
    if isinstance(event, ToolCall):
        return {"type": "tool_call", "id": event.id, "tool": event.tool, "args": event.args}
    if isinstance(event, ToolResult):
        return {"type": "tool_result", "call_id": event.call_id, "content": event.content}
    kind = "timeout" if isinstance(event, Timeout) else "error"
    assert isinstance(event, Timeout | Error)
    return {"type": kind, "detail": event.detail}


_CHAT_ROLES = {"system", "developer", "user", "assistant", "tool"}


def _text(content: JsonValue, where: str) -> str | None:
    """A chat message's content: a string, or text parts joined (others as markers)."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BadRecord(where, f"got {got(content)}; expected a string or a list of parts")
    out: list[str] = []
    for i, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(part, dict) and kind in ("text", "input_text", "output_text"):
            text = part.get("text")
            if not isinstance(text, str):
                raise BadRecord(f"{where}[{i}].text", f"got {got(text)}; expected a string")
            out.append(text)
        elif isinstance(kind, str):
            out.append(f"[{kind}]")
        else:
            raise BadRecord(f"{where}[{i}]", f"got {got(part)}; expected a content part")
    return "".join(out)


def chat_events(raw: JsonValue, where: str) -> list[Event]:
    """One chat-completions message (``role``, ``content``, ``tool_calls``,
    ``tool_call_id``) as events; ``developer`` is read as ``system``."""
    if not isinstance(raw, dict):
        raise BadRecord(where, f"got {got(raw)}; expected a message object")
    role = raw.get("role")
    if not isinstance(role, str) or role not in _CHAT_ROLES:
        raise BadRecord(f"{where}.role", f"got {got(role)}; expected one of "
                        f"{', '.join(sorted(_CHAT_ROLES))}")
    if role == "tool":
        call_id = raw.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise BadRecord(f"{where}.tool_call_id", f"got {got(call_id)}; expected the id")
        content = _text(raw.get("content"), f"{where}.content") or ""
        return [ToolResult(call_id, decode_tool_content(content))]
    events: list[Event] = []
    text = _text(raw.get("content"), f"{where}.content")
    if text:
        events.append(Message("system" if role == "developer" else role, text))
    calls = raw.get("tool_calls") or []
    if not isinstance(calls, list):
        raise BadRecord(f"{where}.tool_calls", f"got {got(calls)}; expected a list")
    for i, call in enumerate(calls):
        at = f"{where}.tool_calls[{i}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(function, dict):
            raise BadRecord(at, f"got {got(call)}; expected {{id, function: {{name, "
                            "arguments}}")
        call_id, name = call.get("id"), function.get("name")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
            raise BadRecord(at, f"got id {got(call_id)} and name {got(name)}; expected "
                            "non-empty strings")
        raw_args: JsonValue = function.get("arguments") or {}
        args = decode_tool_content(raw_args) if isinstance(raw_args, str) else raw_args
        if not isinstance(args, dict):
            raise BadRecord(f"{at}.function.arguments", f"got {got(args)}; expected an object")
        events.append(ToolCall(call_id, name, args))
    return events


def ended(events: list[Event], stop: Timeout | Error | None = None,
          step_limit: bool = False) -> list[Event]:
    """``events`` with how the run ended: ``stop`` (a limit or an error the format
    recorded) appended after them. With ``step_limit`` (the run is whole: its calls
    joined), a run whose last event is a tool call that no result answers was
    stopped before its tool ran (a step limit, or a harness that gave up): a
    ``Timeout`` naming the call, so that an earlier assistant message is not read
    as the answer."""
    if stop is not None:
        return [*events, stop]
    if step_limit and events and isinstance(events[-1], ToolCall):
        call = events[-1]
        return [*events, Timeout(f"the run ended on tool call {call.id!r} ({call.tool}) "
                                 "with no result: a step limit or a stopped harness")]
    return events


@dataclass(frozen=True, slots=True)
class LabelRule:
    """A harness score read as a person's label: ``--label-from SCORER``.

    ``passing`` and ``failing`` are the score values that map to pass and fail;
    any other value is an error naming the run, never a guess.
    """

    scorer: str
    passing: tuple[JsonValue, ...] = ("C", True, 1)
    failing: tuple[JsonValue, ...] = ("I", False, 0)

    def verdict(self, run: ImportedRun) -> str:
        if self.scorer not in run.scores:
            names = ", ".join(sorted(map(repr, run.scores))) or "none"
            raise BadRecord(f"scores.{self.scorer}", f"the run has no score {self.scorer!r}; "
                            f"its scores: {names}")
        value = run.scores[self.scorer]
        for verdict, values in (("pass", self.passing), ("fail", self.failing)):
            # 1 == True in Python: a boolean score matches only a boolean value.
            if any(_same(value, v) for v in values):
                return verdict
        expected = ", ".join(repr(v) for v in (*self.passing, *self.failing))
        raise BadRecord(f"scores.{self.scorer}", f"got {got(value)}; expected one of "
                        f"{expected} (pass: {', '.join(map(repr, self.passing))})")


def _same(a: JsonValue, b: JsonValue) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def _paired(run: ImportedRun) -> None:
    """Every tool result answers an earlier call: found here, naming the run, not
    when the written file is loaded, naming a line of a file the user did not write."""
    calls: set[str] = set()
    for i, event in enumerate(run.trajectory):
        if isinstance(event, ToolCall):
            calls.add(event.id)
        elif isinstance(event, ToolResult) and event.call_id not in calls:
            raise BadRecord(f"trajectory[{i}]", f"a tool result answers call "
                            f"{event.call_id!r}, which no earlier tool call has")


def _too_deep(value: JsonValue, limit: int) -> str | None:
    """Where ``value`` nests past ``limit`` levels (a dotted path), or None; iterative."""
    stack: list[tuple[str, JsonValue, int]] = [("", value, 1)]
    while stack:
        where, node, depth = stack.pop()
        if isinstance(node, dict | list) and depth > limit:
            return where
        if isinstance(node, dict):
            stack.extend((f"{where}.{k}" if where else k, v, depth + 1) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((f"{where}[{i}]", v, depth + 1) for i, v in enumerate(node))
    return None


def run_line(run: ImportedRun, label: LabelRule | None = None) -> JsonObject:
    """The meta-set line of ``run``. With no ``label`` the line has none (a labels
    file or a suite supplies it); with one, the score it names becomes the label.
    A value that lands deeper than a meta-set line may nest (``MAX_DEPTH``) is a
    ``BadRecord``: what import writes, the meta-set reader must read back."""
    _paired(run)
    line: JsonObject = {
        "format_version": FORMAT_VERSION,
        "id": run.id,
        "task": {"id": run.task_id, "instruction": run.instruction,
                 "criteria": run.criteria},
        "trajectory": [event_json(e) for e in run.trajectory],
    }
    for key, state in (("initial_state", run.initial_state), ("final_state", run.final_state)):
        if state is not None:
            line[key] = state
    line["metadata"] = run.metadata
    if label is not None:
        line["label"] = {"verdict": label.verdict(run), "labeller": f"score:{label.scorer}"}
    deep = _too_deep(line, MAX_DEPTH)
    if deep is not None:
        raise BadRecord(deep, f"nested deeper than {MAX_DEPTH} levels where the meta-set line "
                        "holds it; expected a shallower value")
    return line


def decode_tool_content(text: str) -> JsonValue:
    """A tool result held as a string: a JSON object or list inside is read as such,
    so the same run in any format gives a grader the same values."""
    try:
        value = parse_json(text, max_depth=INNER_DEPTH)
    except JsonInputError:
        return text
    return value if isinstance(value, dict | list) else text


def json_value(value: object, where: str, depth: int = 0) -> JsonValue:
    """``value`` (from a foreign library's model dump) as checked JSON: finite
    numbers, string keys, bounded depth; anything else names ``where``."""
    if depth > INNER_DEPTH:
        raise BadRecord(where, f"nested deeper than {INNER_DEPTH} levels")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BadRecord(where, f"got {value!r}; expected a finite number")
        return value
    if isinstance(value, list | tuple):
        return [json_value(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, dict):
        out: JsonObject = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise BadRecord(where, f"got a key {got(k)}; expected string keys")
            out[k] = json_value(v, f"{where}.{k}", depth + 1)
        return out
    raise BadRecord(where, f"got {got(value)} ({type(value).__name__}); expected a JSON value")
