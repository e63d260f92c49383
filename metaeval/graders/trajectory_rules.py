"""Rules over what the agent did, read from the recorded trajectory.

These graders read tool calls and messages; they never read the agent's claims
about what it did, and never the case file's copy of an answer. A tool call
whose result says it failed (``ToolResult.failed``: an error flag, a result
that starts with "Error", an object with an ``error``) did not happen for the
tool checks unless the check says ``failed_calls = "count"``: a refused write
is not a write. Evidence names where the event sits in the file
(``Trajectory.at``).
"""

from __future__ import annotations

from metaeval.contract import EvalInput, Evidence, JsonObject, Message, ToolCall, Trajectory
from metaeval.errors import CheckSpecError
from metaeval.graders.base import (
    RANK_TRAJECTORY,
    Judgement,
    RuleGrader,
    failed,
    includes,
    passed,
    rule,
    short,
    want_int,
    want_object,
    want_str,
)

FAILED_CALLS = ("ignore", "count")
"""``failed_calls``: ignore a call whose result is an error (the default), or count it."""


def _want_failed_calls(value: object) -> bool:
    """Whether failed calls count, from the ``failed_calls`` parameter."""
    if value not in FAILED_CALLS:
        raise CheckSpecError("failed_calls", f"got {value!r}; expected one of "
                             f"{', '.join(map(repr, FAILED_CALLS))}")
    return value == "count"


def _calls(trajectory: Trajectory, count_failed: bool,
           ) -> tuple[list[tuple[int, ToolCall]], int]:
    """The calls that count, with their positions, and how many failed ones were left out."""
    calls = trajectory.indexed(ToolCall)
    if count_failed:
        return calls, 0
    gone = trajectory.failed_calls()
    return [(i, c) for i, c in calls if i not in gone], sum(i in gone for i, _ in calls)


def _with_failed(params: JsonObject, count_failed: bool) -> JsonObject:
    """The params a version hashes: ``failed_calls`` only when it is not the default."""
    return {**params, "failed_calls": "count"} if count_failed else params


def _left_out(n: int) -> str:
    return f" ({n} failed call{'s' if n != 1 else ''} not counted)" if n else ""


def no_tool_called(tool: object, failed_calls: object = "ignore", *,
                   name: str = "") -> RuleGrader:
    """Fails if ``tool`` was ever called (an action the task forbids); a call whose
    result is an error did not happen unless ``failed_calls`` is ``count``."""
    forbidden = want_str(tool, "tool")
    count_failed = _want_failed_calls(failed_calls)

    def check(x: EvalInput) -> Judgement:
        calls, left_out = _calls(x.trajectory, count_failed)
        for i, call in calls:
            if call.tool == forbidden:
                return failed(Evidence(x.trajectory.at(i),
                                       f"{forbidden} called with {short(call.args)}"))
        n = len(x.trajectory.tool_calls())
        return passed(Evidence("trajectory", f"{forbidden} never called in {n} tool calls"
                                             + _left_out(left_out)))

    return rule("no_tool_called", check, name=name,
                params=_with_failed({"tool": forbidden}, count_failed),
                rank=RANK_TRAJECTORY)


def tool_called(tool: object, args: object = None, failed_calls: object = "ignore", *,
                name: str = "") -> RuleGrader:
    """Passes if some call to ``tool`` had arguments including the ``args`` subset; a
    call whose result is an error did not happen unless ``failed_calls`` is ``count``."""
    wanted = want_str(tool, "tool")
    subset = want_object(args, "args") if args is not None else {}
    count_failed = _want_failed_calls(failed_calls)

    def check(x: EvalInput) -> Judgement:
        counted, left_out = _calls(x.trajectory, count_failed)
        calls = [(i, c) for i, c in counted if c.tool == wanted]
        for i, call in calls:
            if includes(call.args, subset):
                return passed(Evidence(x.trajectory.at(i),
                                       f"{wanted} called with {short(call.args)}"))
        if not calls:
            return failed(Evidence("trajectory", f"{wanted} was never called"
                                                 + _left_out(left_out)))
        return failed(*(Evidence(x.trajectory.at(i), f"{wanted} called with {short(c.args)}, "
                                 f"not including {short(subset)}") for i, c in calls))

    return rule("tool_called", check, name=name,
                params=_with_failed({"tool": wanted, "args": subset}, count_failed),
                rank=RANK_TRAJECTORY)


def tool_order(before: object, after: object, failed_calls: object = "ignore", *,
               name: str = "") -> RuleGrader:
    """Fails if ``after`` was called with no earlier call to ``before``
    (a refund issued without first looking the order up); a call whose result is
    an error did not happen unless ``failed_calls`` is ``count``."""
    first = want_str(before, "before")
    then = want_str(after, "after")
    count_failed = _want_failed_calls(failed_calls)

    def check(x: EvalInput) -> Judgement:
        seen_before: int | None = None
        checked = 0
        calls, left_out = _calls(x.trajectory, count_failed)
        for i, call in calls:
            if call.tool == first and seen_before is None:
                seen_before = i
            elif call.tool == then:
                if seen_before is None:
                    return failed(Evidence(x.trajectory.at(i),
                                           f"{then} called with no earlier call to {first}"))
                checked += 1
        if checked == 0 or seen_before is None:
            return passed(Evidence("trajectory", f"{then} was never called"
                                                 + _left_out(left_out)))
        return passed(Evidence(x.trajectory.at(seen_before),
                               f"{first} called before every {then} ({checked})"))

    return rule("tool_order", check, name=name,
                params=_with_failed({"before": first, "after": then}, count_failed),
                rank=RANK_TRAJECTORY)


def max_steps(value: object, *, name: str = "") -> RuleGrader:
    """Fails when tool calls plus assistant messages exceed ``value``."""
    budget = want_int(value, "value", minimum=1)

    def check(x: EvalInput) -> Judgement:
        calls = len(x.trajectory.tool_calls())
        replies = sum(1 for _, m in x.trajectory.indexed(Message) if m.role == "assistant")
        steps = calls + replies
        detail = (f"{steps} steps ({calls} tool calls + {replies} assistant messages), "
                  f"budget {budget}")
        if steps > budget:
            return failed(Evidence("trajectory", detail))
        return passed(Evidence("trajectory", detail))

    return rule("max_steps", check, name=name, params={"value": budget}, rank=RANK_TRAJECTORY)
