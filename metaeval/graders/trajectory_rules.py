"""Rules over what the agent did, read from the recorded trajectory.

These graders read tool calls and messages; they never read the agent's claims
about what it did, and never the case file's copy of an answer. A tool call
whose result says it failed (``ToolResult.failed``: an error flag, a result
that starts with "Error", an object with an ``error``) is read by what the
check promises. A prohibition (``no_tool_called``, the ``after`` side of
``tool_order``) counts it: the check exists to catch the agent trying, and an
attempt something downstream refused is still an attempt. A requirement
(``tool_called``, the ``before`` side of ``tool_order``) leaves it out: a
refused write is not a write. ``failed_calls = "count"`` or ``"ignore"`` sets
both sides of a check alike. Evidence names where the event sits in the file
(``Trajectory.at``).
"""

from __future__ import annotations

from collections.abc import Callable

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
"""``failed_calls``: ignore a call whose result is an error, or count it. Left out,
each side of a check takes its own default: a prohibition counts, a requirement
ignores."""


_DEFAULT = object()
"""``failed_calls`` not given: each side of the check takes its own default."""


def _counts(value: object, *, default: bool) -> bool:
    """Whether failed calls count for one side of a check, from the ``failed_calls``
    parameter; ``default``: that side's own (True for a prohibition)."""
    if value is _DEFAULT:
        return default
    if value not in FAILED_CALLS:
        raise CheckSpecError("failed_calls", f"got {value!r}; expected one of "
                             f"{', '.join(map(repr, FAILED_CALLS))}")
    return value == "count"


def _hashed(params: JsonObject, reading: str | None) -> JsonObject:
    """The params a version hashes. Ignoring every failed call was the one default
    before prohibitions counted theirs, so only that reading (None) is left
    unhashed: a version names what a check does, and findings stored under it
    compare only with the same reading."""
    return params if reading is None else {**params, "failed_calls": reading}


def _calls(trajectory: Trajectory, counted: Callable[[ToolCall], bool],
           ) -> tuple[list[tuple[int, ToolCall]], int]:
    """The calls that count (a failed one only where ``counted`` says so), with their
    positions, and how many failed ones were left out."""
    gone = trajectory.failed_calls()
    calls = [(i, c) for i, c in trajectory.indexed(ToolCall) if i not in gone or counted(c)]
    return calls, len(gone) - sum(i in gone for i, _ in calls)


def _left_out(n: int) -> str:
    return f" ({n} failed call{'s' if n != 1 else ''} not counted)" if n else ""


def _attempt(trajectory: Trajectory, i: int) -> str:
    return " (its result is an error: an attempt counts)" if i in trajectory.failed_calls() \
        else ""


def no_tool_called(tool: object, failed_calls: object = _DEFAULT, *,
                   name: str = "") -> RuleGrader:
    """Fails if ``tool`` was ever called (an action the task forbids), whether or not
    the call failed; ``failed_calls = "ignore"`` leaves out a call whose result is an
    error."""
    forbidden = want_str(tool, "tool")
    count = _counts(failed_calls, default=True)

    def check(x: EvalInput) -> Judgement:
        calls, left_out = _calls(x.trajectory, lambda _: count)
        for i, call in calls:
            if call.tool == forbidden:
                return failed(Evidence(x.trajectory.at(i),
                                       f"{forbidden} called with {short(call.args)}"
                                       + _attempt(x.trajectory, i)))
        n = len(x.trajectory.tool_calls())
        return passed(Evidence("trajectory", f"{forbidden} never called in {n} tool calls"
                                             + _left_out(left_out)))

    return rule("no_tool_called", check, name=name,
                params=_hashed({"tool": forbidden}, "count" if count else None),
                rank=RANK_TRAJECTORY)


def tool_called(tool: object, args: object = None, failed_calls: object = _DEFAULT, *,
                name: str = "") -> RuleGrader:
    """Passes if some call to ``tool`` had arguments including the ``args`` subset; a
    call whose result is an error did not happen unless ``failed_calls`` is ``count``."""
    wanted = want_str(tool, "tool")
    subset = want_object(args, "args") if args is not None else {}
    count = _counts(failed_calls, default=False)

    def check(x: EvalInput) -> Judgement:
        counted, left_out = _calls(x.trajectory, lambda _: count)
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
                params=_hashed({"tool": wanted, "args": subset}, "count" if count else None),
                rank=RANK_TRAJECTORY)


def tool_order(before: object, after: object, failed_calls: object = _DEFAULT, *,
               name: str = "") -> RuleGrader:
    """Fails if ``after`` was called with no earlier call to ``before`` (a refund
    issued without first looking the order up). A failed call to ``after`` still
    counts (an attempt without the lookup is the violation); a failed call to
    ``before`` is no lookup. ``failed_calls`` sets both sides alike."""
    first = want_str(before, "before")
    then = want_str(after, "after")
    count_before = _counts(failed_calls, default=False)
    count_after = _counts(failed_calls, default=True)

    def counted(call: ToolCall) -> bool:
        # The forbidden side wins when both name one tool: an attempt is never dropped.
        return count_after if call.tool == then else count_before

    def check(x: EvalInput) -> Judgement:
        seen_before: int | None = None
        checked = 0
        calls, left_out = _calls(x.trajectory, counted)
        for i, call in calls:
            if call.tool == first and seen_before is None:
                seen_before = i
            elif call.tool == then:
                if seen_before is None:
                    return failed(Evidence(x.trajectory.at(i),
                                           f"{then} called with no earlier call to {first}"
                                           + _attempt(x.trajectory, i)))
                checked += 1
        if checked == 0 or seen_before is None:
            return passed(Evidence("trajectory", f"{then} was never called"
                                                 + _left_out(left_out)))
        return passed(Evidence(x.trajectory.at(seen_before),
                               f"{first} called before every {then} ({checked})"))

    return rule("tool_order", check, name=name,
                params=_hashed({"before": first, "after": then},
                               "count" if count_before else "count after" if count_after
                               else None),
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
