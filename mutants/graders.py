"""Patch mutants for the built-in graders: each makes one check stop saying no.

A replacement that needs the original builds on it (imported before the
patch goes in), so the fault is exactly the one named in ``breaks``.
"""

from __future__ import annotations

import dataclasses

from metaeval.contract import EvalInput, Evidence, Message, ToolCall, Trajectory
from metaeval.graders import answer_checks, trajectory_rules
from metaeval.graders.base import Judgement, RuleGrader, passed
from metaeval.mutation.patches import PatchMutant, patch_mutant

_tool_order = trajectory_rules.tool_order
_no_tool_called = trajectory_rules.no_tool_called
_max_steps = trajectory_rules.max_steps
_grounded_numbers = answer_checks.grounded_numbers
_answer_states = answer_checks.answer_states


def _passing_when(grader: RuleGrader, escape: object) -> RuleGrader:
    """``grader`` with its check answering pass whenever ``escape(x)`` is true."""
    original = grader.check

    def check(x: EvalInput) -> Judgement:
        if callable(escape) and escape(x):
            return passed(Evidence("trajectory", "mutant"))
        return original(x)

    return dataclasses.replace(grader, check=check)


MUTANTS = [
    PatchMutant(id="state-unchanged-ignores-differences", target="metaeval.state:state_diff",
                replacement="lambda initial, final: []",
                breaks="state_unchanged sees no difference between the states, so side "
                       "effects the task forbids pass."),
    PatchMutant(id="subset-match-accepts-anything", target="metaeval.graders.base:includes",
                replacement="lambda actual, expected: True",
                breaks="tool_called and state_includes accept any arguments and any rows."),
    PatchMutant(id="bool-matches-int", target="metaeval.graders.base:includes",
                replacement="lambda actual, expected: actual == expected if not "
                            "isinstance(expected, dict) else isinstance(actual, dict) and "
                            "all(k in actual and actual[k] == v for k, v in expected.items())",
                breaks="True matches 1 (and False 0) in argument and row matches."),
]


@patch_mutant("tool-order-passes-without-before",
              target="metaeval.graders.trajectory_rules:tool_order",
              breaks="tool_order passes a run that never called `before` at all.")
def tool_order_without_before(before: object, after: object, *, name: str = "") -> RuleGrader:
    def before_missing(x: EvalInput) -> bool:
        return all(c.tool != before for c in x.trajectory.tool_calls())

    return _passing_when(_tool_order(before, after, name=name), before_missing)


@patch_mutant("forbidden-tool-allowed-once",
              target="metaeval.graders.trajectory_rules:no_tool_called",
              breaks="no_tool_called lets the forbidden tool through when it is called once.")
def forbidden_once(tool: object, *, name: str = "") -> RuleGrader:
    def called_once(x: EvalInput) -> bool:
        return sum(1 for c in x.trajectory.tool_calls() if c.tool == tool) == 1

    return _passing_when(_no_tool_called(tool, name=name), called_once)


@patch_mutant("forbidden-failed-call-allowed",
              target="metaeval.graders.trajectory_rules:no_tool_called",
              breaks="no_tool_called lets a forbidden call through when its result is an "
                     "error: the guard fails open on an attempt something refused.")
def forbidden_failed_allowed(tool: object, failed_calls: object = "ignore", *,
                             name: str = "") -> RuleGrader:
    return _no_tool_called(tool, failed_calls, name=name)


@patch_mutant("order-failed-after-allowed",
              target="metaeval.graders.trajectory_rules:tool_order",
              breaks="tool_order lets `after` through with no `before` when the call to "
                     "`after` failed.")
def order_failed_after_allowed(before: object, after: object, failed_calls: object = "ignore",
                               *, name: str = "") -> RuleGrader:
    return _tool_order(before, after, failed_calls, name=name)


@patch_mutant("step-budget-off-by-one", target="metaeval.graders.trajectory_rules:max_steps",
              breaks="max_steps allows one step more than the budget.")
def budget_plus_one(value: object, *, name: str = "") -> RuleGrader:
    budget = value + 1 if isinstance(value, int) and not isinstance(value, bool) else value
    return dataclasses.replace(_max_steps(budget, name=name), name=name or "max_steps")


@patch_mutant("ungrounded-figures-pass", target="metaeval.graders.answer_checks:grounded_numbers",
              breaks="grounded_numbers passes an answer whose figures no tool result shows.")
def grounded_anything(*, name: str = "") -> RuleGrader:
    def has_tool_results(x: EvalInput) -> bool:
        return any(isinstance(e, ToolCall) for e in x.trajectory.events)

    return _passing_when(_grounded_numbers(name=name), has_tool_results)


@patch_mutant("end-to-end-grader-reads-the-case-file",
              target="metaeval.graders.answer_checks:answer_states",
              breaks="answer_states grades the case file's copy of the answer, not what the "
                     "agent said, so every run with a stored answer passes.")
def answer_states_from_case_file(facts: object, *, name: str = "") -> RuleGrader:
    grader = _answer_states(facts, name=name)
    original = grader.check

    def check(x: EvalInput) -> Judgement:
        stored = x.task.criteria.get("answer")
        if isinstance(stored, str):
            x = dataclasses.replace(x, trajectory=Trajectory((Message("assistant", stored),)))
        return original(x)

    return dataclasses.replace(grader, check=check)
