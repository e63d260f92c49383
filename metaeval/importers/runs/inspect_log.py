"""inspect_ai eval logs (``.eval`` and ``.json``) to runs, through inspect_ai's own reader.

Each sample of a log (each epoch of it) is one run: its messages with tool calls
and results, its scores (kept, and usable as labels), its metadata, and its
store as the final state. inspect_ai is imported here only, and only when a log
is read (the ``metaeval[inspect]`` extra); the mapping is docs/import/inspect.md.
A sample is read from inspect_ai's JSON dump of it, so the fields an error names
are the log's own; a content or message type this module does not know is an
error naming it, never skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

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
from metaeval.errors import InputError, clipped
from metaeval.importers.runs.common import (
    BadRecord,
    ImportedRun,
    RunFormat,
    decode_tool_content,
    ended,
    got,
    json_value,
)
from metaeval.importers.runs.inspect_files import LogFileError, RawSample, log_samples
from metaeval.untrusted_json import LoadError

__all__ = ["FORMAT", "read_inspect"]

INSTALL = "pip install 'metaeval[inspect]'"
# Content that is not text: kept as a marker where it stood, so a grader sees that
# something was there; reasoning is left out (it is not what the agent said).
_MARKERS = {"image", "audio", "video", "document", "data"}
# A limit that stopped a sample for time is a timeout; any other (tokens, messages,
# cost, an operator) stopped it before it finished: an error event naming it.
_TIME_LIMITS = {"time", "working"}
# The sample fields read; the event transcript and attachments are not (they can
# be most of a log, and repeat what the messages hold).
_FIELDS = {"id", "epoch", "input", "target", "messages", "scores", "metadata", "store", "error",
           "limit", "total_time", "working_time"}


def _load() -> Any:
    try:
        import inspect_ai.log as log
    except ImportError as e:
        raise InputError(f"reading inspect_ai logs needs inspect_ai: {INSTALL} ({e})") from e
    return log


def _str(value: JsonValue, where: str) -> str:
    if not isinstance(value, str):
        raise BadRecord(where, f"got {got(value)}; expected a string")
    return value


def _name(value: JsonValue, where: str) -> str:
    """An id or a tool's name: a string that is not empty."""
    if not isinstance(value, str) or not value:
        raise BadRecord(where, f"got {got(value)}; expected a non-empty string")
    return value


def _text(content: JsonValue, where: str) -> str:
    """A message's content: a string, or content parts whose text is joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BadRecord(where, f"got {got(content)}; expected a string or content parts")
    parts: list[str] = []
    for i, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part, dict):
            parts.append(_str(part.get("text"), f"{where}[{i}].text"))
        elif kind in _MARKERS:
            parts.append(f"[{kind}]")
        elif kind != "reasoning":
            raise BadRecord(f"{where}[{i}].type", f"got {got(kind)}; expected text, reasoning "
                            f"or one of {', '.join(sorted(_MARKERS))}")
    return "".join(parts)


def _message(raw: JsonValue, where: str, tool_errors: list[JsonValue]) -> list[Event]:
    if not isinstance(raw, dict):
        raise BadRecord(where, f"got {got(raw)}; expected a message object")
    role = raw.get("role")
    text = _text(raw.get("content", ""), f"{where}.content")
    if role in ("system", "user"):
        return [Message(str(role), text)]
    if role == "tool":
        call_id = _name(raw.get("tool_call_id"), f"{where}.tool_call_id")
        error = raw.get("error")
        if isinstance(error, dict):
            tool_errors.append(call_id)
            # What inspect_ai shows the model for a failed call.
            text = text or f"Error: {error.get('message', '')}"
        return [ToolResult(call_id, decode_tool_content(text))]
    if role != "assistant":
        raise BadRecord(f"{where}.role", f"got {got(role)}; expected system, user, assistant "
                        "or tool")
    calls = raw.get("tool_calls") or []
    if not isinstance(calls, list):
        raise BadRecord(f"{where}.tool_calls", f"got {got(calls)}; expected a list")
    events: list[Event] = [Message("assistant", text)] if text or not calls else []
    for j, call in enumerate(calls):
        at = f"{where}.tool_calls[{j}]"
        if not isinstance(call, dict):
            raise BadRecord(at, f"got {got(call)}; expected a tool call object")
        args = call.get("arguments")
        if not isinstance(args, dict):
            raise BadRecord(f"{at}.arguments", f"got {got(args)}; expected an object")
        events.append(ToolCall(_name(call.get("id"), f"{at}.id"),
                               _name(call.get("function"), f"{at}.function"), args))
    return events


def _ending(sample: JsonObject) -> Timeout | Error | None:
    """Why a sample stopped before it finished: its error, or a limit it hit."""
    error, limit = sample.get("error"), sample.get("limit")
    if isinstance(error, dict):
        return Error(clipped(str(error.get("message", "")), 500))
    if isinstance(limit, dict):
        kind = str(limit.get("type", ""))
        detail = f"{kind} limit {limit.get('limit')}"
        return Timeout(detail) if kind in _TIME_LIMITS else Error(detail)
    return None


def _instruction(value: JsonValue, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(m.get("content", ""), f"{where}[{i}].content")
                         for i, m in enumerate(value)
                         if isinstance(m, dict) and m.get("role") == "user")
    raise BadRecord(where, f"got {got(value)}; expected a string or messages")


def _run(sample: JsonObject, task: str, model: str, path: Path, index: int) -> ImportedRun:
    sample_id, epoch = sample.get("id"), sample.get("epoch")
    if not isinstance(sample_id, str | int) or isinstance(sample_id, bool):
        raise BadRecord("id", f"got {got(sample_id)}; expected a string or an integer")
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
        raise BadRecord("epoch", f"got {got(epoch)}; expected an integer from 1")
    messages = sample.get("messages")
    if not isinstance(messages, list):
        raise BadRecord("messages", f"got {got(messages)}; expected a list of messages")
    tool_errors: list[JsonValue] = []
    events: list[Event] = []
    for i, message in enumerate(messages):
        events.extend(_message(message, f"messages[{i}]", tool_errors))
    events = ended(events, _ending(sample))
    scores_raw = sample.get("scores") or {}
    if not isinstance(scores_raw, dict):
        raise BadRecord("scores", f"got {got(scores_raw)}; expected an object")
    scores: dict[str, JsonValue] = {}
    kept: JsonObject = {}
    for name, score in scores_raw.items():
        if not isinstance(score, dict) or "value" not in score:
            raise BadRecord(f"scores.{name}", f"got {got(score)}; expected a score object")
        scores[name] = score["value"]
        kept[name] = {k: score[k] for k in ("value", "answer", "explanation") if k in score}
    store = sample.get("store") or {}
    if not isinstance(store, dict):
        raise BadRecord("store", f"got {got(store)}; expected an object")
    metadata: JsonObject = {"task": task, "model": model, "sample_id": sample_id,
                            "epoch": epoch, "scores": kept}
    for key in ("total_time", "working_time"):
        if sample.get(key) is not None:
            metadata[key] = sample[key]
    if sample.get("metadata"):
        metadata["sample"] = sample["metadata"]
    if tool_errors:
        metadata["tool_errors"] = tool_errors
    return ImportedRun(
        id=f"{task}:{sample_id}:{epoch}", source=f"{path}#samples[{index}]",
        task_id=f"{task}:{sample_id}", trajectory=tuple(events),
        instruction=_instruction(sample.get("input", ""), "input"),
        criteria={"target": sample.get("target", "")}, final_state=store,
        metadata=metadata, scores=scores)


def _dump(model: Any, raw: RawSample) -> JsonObject:
    """The fields read of one sample, validated by inspect_ai's sample model (which
    also brings an older log's samples up to date), as checked JSON."""
    if raw.value is None:
        raise BadRecord("", raw.problem)
    try:
        sample = model.model_validate(raw.value)
        dumped = sample.model_dump(mode="json", include=_FIELDS)
    # pydantic's validation or serialisation of one sample (a bad score, an epoch
    # that is no number, a value a solver put in the store): whatever it raises,
    # this sample cannot be read, the others still can.
    except Exception as e:
        raise BadRecord("", f"inspect_ai cannot read it as a sample: {type(e).__name__}: "
                        f"{clipped(str(e), 300)}") from e
    checked = json_value(dumped, "")
    if not isinstance(checked, dict):
        raise BadRecord("", f"got {got(checked)}; expected a sample object")
    return checked


def _names(header: JsonObject) -> tuple[str, str]:
    spec = header.get("eval")
    task = spec.get("task") if isinstance(spec, dict) else None
    model = spec.get("model") if isinstance(spec, dict) else None
    if not isinstance(task, str) or not isinstance(model, str):
        raise LogFileError(f"eval.task and eval.model: got {got(task)} and {got(model)}; "
                           "expected the task's and the model's names")
    return task, model


def read_inspect(paths: Iterable[Path], errors: list[LoadError]) -> Iterator[ImportedRun]:
    """Every sample of every log as a run, read one at a time; a file that is no log,
    or a bad sample, is one error in ``errors`` (``samples[N]`` names the sample)."""
    model = _load().EvalSample
    for path in paths:
        try:
            header, samples = log_samples(path)
            task, name = _names(header)
        except LogFileError as e:
            errors.append(LoadError(str(path), 0, "", f"not an inspect_ai eval log: {e}"))
            continue
        for raw in samples:
            where = f"samples[{raw.index}]"
            try:
                yield _run(_dump(model, raw), task, name, path, raw.index)
            except BadRecord as bad:
                field = where + (f".{bad.field.lstrip('.')}" if bad.field else "")
                errors.append(LoadError(str(path), 0, field, bad.message))


def sniff(head: bytes, path: Path) -> bool:
    """An ``.eval`` log (a zip file), or a ``.json`` log (its header names the eval)."""
    if path.suffix == ".eval":
        return head.startswith(b"PK")
    return head.lstrip().startswith(b"{") and b'"eval"' in head and b'"status"' in head


FORMAT = RunFormat("inspect", "inspect_ai eval logs, .eval or .json", (".eval", ".json"),
                   sniff, "import/inspect.md", read_inspect, extra="inspect")
