"""What each grader writes as evidence, and the tool-order control on a run with no
lookup at all. Written to kill mutants `metaeval mutate` found surviving: a
reader acts on the evidence, so a wrong sentence is a wrong report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from metaeval.contract import CheckSpec, EvalInput, Finding, JsonObject, Outcome
from metaeval.graders import build_grader
from tests.builders import assistant, call, result, run


def grade(grader: str, x: EvalInput, **params: object) -> Finding:
    return build_grader(CheckSpec(grader, cast(JsonObject, params))).grade(x)


def details(finding: Finding) -> list[str]:
    return [e.detail for e in finding.evidence]


def test_tool_order_fails_a_refund_with_no_lookup_at_all() -> None:
    finding = grade("tool_order", run(call("c1", "refund", order_id="A-1182")),
                    before="get_order", after="refund")
    assert finding.outcome is Outcome.FAIL
    assert details(finding) == ["refund called with no earlier call to get_order"]


def test_tool_order_evidence_says_whether_after_was_called() -> None:
    never = grade("tool_order", run(call("c1", "get_order")), before="get_order",
                  after="refund")
    assert details(never) == ["refund was never called"]
    twice = grade("tool_order", run(call("c1", "get_order"), call("c2", "refund"),
                                    call("c3", "refund")), before="get_order", after="refund")
    assert details(twice) == ["get_order called before every refund (2)"]


def test_answer_contains_evidence_says_contains_or_lacks() -> None:
    x = run(assistant("Refund issued for A-1182."))
    assert details(grade("answer_contains", x, text="a-1182")) == ["answer contains 'a-1182'"]
    assert details(grade("answer_contains", x, text="B-2207")) == ["answer lacks 'B-2207'"]
    assert details(grade("answer_contains", x, pattern=r"A-\d+")) == [
        "answer matches 'A-\\\\d+'"]
    assert details(grade("answer_contains", x, pattern=r"B-\d+")) == [
        "answer does not match 'B-\\\\d+'"]


def test_state_includes_says_when_the_path_is_missing() -> None:
    missing = grade("state_includes", run(final={}), path="refunds",
                    match={"order_id": "A-1182"})
    assert details(missing) == ["missing; 0 of 0 rows match {\"order_id\": \"A-1182\"}, "
                                "expected 1"]
    present = grade("state_includes", run(final={"refunds": []}), path="refunds",
                    match={"order_id": "A-1182"})
    assert details(present) == ["0 of 0 rows match {\"order_id\": \"A-1182\"}, expected 1"]


def states(before: Mapping[str, object], after: Mapping[str, object]) -> EvalInput:
    return run(result("c1", {}), initial=before, final=after)


def test_state_unchanged_counts_the_other_changes() -> None:
    one = grade("state_unchanged", states({"a": 1, "b": 1}, {"a": 2, "b": 1}))
    assert details(one) == ["a: 1 -> 2"]
    two = grade("state_unchanged", states({"a": 1, "b": 1}, {"a": 2, "b": 2}))
    assert details(two) == ["a: 1 -> 2 (and 1 more)"]
    three = grade("state_unchanged", states({"a": 1, "b": 1, "c": 1}, {"a": 2, "b": 2, "c": 2}))
    assert details(three) == ["a: 1 -> 2 (and 2 more)"]


def test_state_unchanged_names_the_allowed_paths_when_it_passes() -> None:
    same = states({"a": 1}, {"a": 1})
    assert details(grade("state_unchanged", same)) == ["unchanged"]
    assert details(grade("state_unchanged", same, **{"except": ["orders", "log"]})) == [
        "unchanged outside orders, log"]


def test_tool_called_says_when_the_tool_was_never_called() -> None:
    finding = grade("tool_called", run(call("c1", "get_order")), tool="refund")
    assert finding.outcome is Outcome.FAIL
    assert details(finding) == ["refund was never called"]
