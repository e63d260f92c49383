"""Where a finding's evidence points, and that its lists stay readable. A reader
follows ``at`` to the run (``trajectory``, ``final_state``, ``task.criteria``);
a list of figures or keys run together ("49.9912") reads as one wrong figure.
Written to kill the ``empty_string_literal`` mutants that survived in the
evidence of the built-in graders."""

from __future__ import annotations

from typing import cast

import pytest

from metaeval.contract import CheckSpec, EvalInput, Evidence, Finding, JsonObject, Outcome
from metaeval.errors import CheckSpecError
from metaeval.graders import build_grader
from metaeval.graders.judge_check import JudgeGrader
from metaeval.importing import AllowedModules
from tests.builders import assistant, call, result, run, user
from tests.judges.conftest import Recording


def grade(grader: str, x: EvalInput, **params: object) -> Finding:
    return build_grader(CheckSpec(grader, cast(JsonObject, params))).grade(x)


def only(finding: Finding) -> Evidence:
    [evidence] = finding.evidence
    return evidence


NO_ANSWER = run(user("refund A-1182"), call("c1", "refund"))


@pytest.mark.parametrize(("grader", "params"), [
    ("answer_contains", {"text": "refund"}),
    ("grounded_numbers", {}),
    ("answer_states", {"facts": ["amount"]}),
])
def test_a_run_with_no_answer_points_at_the_trajectory(grader: str,
                                                       params: dict[str, object]) -> None:
    finding = grade(grader, NO_ANSWER, **params)
    assert finding.outcome is Outcome.UNSCORED
    assert only(finding) == Evidence("trajectory", "no final assistant message")


def test_a_judge_check_with_no_answer_points_at_the_trajectory() -> None:
    finding = JudgeGrader(Recording(), "polite", "polite").grade(NO_ANSWER)
    assert only(finding) == Evidence("trajectory", "no final assistant message")


def test_answer_states_points_at_the_criterion_it_cannot_use() -> None:
    finding = grade("answer_states", run(assistant("Refunded."), criteria={"amount": None}),
                    facts=["amount"])
    assert finding.outcome is Outcome.UNSCORED
    assert only(finding) == Evidence("task.criteria", "amount")


def test_whole_run_rules_point_at_the_trajectory() -> None:
    x = run(call("c1", "get_order"), assistant("Looked it up."))
    assert only(grade("no_tool_called", x, tool="refund")).at == "trajectory"
    assert only(grade("tool_called", x, tool="refund")).at == "trajectory"
    assert only(grade("tool_order", x, before="get_order", after="refund")).at == "trajectory"
    assert only(grade("max_steps", x, value=5)).at == "trajectory"
    assert only(grade("max_steps", x, value=1)).at == "trajectory"


def test_max_steps_counts_only_assistant_messages_as_replies() -> None:
    x = run(user("refund"), call("c1", "get_order"), assistant("Done."))
    assert only(grade("max_steps", x, value=5)).detail.startswith(
        "2 steps (1 tool calls + 1 assistant messages)")


def test_state_unchanged_passes_pointing_at_the_final_state() -> None:
    x = run(result("c1", {}), initial={"a": 1}, final={"a": 1})
    assert only(grade("state_unchanged", x)).at == "final_state"


def test_lists_of_figures_and_keys_are_separated() -> None:
    answer = run(user("the refund is 49.99, order 1182"), assistant("Refunded 49.99 and 17.50."))
    lacks = only(grade("answer_contains", answer, numbers=[12.5, 30]))
    assert lacks.detail.endswith("lacks 12.5, 30")
    shows = only(grade("answer_contains", answer, numbers=[49.99, 17.5]))
    assert shows.detail.endswith("shows 49.99, 17.5")
    ungrounded = grade("grounded_numbers", run(assistant("Refunded 49.99 and 17.50.")))
    assert only(ungrounded).detail.endswith("49.99, 17.50")
    facts = run(assistant("Refunded."), criteria={"amount": 49.99, "order": "B-2207"})
    assert only(grade("answer_states", facts, facts=["amount", "order"])).detail.endswith(
        "amount=49.99, order='B-2207'")
    stated = run(assistant("Refunded 49.99 on B-2207."),
                 criteria={"amount": 49.99, "order": "B-2207"})
    assert only(grade("answer_states", stated, facts=["amount", "order"])).detail.endswith(
        "states amount, order")


def test_registry_errors_list_the_choices_separately() -> None:
    with pytest.raises(CheckSpecError) as unknown:
        build_grader(CheckSpec("tool_order", {"before": "a", "after": "b", "afer": "c"}))
    assert "expected: after, before" in unknown.value.message
    with pytest.raises(CheckSpecError) as none:
        # every built-in takes a parameter now; a user factory may take none
        build_grader(CheckSpec("tests.fixtures.user_graders:always_pass", {"tool": "x"}),
                     AllowedModules(("tests.fixtures.user_graders",)))
    assert "expected: none" in none.value.message
    with pytest.raises(CheckSpecError) as builtin:
        build_grader(CheckSpec("refund_issued", {}))
    assert "answer_contains, answer_states, " in builtin.value.message


def test_a_factory_called_from_python_names_its_grader() -> None:
    # Without a check spec there is no label: the grader is named after itself,
    # and its version says which grader it is a version of.
    from metaeval.graders.answer_checks import answer_contains, answer_states, grounded_numbers
    from metaeval.graders.state_checks import state_includes, state_unchanged
    from metaeval.graders.trajectory_rules import (
        max_steps,
        no_tool_called,
        tool_called,
        tool_order,
    )

    graders = [answer_contains(text="refund"), grounded_numbers(), answer_states(["amount"]),
               state_includes("refunds", {}), state_unchanged(), no_tool_called("refund"),
               tool_called("refund"), tool_order("get_order", "refund"), max_steps(3)]
    names = ["answer_contains", "grounded_numbers", "answer_states", "state_includes",
             "state_unchanged", "no_tool_called", "tool_called", "tool_order", "max_steps"]
    assert [g.name for g in graders] == names
    assert [g.version.split("/")[0] for g in graders] == names
