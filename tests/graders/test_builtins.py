"""Every built-in grader, on hand-written runs: a case where it must pass and one
where it must fail, with the evidence it records."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import cast

import pytest

from metaeval.contract import CheckSpec, EvalInput, Event, Finding, JsonObject, Outcome, Timeout
from metaeval.graders import build_grader
from tests.builders import assistant, call, result, run, user


def grade(spec: Mapping[str, object], x: EvalInput) -> Finding:
    params = cast(JsonObject, {k: v for k, v in spec.items() if k not in ("grader", "name")})
    return build_grader(CheckSpec(str(spec["grader"]), params,
                                  str(spec.get("name", "")))).grade(x)


LOOKUP: list[Event] = [call("c1", "get_order", order_id="A-1182"),
          result("c1", {"order_id": "A-1182", "total": 49.99, "status": "delivered"})]
REFUND: list[Event] = [call("c2", "refund", order_id="A-1182", amount=49.99),
          result("c2", {"refund_id": "R-1", "status": "issued"})]


# --- trajectory rules ---------------------------------------------------------------


def test_no_tool_called() -> None:
    spec = {"grader": "no_tool_called", "tool": "cancel_order"}
    ok = grade(spec, run(user("hi"), *LOOKUP, assistant("done")))
    assert ok.outcome is Outcome.PASS
    bad = grade(spec, run(user("hi"), *LOOKUP, call("c3", "cancel_order", order_id="B-2207")))
    assert bad.outcome is Outcome.FAIL
    assert bad.evidence[0].at == "trajectory[3]"
    assert "B-2207" in bad.evidence[0].detail


def test_tool_called_with_an_argument_subset() -> None:
    spec = {"grader": "tool_called", "tool": "refund", "args": {"order_id": "A-1182"}}
    assert grade(spec, run(*LOOKUP, *REFUND)).outcome is Outcome.PASS
    wrong = run(*LOOKUP, call("c2", "refund", order_id="A-1181", amount=49.99))
    finding = grade(spec, wrong)
    assert finding.outcome is Outcome.FAIL
    assert "A-1181" in finding.evidence[0].detail
    assert grade(spec, run(*LOOKUP)).outcome is Outcome.FAIL


def test_tool_called_subset_is_typed() -> None:
    # True == 1 in Python, but an argument of 1 is not the flag true.
    spec = {"grader": "tool_called", "tool": "refund", "args": {"notify": True}}
    assert grade(spec, run(call("c1", "refund", notify=1))).outcome is Outcome.FAIL
    assert grade(spec, run(call("c1", "refund", notify=True))).outcome is Outcome.PASS


def test_tool_order_fails_a_refund_without_a_lookup() -> None:
    spec = {"grader": "tool_order", "before": "get_order", "after": "refund"}
    assert grade(spec, run(*LOOKUP, *REFUND)).outcome is Outcome.PASS
    finding = grade(spec, run(*REFUND, *LOOKUP))
    assert finding.outcome is Outcome.FAIL
    assert finding.evidence[0].at == "trajectory[0]"
    # Nothing to order when the refund never happened.
    assert grade(spec, run(*LOOKUP)).outcome is Outcome.PASS


def test_tool_order_checks_every_later_call() -> None:
    spec = {"grader": "tool_order", "before": "get_order", "after": "refund"}
    assert grade(spec, run(*LOOKUP, *REFUND, call("c3", "refund"))).outcome is Outcome.PASS


def test_max_steps_counts_tool_calls_and_assistant_messages() -> None:
    spec = {"grader": "max_steps", "value": 3}
    at_budget = run(user("hi"), *LOOKUP, *REFUND, assistant("done"))  # 2 calls + 1 reply
    assert grade(spec, at_budget).outcome is Outcome.PASS
    over = run(user("hi"), *LOOKUP, assistant("checking"), *REFUND, assistant("done"))
    finding = grade(spec, over)
    assert finding.outcome is Outcome.FAIL
    assert finding.evidence[0].detail.startswith("4 steps")


# --- state checks -------------------------------------------------------------------

REFUNDED = {"refunds": [{"order_id": "A-1182", "amount": 49.99}]}
REFUND_ROW = {"grader": "state_includes", "path": "refunds",
              "match": {"order_id": "A-1182", "amount": 49.99}}


def test_state_includes_one_matching_row() -> None:
    assert grade(REFUND_ROW, run(final=REFUNDED)).outcome is Outcome.PASS
    wrong = {"refunds": [{"order_id": "A-1181", "amount": 49.99}]}
    assert grade(REFUND_ROW, run(final=wrong)).outcome is Outcome.FAIL


def test_a_claimed_refund_with_no_refund_row_fails() -> None:
    x = run(user("refund please"), *LOOKUP, assistant("Your refund has been processed."),
            final={"refunds": []})
    finding = grade(REFUND_ROW, x)
    assert finding.outcome is Outcome.FAIL
    assert finding.evidence[0].at == "final_state.refunds"
    assert "0 of 0 rows" in finding.evidence[0].detail


def test_state_includes_counts_exactly() -> None:
    twice = {"refunds": [{"order_id": "A-1182", "amount": 49.99}] * 2}
    assert grade(REFUND_ROW, run(final=twice)).outcome is Outcome.FAIL
    assert grade({**REFUND_ROW, "count": 2}, run(final=twice)).outcome is Outcome.PASS
    assert grade({**REFUND_ROW, "count": 0}, run(final={})).outcome is Outcome.PASS


def test_state_includes_on_a_nested_path_and_a_non_list() -> None:
    spec = {"grader": "state_includes", "path": "billing.refunds", "match": {"order_id": "A"}}
    assert grade(spec, run(final={"billing": {"refunds": [{"order_id": "A"}]}})).outcome \
        is Outcome.PASS
    finding = grade(spec, run(final={"billing": {"refunds": "A"}}))
    assert finding.outcome is Outcome.FAIL
    assert "not a list" in finding.evidence[0].detail


def test_state_unchanged_outside_the_allowed_paths() -> None:
    initial = {"orders": {"B-2207": {"status": "processing"}}, "refunds": []}
    refunded = {**initial, "refunds": [{"order_id": "A-1182"}]}
    spec = {"grader": "state_unchanged", "except": ["refunds"]}
    assert grade(spec, run(initial=initial, final=refunded)).outcome is Outcome.PASS
    cancelled = {**refunded, "orders": {"B-2207": {"status": "cancelled"}}}
    finding = grade(spec, run(initial=initial, final=cancelled))
    assert finding.outcome is Outcome.FAIL
    assert finding.evidence[0].at == "final_state.orders.B-2207.status"
    assert "'processing' -> 'cancelled'" in finding.evidence[0].detail
    # Without the exception, the refund itself is a change.
    strict = grade({"grader": "state_unchanged"}, run(initial=initial, final=refunded))
    assert strict.outcome is Outcome.FAIL
    assert strict.evidence[0].at == "final_state.refunds.0"


@pytest.mark.parametrize("spec", [{"grader": "state_unchanged"}, REFUND_ROW])
def test_state_checks_on_a_run_that_records_no_state_are_unscored(
        spec: Mapping[str, object]) -> None:
    # An imported run with no state: empty states would pass state_unchanged and fail
    # state_includes ("0 of 0 rows"), each claiming what nobody recorded.
    finding = grade(spec, replace(run(), state_recorded=False))
    assert finding.outcome is Outcome.UNSCORED
    assert finding.reason.startswith("the run records no state")
    assert [(e.at, e.detail) for e in finding.evidence] == [("final_state", "absent")]
    # The same empty states, recorded as empty, are graded.
    assert grade(spec, run()).outcome is not Outcome.UNSCORED


def test_state_unchanged_excepts_a_path_not_its_namesakes() -> None:
    # "refunds_audit" starts with "refunds" but is not under it.
    spec = {"grader": "state_unchanged", "except": ["refunds"]}
    x = run(initial={"refunds": [], "refunds_audit": []},
            final={"refunds": [1], "refunds_audit": [1]})
    finding = grade(spec, x)
    assert finding.outcome is Outcome.FAIL
    assert finding.evidence[0].at == "final_state.refunds_audit.0"


def test_state_unchanged_sees_a_bool_replacing_a_number() -> None:
    finding = grade({"grader": "state_unchanged"}, run(initial={"flag": 1}, final={"flag": True}))
    assert finding.outcome is Outcome.FAIL


# --- answer checks ------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "answer", "expected"), [
    ({"text": "REFUNDED"}, "I've refunded $49.99.", Outcome.PASS),
    ({"text": "refunded"}, "I can't help with that.", Outcome.FAIL),
    ({"pattern": r"R-\d+"}, "Refund R-5521 is on its way.", Outcome.PASS),
    ({"pattern": r"R-\d+"}, "Refund is on its way.", Outcome.FAIL),
    ({"numbers": [49.99]}, "You'll get $49.99 back.", Outcome.PASS),
    ({"numbers": [49.99, 1234]}, "$49.99 of your $1,234.00 order", Outcome.PASS),
    # "149.99" contains "49.99" as a string, but it is another figure.
    ({"numbers": [49.99]}, "You'll get $149.99 back.", Outcome.FAIL),
])
def test_answer_contains(spec: dict[str, object], answer: str, expected: Outcome) -> None:
    x = run(user("refund please"), assistant(answer))
    assert grade({"grader": "answer_contains", **spec}, x).outcome is expected


def test_answer_contains_reads_the_trajectory_not_the_case_file() -> None:
    x = run(user("refund please"), assistant("Sorry, no."),
            criteria={"answer": "I've refunded $49.99."})
    assert grade({"grader": "answer_contains", "text": "refunded"}, x).outcome is Outcome.FAIL


def test_no_answer_after_a_timeout_is_unscored() -> None:
    x = run(user("refund please"), *LOOKUP, Timeout("60 s"))
    for spec in ({"grader": "answer_contains", "text": "refund"}, {"grader": "grounded_numbers"}):
        finding = grade(spec, x)
        assert finding.outcome is Outcome.UNSCORED
        assert finding.reason == "no answer in the trace"


@pytest.mark.parametrize(("answer", "expected", "ungrounded"), [
    ("I've refunded $49.99 for order A-1182.", Outcome.PASS, ""),
    ("That's about $50 back to you.", Outcome.PASS, ""),  # rounding to the precision shown
    ("I've refunded $54.99 including shipping.", Outcome.FAIL, "54.99"),
    ("Refunded $49.9.", Outcome.FAIL, "49.9"),  # 49.99 rounds to 50.0, not 49.9
    ("Your 3 mugs arrive within 5 days, as promised in 2024.", Outcome.PASS, ""),
    ("Your order total was $1,234.00.", Outcome.FAIL, "1,234.00"),
    ("A credit of 49.99 and a voucher of 15.", Outcome.FAIL, "15"),
    ("A credit of 49.99 and 12 vouchers.", Outcome.PASS, ""),  # 12 is a count
    ("A credit of 49.99 and 13 vouchers.", Outcome.FAIL, "13"),  # 13 is past the counts
])
def test_grounded_numbers(answer: str, expected: Outcome, ungrounded: str) -> None:
    x = run(user("My order A-1182 arrived broken."), *LOOKUP, assistant(answer))
    finding = grade({"grader": "grounded_numbers"}, x)
    assert finding.outcome is expected
    if ungrounded:
        assert finding.evidence[0].detail == f"ungrounded figures: {ungrounded}"


def test_grounded_numbers_accepts_figures_the_user_gave_and_separators() -> None:
    x = run(user("I paid 1234.5 for it"), call("c1", "get_order"),
            result("c1", "total: 2,000.00"), assistant("You paid $1,234.50 of a $2,000 limit."))
    assert grade({"grader": "grounded_numbers"}, x).outcome is Outcome.PASS


def test_check_names_label_the_finding() -> None:
    spec = {"grader": "no_tool_called", "tool": "cancel_order", "name": "no_cancel"}
    assert grade(spec, run()).grader == "no_cancel"
    assert grade({"grader": "no_tool_called", "tool": "x"}, run()).grader == "no_tool_called"


def test_answer_states_the_expected_facts() -> None:
    spec = {"grader": "answer_states", "facts": ["order_id", "expected_refund"]}
    facts = {"order_id": "A-1182", "expected_refund": 49.99}
    ok = run(user("refund"), assistant("I've refunded $49.99 for order a-1182."), criteria=facts)
    assert grade(spec, ok).outcome is Outcome.PASS
    wrong = run(user("refund"), assistant("I've refunded $49.99 for order A-1181."),
                criteria=facts)
    finding = grade(spec, wrong)
    assert finding.outcome is Outcome.FAIL
    assert finding.evidence[0].detail == "answer does not state order_id='A-1182'"
    # "149.99" holds the characters of 49.99 but is another figure.
    assert grade(spec, run(assistant("Refunded $149.99 for A-1182."), criteria=facts)).outcome \
        is Outcome.FAIL


def test_answer_states_grades_the_trajectory_not_the_case_files_answer() -> None:
    # The classic defect reads the case file's copy of the answer, which always agrees.
    spec = {"grader": "answer_states", "facts": ["order_id"]}
    x = run(user("refund"), assistant("Sorry, I can't help."),
            criteria={"order_id": "A-1182", "answer": "Refunded order A-1182."})
    assert grade(spec, x).outcome is Outcome.FAIL
    silent = run(user("refund"), Timeout("60 s"), criteria={"order_id": "A-1182"})
    assert grade(spec, silent).reason == "no answer in the trace"


def test_answer_states_is_unscored_for_a_fact_it_cannot_look_for() -> None:
    spec = {"grader": "answer_states", "facts": ["refund_allowed"]}
    finding = grade(spec, run(assistant("No refund."), criteria={"refund_allowed": False}))
    assert finding.outcome is Outcome.UNSCORED
    assert "task.criteria.refund_allowed is False" in finding.reason


# A pattern is data: one that backtracks without end must not hang a run.
ANSWER_OF_AS = "a" * 40 + "b"


def test_a_pattern_that_backtracks_badly_in_re_is_decided_at_once() -> None:
    # Python's re takes 2^40 steps here; the engine used decides it at once.
    start = time.perf_counter()
    finding = grade({"grader": "answer_contains", "pattern": "^(a+)+$"},
                    run(user("hi"), assistant(ANSWER_OF_AS)))
    assert time.perf_counter() - start < 0.5
    assert finding.outcome is Outcome.FAIL
    assert finding.evidence[0].detail == "answer does not match '^(a+)+$'"


class _OutOfTime:
    """A compiled pattern that runs out of time at once, noting the limit it got."""

    def __init__(self) -> None:
        self.timeouts: list[float] = []

    def search(self, answer: str, timeout: float) -> None:
        self.timeouts.append(timeout)
        raise TimeoutError


def test_a_pattern_gets_a_quarter_second_of_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    # The limit itself, seen without spending it: the slow tests below show what
    # it does, and a mutated limit must not fail them only by taking longer.
    from metaeval.graders import answer_checks

    pattern = _OutOfTime()
    monkeypatch.setattr(answer_checks, "_compiled", lambda source: pattern)
    finding = grade({"grader": "answer_contains", "pattern": "x+"},
                    run(user("hi"), assistant("xx")))
    assert pattern.timeouts == [0.25]
    assert finding.outcome is Outcome.UNSCORED
    assert "took more than 0.25 s of CPU" in finding.reason


@pytest.mark.parametrize("pattern", ["(a|aa)+$", "(aa|a)+c"])
def test_a_pattern_past_its_time_limit_is_unscored_with_the_reason(pattern: str) -> None:
    start = time.perf_counter()
    finding = grade({"grader": "answer_contains", "pattern": pattern},
                    run(user("hi"), assistant(ANSWER_OF_AS)))
    assert time.perf_counter() - start < 5  # 0.25 s of CPU; the machine may be busy
    assert finding.outcome is Outcome.UNSCORED
    assert finding.reason == (f"pattern {pattern!r} took more than 0.25 s of CPU on the "
                              "answer (41 characters); unscored")
    # The same pattern on an answer it settles quickly is scored as usual.
    assert grade({"grader": "answer_contains", "pattern": pattern},
                 run(user("hi"), assistant("aaaa"))).outcome is (
        Outcome.PASS if pattern.endswith("$") else Outcome.FAIL)
