"""Anthropic Messages: content blocks to trajectory events, and logged requests to runs.

Two uses: the meta-set reader hands it a message whose content holds
``tool_use``, ``tool_result`` or ``thinking`` blocks (OpenAI chat messages stay
with the meta-set reader); ``metaeval import anthropic`` reads JSON Lines of
logged Messages API requests (``system``, ``messages``, optionally the
``response``), one run a line. The mapping is docs/import-anthropic.md. A block
of a type this module does not know is an error naming it, never skipped.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
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
    BadRecord,
    ImportedRun,
    RunFormat,
    decode_tool_content,
    ended,
    got,
)
from metaeval.keys import did_you_mean
from metaeval.untrusted_json import LoadError, read_jsonl

__all__ = ["BLOCK_TYPES", "FORMAT", "STOPPED", "is_anthropic_message", "message_events",
           "read_anthropic"]

BLOCK_TYPES = ("text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image",
               "document", "server_tool_use", "web_search_tool_result")
# The content parts an OpenAI chat message may hold; a block of any other type makes
# a message Anthropic's, so that an unknown block is named here, not as bad chat.
_CHAT_PARTS = {"text", "image_url", "input_audio", "file", "refusal"}
# Where each block may stand: a person (or the harness, for tool results) writes the
# user turn, the model writes the assistant turn.
_ALLOWED = {"user": {"text", "tool_result", "image", "document"},
            "assistant": {"text", "tool_use", "thinking", "redacted_thinking",
                          "server_tool_use", "web_search_tool_result"}}
_MESSAGE_FIELDS = {"role", "content"}
# Messages API request parameters: read (model) or left out (sampling settings);
# known, so that a misspelt key is still an error.
_REQUEST_FIELDS = {"model", "max_tokens", "temperature", "top_p", "top_k", "stop_sequences",
                   "tools", "tool_choice", "stream", "thinking", "service_tier", "container",
                   "mcp_servers", "metadata", "system", "messages"}
_LINE_FIELDS = _REQUEST_FIELDS | {"id", "task_id", "response"}
_RESPONSE_FIELDS = {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence",
                    "usage", "container"}
STOPPED: dict[str, type[Timeout] | type[Error]] = {
    "max_tokens": Timeout, "model_context_window_exceeded": Timeout, "pause_turn": Timeout,
    "refusal": Error}
"""The reply's ``stop_reason`` values that say the model did not finish its turn: a
limit cut it (a ``timeout`` event), or it refused (an ``error`` event); either way
the run has no answer. ``end_turn``, ``stop_sequence`` and ``tool_use`` finished it
(a run that ends on a ``tool_use`` nobody answered ends in a step limit)."""


def is_anthropic_message(raw: JsonObject) -> bool:
    """True when ``raw``'s content holds a block that no OpenAI chat message holds."""
    content = raw.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and not (isinstance(b.get("type"), str) and b["type"] in _CHAT_PARTS)
        for b in content)


def _text(value: JsonValue, where: str) -> str:
    if not isinstance(value, str):
        raise BadRecord(where, f"got {got(value)}; expected a string")
    return value


def _name(value: JsonValue, where: str) -> str:
    """An id or a tool's name: a string that is not empty."""
    if not isinstance(value, str) or not value:
        raise BadRecord(where, f"got {got(value)}; expected a non-empty string")
    return value


def _result_content(block: JsonObject, where: str) -> JsonValue:
    """A ``tool_result``'s content: a string (JSON inside read as such) or blocks,
    whose text is joined; an image in a result cannot be carried and says so."""
    content = block.get("content", "")
    if isinstance(content, str):
        return decode_tool_content(content)
    if not isinstance(content, list):
        raise BadRecord(f"{where}.content", f"got {got(content)}; expected a string or a list "
                        "of text blocks")
    parts: list[str] = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part, dict):
            parts.append(_text(part.get("text"), f"{where}.content[{j}].text"))
        elif kind in ("image", "document"):
            parts.append(f"[{kind}]")
        else:
            raise BadRecord(f"{where}.content[{j}]", f"got {got(part)}; expected a text, image "
                            "or document block")
    return decode_tool_content("".join(parts))


def message_events(raw: JsonObject, where: str, tool_errors: list[str] | None = None,
                   origins: list[str] | None = None) -> list[Event]:
    """One Anthropic message (``{"role", "content"}``) as events, in block order:
    adjacent text blocks are one message; thinking is left out (a grader must not
    read reasoning as what the agent said). The ids of ``tool_result`` blocks with
    ``is_error`` are appended to ``tool_errors``; where each event was read
    (``where.content[k]``, the first block of a joined text) to ``origins``."""
    found = message_blocks(raw, where, tool_errors)
    if origins is not None:
        origins.extend(at for _, at in found)
    return [event for event, _ in found]


def message_blocks(raw: JsonObject, where: str, tool_errors: list[str] | None = None
                   ) -> list[tuple[Event, str]]:
    """``message_events`` with the place in the file each event was read from."""
    unknown = sorted(set(raw) - _MESSAGE_FIELDS)
    if unknown:
        raise BadRecord(f"{where}.{unknown[0]}", "unknown field; expected role and content"
                        f"{did_you_mean(unknown[0], _MESSAGE_FIELDS)}")
    role = raw.get("role")
    if not isinstance(role, str) or role not in _ALLOWED:
        raise BadRecord(f"{where}.role", f"got {got(role)}; expected 'user' or 'assistant'")
    content = raw.get("content")
    if isinstance(content, str):
        return [(Message(role, content), where)]
    if not isinstance(content, list):
        raise BadRecord(f"{where}.content", f"got {got(content)}; expected a string or a list "
                        "of content blocks")
    events: list[tuple[Event, str]] = []
    text: list[str] = []
    text_at = ""

    def flush() -> None:
        if text:
            events.append((Message(role, "".join(text)), text_at))
            text.clear()

    for i, block in enumerate(content):
        at = f"{where}.content[{i}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(block, dict) or not isinstance(kind, str) or kind not in BLOCK_TYPES:
            raise BadRecord(f"{at}.type" if isinstance(block, dict) else at,
                            f"got {got(kind if isinstance(block, dict) else block)}; expected "
                            f"one of {', '.join(BLOCK_TYPES)}")
        if kind not in _ALLOWED[role]:
            raise BadRecord(f"{at}.type", f"got {kind!r} in the {role} turn; expected one of "
                            f"{', '.join(sorted(_ALLOWED[role]))}")
        if kind in ("text", "image", "document") and not text:
            text_at = at
        if kind == "text":
            text.append(_text(block.get("text"), f"{at}.text"))
        elif kind in ("image", "document"):
            text.append(f"[{kind}]")
        elif kind in ("tool_use", "server_tool_use"):
            flush()
            args = block.get("input", {})
            if not isinstance(args, dict):
                raise BadRecord(f"{at}.input", f"got {got(args)}; expected an object")
            events.append((ToolCall(_name(block.get("id"), f"{at}.id"),
                                    _name(block.get("name"), f"{at}.name"), args), at))
        elif kind in ("tool_result", "web_search_tool_result"):
            flush()
            call_id = _name(block.get("tool_use_id"), f"{at}.tool_use_id")
            if block.get("is_error") is True and tool_errors is not None:
                tool_errors.append(call_id)
            events.append((ToolResult(call_id, _result_content(block, at)), at))
    flush()
    return events


def _system(value: JsonValue, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(b, dict) and b.get("type") == "text"
                                       for b in value):
        return "".join(_text(b.get("text"), f"{where}[{i}].text")
                       for i, b in enumerate(value) if isinstance(b, dict))
    raise BadRecord(where, f"got {got(value)}; expected a string or a list of text blocks")


def _run(raw: JsonValue, path: Path, line: int, name: str) -> ImportedRun:
    if not isinstance(raw, dict):
        raise BadRecord("", f"got {got(raw)}; expected a Messages API request object")
    extra = sorted(set(raw) - _LINE_FIELDS)
    for key in extra:
        # A key of the wrapper's own (a category, a conversation id) is kept in the
        # metadata, where a suite can read it; one a letter off a request field is
        # a misspelling that would silently drop that field, so it is refused.
        close = difflib.get_close_matches(key[:200], sorted(_LINE_FIELDS), n=1, cutoff=0.85)
        if close:
            raise BadRecord(key, "unknown field; expected a Messages API request (system, "
                            "messages, model, ...) with optional id, task_id and response; "
                            f"did you mean {close[0]!r}? (a key of your own is kept in the "
                            "run's metadata when it is no near miss of one of these)")
    run_id = raw.get("id", f"{name}-{line}")
    task_id = raw.get("task_id", run_id)
    if not isinstance(run_id, str) or not run_id:
        raise BadRecord("id", f"got {got(run_id)}; expected a non-empty string")
    if not isinstance(task_id, str) or not task_id:
        raise BadRecord("task_id", f"got {got(task_id)}; expected a non-empty string")
    messages = raw.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRecord("messages", f"got {got(messages)}; expected a non-empty list of "
                        "messages")
    tool_errors: list[str] = []
    events: list[Event] = []
    if "system" in raw:
        events.append(Message("system", _system(raw["system"], "system")))
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise BadRecord(f"messages[{i}]", f"got {got(message)}; expected a message object")
        events.extend(message_events(message, f"messages[{i}]", tool_errors))
    metadata: JsonObject = {}
    if isinstance(raw.get("model"), str):
        metadata["model"] = raw["model"]
    if "metadata" in raw:
        metadata["request_metadata"] = raw["metadata"]
    for key in extra:
        metadata.setdefault(key, raw[key])
    response = raw.get("response")
    stop: Timeout | Error | None = None
    if response is not None:
        events.extend(_response(response, metadata, tool_errors))
        reason = metadata.get("stop_reason")
        if isinstance(reason, str) and reason in STOPPED:
            stop = STOPPED[reason](f"stop_reason {reason!r}: the model did not finish its turn")
    events = ended(events, stop)
    if tool_errors:
        metadata["tool_errors"] = list[JsonValue](tool_errors)
    instruction = next((e.content for e in events if isinstance(e, Message)
                        and e.role == "user"), "")
    return ImportedRun(run_id, f"{path}:{line}", task_id, tuple(events), instruction,
                       metadata=metadata)


def _response(raw: JsonValue, metadata: JsonObject, tool_errors: list[str]) -> list[Event]:
    if not isinstance(raw, dict) or raw.get("type", "message") != "message":
        raise BadRecord("response", f"got {got(raw)}; expected a Messages API response "
                        "(type 'message')")
    unknown = sorted(set(raw) - _RESPONSE_FIELDS)
    if unknown:
        raise BadRecord(f"response.{unknown[0]}", "unknown field; expected one of "
                        f"{', '.join(sorted(_RESPONSE_FIELDS))}")
    for key in ("stop_reason", "usage"):
        if key in raw:
            metadata[key] = raw[key]
    reason = raw.get("stop_reason")
    if reason is not None and not isinstance(reason, str):
        raise BadRecord("response.stop_reason", f"got {got(reason)}; expected a string")
    if "model" in raw and "model" not in metadata:
        metadata["model"] = raw["model"]
    return message_events({"role": raw.get("role", "assistant"), "content": raw.get("content")},
                          "response", tool_errors)


def default_names(paths: Iterable[Path]) -> dict[Path, str]:
    """What a line without an id is named by, file by file: the file's stem, with as
    many of its folders before it as tell it from another file of that stem
    (``d1/s`` and ``d2/s``), so that two runs never get one id by default."""
    files = list(dict.fromkeys(paths))
    parts = {p: p.with_suffix("").parts for p in files}
    names: dict[Path, str] = {}
    for path in files:
        for depth in range(1, len(parts[path]) + 1):
            tail = parts[path][-depth:]
            if all(other == path or parts[other][-depth:] != tail for other in files):
                break
        names[path] = "/".join(tail)
    return names


def read_anthropic(paths: Iterable[Path], errors: list[LoadError]) -> Iterator[ImportedRun]:
    """Every good line of every file as a run; each bad line one error in ``errors``."""
    paths = list(paths)
    names = default_names(paths)
    for path in paths:
        for record in read_jsonl(path, errors):
            try:
                yield _run(record.value, path, record.line, names[path])
            except BadRecord as bad:
                errors.append(record.error(bad.field, bad.message))


def sniff(head: bytes, path: Path) -> bool:
    """A JSON Lines file whose first record is a Messages request (it has ``messages``)."""
    first = head.lstrip().split(b"\n", 1)[0]
    return first.startswith(b"{") and b'"messages"' in first and b'"resourceSpans"' not in first


FORMAT = RunFormat("anthropic", "JSON Lines of logged Anthropic Messages API requests, each "
                   "with its reply", (".jsonl",), sniff, "import/anthropic.md", read_anthropic,
                   per_call=True)
