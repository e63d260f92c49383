"""The grading contract: what a grader reads, what it returns, and how findings compose.

Everything here is a frozen value. A grader reads an ``EvalInput`` (the task
spec, the recorded trajectory, and the state before and after) and returns one
``Finding``; ``evaluate`` composes findings into a ``Verdict``. This module must
never let an unscored finding become a pass, nor average a failed gate away.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, TypeAlias, TypeVar, runtime_checkable

# What a grader of a user's own reads and returns (docs/graders-own.md): the promise.
__all__ = ["UNSCORED", "CheckSpec", "Error", "EvalInput", "Event", "Evidence", "Finding",
           "Grader", "JsonObject", "JsonValue", "Kind", "Message", "Outcome", "TaskSpec",
           "Timeout", "ToolCall", "ToolResult", "Trajectory", "Verdict", "evaluate"]

JsonValue: TypeAlias = (
    bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
)
JsonObject: TypeAlias = dict[str, JsonValue]


class Outcome(Enum):
    """What a finding or a verdict says about one run."""

    PASS = "pass"
    """The run meets the check."""
    FAIL = "fail"
    """The run breaks the check."""
    UNSCORED = "unscored"
    """The check could not decide; never a pass, never dropped from a denominator."""


UNSCORED = Outcome.UNSCORED


class Kind(Enum):
    """How a finding takes part in the verdict."""

    GATE = "gate"
    """Pass or fail; gates compose as an AND."""
    SCORE = "score"
    """A number with a threshold; below the threshold is a fail, like a failed gate."""


# --- the trajectory -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Message:
    """A chat message; ``role`` is user, assistant or system."""

    role: str
    content: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The agent asked for a tool; ``args`` is the decoded argument object."""

    id: str
    tool: str
    args: JsonObject


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returned to the agent for the call ``call_id``.

    ``is_error``: the harness marked the result an error (a native ``is_error``,
    an importer's flag); ``failed`` also reads an error from the content.
    """

    call_id: str
    content: JsonValue
    is_error: bool = False

    @property
    def failed(self) -> bool:
        """The call did not do its work: marked an error, or content that says so (a
        string starting with the word "error", an object with a non-empty ``error``)."""
        if self.is_error:
            return True
        content = self.content
        if isinstance(content, str):
            return _ERROR_TEXT.match(content) is not None
        if isinstance(content, dict):
            return content.get("error") not in (None, False, "", [], {})
        return False


# "Error: flight HAT030 not available", "ERROR - timeout"; not "errors were fixed".
_ERROR_TEXT = re.compile(r"\s*error\b(?!s)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Timeout:
    """The run was stopped for taking too long."""

    detail: str = ""


@dataclass(frozen=True, slots=True)
class Error:
    """The run was stopped by an error in the agent or its harness."""

    detail: str = ""


Event: TypeAlias = Message | ToolCall | ToolResult | Timeout | Error
E = TypeVar("E", Message, ToolCall, ToolResult, Timeout, Error)


@dataclass(frozen=True, slots=True)
class Trajectory:
    """The recorded events of one run, in order.

    ``origins`` names where each event was read, for evidence that points back
    into the file: ``trajectory[1].tool_calls[0]`` for the first call of a chat
    message, ``trajectory[2].content[1]`` for a block of a message. Empty when the
    events are the file's own list (``at`` then says ``trajectory[i]``).
    """

    events: tuple[Event, ...] = ()
    origins: tuple[str, ...] = ()

    def at(self, index: int) -> str:
        """Where the event at ``index`` of ``events`` was read, in the file's terms."""
        if len(self.origins) == len(self.events) and 0 <= index < len(self.origins):
            return self.origins[index]
        return f"trajectory[{index}]"

    def results(self) -> dict[int, int]:
        """Each answered tool call's position in ``events`` -> its result's position.

        Paired by id and position: a result answers the earliest call before it with
        its id that no result has answered yet, so a reused id (two calls ``c1``) pairs
        each call with its own result, not with the last result of that id."""
        waiting: dict[str, list[int]] = {}
        paired: dict[int, int] = {}
        for i, event in enumerate(self.events):
            if isinstance(event, ToolCall):
                waiting.setdefault(event.id, []).append(i)
            elif isinstance(event, ToolResult) and waiting.get(event.call_id):
                paired[waiting[event.call_id].pop(0)] = i
        return paired

    def failed_calls(self) -> frozenset[int]:
        """Positions of the tool calls whose result says they failed (``ToolResult.failed``)."""
        found = set()
        for call, result in self.results().items():
            event = self.events[result]
            if isinstance(event, ToolResult) and event.failed:
                found.add(call)
        return frozenset(found)

    def answer(self) -> str | None:
        """The last assistant message, or None when there is none or the run ends
        in a timeout or an error after it (the agent never finished answering)."""
        last = self.answer_index()
        return None if last is None else _content(self.events[last])

    def answer_index(self) -> int | None:
        """Position of the answer in ``events``; None when ``answer()`` is None."""
        for i in range(len(self.events) - 1, -1, -1):
            event = self.events[i]
            if isinstance(event, Timeout | Error):
                return None
            if isinstance(event, Message) and event.role == "assistant":
                return i
        return None

    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(e for e in self.events if isinstance(e, ToolCall))

    def indexed(self, kind: type[E]) -> list[tuple[int, E]]:
        """Events of one type with their positions, for evidence that points back."""
        return [(i, e) for i, e in enumerate(self.events) if isinstance(e, kind)]


def _content(event: Event) -> str:
    assert isinstance(event, Message)
    return event.content


# --- what a grader reads --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """One check of a task: ``{"grader": NAME, ...params, "name": optional}``.

    ``name`` defaults to the grader name; labels and reports refer to it.
    """

    grader: str
    params: JsonObject = field(default_factory=dict)
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or self.grader


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """What the agent was asked, and the hidden criteria its graders use."""

    id: str
    instruction: str = ""
    criteria: JsonObject = field(default_factory=dict)
    checks: tuple[CheckSpec, ...] = ()


@dataclass(frozen=True, slots=True)
class EvalInput:
    """Everything a grader may read about one run."""

    task: TaskSpec
    trajectory: Trajectory
    initial_state: JsonObject = field(default_factory=dict)
    final_state: JsonObject = field(default_factory=dict)
    state_recorded: bool = True
    """False when the run carries no state at all (an imported run whose format has
    none, and no field named for it): a state check is then unscored, not passed
    on two empty states."""

    @property
    def task_id(self) -> str:
        return self.task.id


# --- what a grader returns ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where a finding looked: ``trajectory[3]``, ``final_state.refunds``, ``answer``."""

    at: str
    detail: str


@dataclass(frozen=True, slots=True)
class Finding:
    """One grader's result on one run.

    For a score finding, ``score`` is compared with ``threshold``: below it the
    finding fails, whatever ``outcome`` says (see ``effective_outcome``).
    """

    grader: str
    grader_version: str
    kind: Kind
    outcome: Outcome
    score: float | None = None
    threshold: float | None = None
    evidence: tuple[Evidence, ...] = ()
    reason: str = ""
    """Why the finding is unscored (or, for pass and fail, a one-line summary)."""

    def effective_outcome(self) -> Outcome:
        if self.outcome is Outcome.UNSCORED:
            return Outcome.UNSCORED
        if self.kind is Kind.SCORE:
            if self.score is None:
                return Outcome.UNSCORED
            if self.threshold is not None and self.score < self.threshold:
                return Outcome.FAIL
        return self.outcome


@runtime_checkable
class Grader(Protocol):
    """Turns one recorded run into one Finding. Must not raise on a well-formed run."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def kind(self) -> Kind: ...

    @property
    def cost_rank(self) -> int:
        """Lower runs first: rules over the trace before state checks before judges."""
        ...

    def grade(self, x: EvalInput) -> Finding: ...


# --- composing findings ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verdict:
    """The composed result of every grader on one run.

    ``skipped`` names the graders not run because an earlier (cheaper) one failed.
    """

    task_id: str
    evaluator_version: str
    outcome: Outcome
    findings: tuple[Finding, ...]
    skipped: tuple[str, ...] = ()


def evaluator_version(graders: Iterable[Grader]) -> str:
    """A short hash of every grader's name and version, order-independent."""
    parts = sorted(f"{g.name}={g.version}" for g in graders)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def evaluate(x: EvalInput, graders: Sequence[Grader]) -> Verdict:
    """Run graders cheapest first and compose their findings.

    Gates are an AND: one failed finding fails the run, and the graders after it
    are not run (no judge call for a run that already failed). An unscored
    finding with no failure makes the verdict unscored, never pass. A run with no
    graders at all is unscored: nothing vouched for it.
    """
    ordered = sorted(graders, key=lambda g: g.cost_rank)  # stable: ties keep spec order
    findings: list[Finding] = []
    for i, grader in enumerate(ordered):
        finding = grader.grade(x)
        findings.append(finding)
        if finding.effective_outcome() is Outcome.FAIL:
            skipped = tuple(g.name for g in ordered[i + 1 :])
            return Verdict(x.task_id, evaluator_version(graders), Outcome.FAIL,
                           tuple(findings), skipped)
    outcomes = {f.effective_outcome() for f in findings}
    outcome = Outcome.PASS if outcomes == {Outcome.PASS} else Outcome.UNSCORED
    return Verdict(x.task_id, evaluator_version(graders), outcome, tuple(findings))

