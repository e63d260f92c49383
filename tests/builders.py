"""Small builders for hand-written runs, so each test shows only what it is about."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from metaeval.contract import (
    EvalInput,
    Event,
    JsonObject,
    JsonValue,
    Message,
    TaskSpec,
    ToolCall,
    ToolResult,
    Trajectory,
)


def user(text: str) -> Message:
    return Message("user", text)


def assistant(text: str) -> Message:
    return Message("assistant", text)


def call(call_id: str, tool: str, **args: JsonValue) -> ToolCall:
    return ToolCall(call_id, tool, dict(args))


def result(call_id: str, content: JsonValue) -> ToolResult:
    return ToolResult(call_id, content)


def run(*events: Event, initial: Mapping[str, object] | None = None,
        final: Mapping[str, object] | None = None,
        criteria: Mapping[str, object] | None = None) -> EvalInput:
    """A run of the refund task; states and criteria are JSON-shaped test data."""
    task = TaskSpec("refund-damaged-item", "Refund order A-1182.", _json(criteria))
    return EvalInput(task, Trajectory(tuple(events)), _json(initial), _json(final))


def _json(value: Mapping[str, object] | None) -> JsonObject:
    return cast(JsonObject, dict(value or {}))
