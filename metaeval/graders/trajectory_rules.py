"""Rules over what the agent did, read from the recorded trajectory.

These graders read tool calls and messages; they never read the agent's claims
about what it did, and never the case file's copy of an answer.
"""

from __future__ import annotations

from metaeval.contract import EvalInput, Evidence, Message, ToolCall
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


def no_tool_called(tool: object, *, name: str = "") -> RuleGrader:
    """Fails if ``tool`` was ever called (an action the task forbids)."""
    forbidden = want_str(tool, "tool")

    def check(x: EvalInput) -> Judgement:
        for i, call in x.trajectory.indexed(ToolCall):
            if call.tool == forbidden:
                return failed(Evidence(f"trajectory[{i}]",
                                       f"{forbidden} called with {short(call.args)}"))
        n = len(x.trajectory.tool_calls())
        return passed(Evidence("trajectory", f"{forbidden} never called in {n} tool calls"))

    return rule("no_tool_called", check, name=name, params={"tool": forbidden},
                rank=RANK_TRAJECTORY)


def tool_called(tool: object, args: object = None, *, name: str = "") -> RuleGrader:
    """Passes if some call to ``tool`` had arguments including the ``args`` subset."""
    wanted = want_str(tool, "tool")
    subset = want_object(args, "args") if args is not None else {}

    def check(x: EvalInput) -> Judgement:
        calls = [(i, c) for i, c in x.trajectory.indexed(ToolCall) if c.tool == wanted]
        for i, call in calls:
            if includes(call.args, subset):
                return passed(Evidence(f"trajectory[{i}]",
                                       f"{wanted} called with {short(call.args)}"))
        if not calls:
            return failed(Evidence("trajectory", f"{wanted} was never called"))
        return failed(*(Evidence(f"trajectory[{i}]", f"{wanted} called with {short(c.args)}, "
                                 f"not including {short(subset)}") for i, c in calls))

    return rule("tool_called", check, name=name, params={"tool": wanted, "args": subset},
                rank=RANK_TRAJECTORY)


def tool_order(before: object, after: object, *, name: str = "") -> RuleGrader:
    """Fails if ``after`` was called with no earlier call to ``before``
    (a refund issued without first looking the order up)."""
    first = want_str(before, "before")
    then = want_str(after, "after")

    def check(x: EvalInput) -> Judgement:
        seen_before: int | None = None
        checked = 0
        for i, call in x.trajectory.indexed(ToolCall):
            if call.tool == first and seen_before is None:
                seen_before = i
            elif call.tool == then:
                if seen_before is None:
                    return failed(Evidence(f"trajectory[{i}]",
                                           f"{then} called with no earlier call to {first}"))
                checked += 1
        if checked == 0:
            return passed(Evidence("trajectory", f"{then} was never called"))
        return passed(Evidence(f"trajectory[{seen_before}]",
                               f"{first} called before every {then} ({checked})"))

    return rule("tool_order", check, name=name, params={"before": first, "after": then},
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
