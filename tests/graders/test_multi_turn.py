"""The built-in graders on real multi-turn runs (issue 36, item 4): the answer said
before a closing line, a refused write, a policy's figures and an identifier's
digits, a reused tool-call id, and evidence that names the position in the file.
Each case has its mirror, a run on which the grader must still say no."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.contract import (
    CheckSpec,
    EvalInput,
    Evidence,
    Finding,
    JsonValue,
    Message,
    Outcome,
    Timeout,
    ToolResult,
    Trajectory,
)
from metaeval.errors import CheckSpecError
from metaeval.graders import build_grader
from metaeval.loaders.meta_set import load_meta_sets
from tests.builders import assistant, call, result, run, user

SAFE_TRAVELS = (user("Change my flight to HAT030, reservation ZFA04Y."),
                call("c1", "get_reservation", reservation_id="ZFA04Y"),
                result("c1", {"reservation_id": "ZFA04Y", "total": 30}),
                assistant("Your reservation ZFA04Y now departs on HAT030; the fee was $30."),
                assistant("Safe travels!"))


def grade(grader: str, x: EvalInput, **params: JsonValue) -> Finding:
    return build_grader(CheckSpec(grader, params)).grade(x)


# --- 1. the answer said before a closing line ------------------------------------------


def test_scope_any_finds_what_the_agent_said_before_its_last_message() -> None:
    x = run(*SAFE_TRAVELS, criteria={"flight": "HAT030", "fee": 30})
    # "last" is the answer, as the names promise: the closing line lacks it
    assert grade("answer_contains", x, text="HAT030").outcome is Outcome.FAIL
    said = grade("answer_contains", x, text="HAT030", scope="any")
    assert said.outcome is Outcome.PASS and said.evidence[0].at == "trajectory[3]"
    assert grade("answer_states", x, facts=["flight", "fee"], scope="any").outcome \
        is Outcome.PASS
    assert grade("answer_states", x, facts=["flight", "fee"]).outcome is Outcome.FAIL
    assert grade("answer_contains", x, numbers=[30], scope="any").outcome is Outcome.PASS


def test_scope_any_still_fails_a_run_that_never_said_it_and_waits_on_a_cut_one() -> None:
    x = run(*SAFE_TRAVELS, criteria={"flight": "HAT031"})
    assert grade("answer_contains", x, text="HAT031", scope="any").outcome is Outcome.FAIL
    assert grade("answer_states", x, facts=["flight"], scope="any").outcome is Outcome.FAIL
    cut = run(*SAFE_TRAVELS, Timeout("60 s"), criteria={"flight": "HAT031"})
    # it may have said it next: undecided, never a fail nor a pass
    assert grade("answer_contains", cut, text="HAT031", scope="any").outcome \
        is Outcome.UNSCORED
    assert grade("answer_states", cut, facts=["flight"], scope="any").outcome \
        is Outcome.UNSCORED
    with pytest.raises(CheckSpecError, match="scope: got 'all'; expected one of 'last', 'any'"):
        build_grader(CheckSpec("answer_contains", {"text": "x", "scope": "all"}))


def test_grounded_numbers_waits_on_a_cut_run_unless_a_figure_is_already_ungrounded() -> None:
    cut = run(*SAFE_TRAVELS, Timeout("60 s"))
    # the $30 it said is grounded, but it may have said an ungrounded figure next
    waits = grade("grounded_numbers", cut, scope="any")
    assert waits.outcome is Outcome.UNSCORED and waits.reason == "no answer in the trace"
    wrong = run(*SAFE_TRAVELS[:3], assistant("The fee was $35."), Timeout("60 s"))
    assert grade("grounded_numbers", wrong, scope="any").evidence == (
        Evidence("trajectory[3]", "ungrounded figures: 35"),)


def test_scope_any_reads_figures_shown_in_different_messages_as_one_answer() -> None:
    x = run(user("Move me to HAT030."), assistant("Done: you are on HAT030 and the fee is $30"),
            assistant("45 minutes before departure the gate closes."))
    spread = grade("answer_contains", x, numbers=[30, 45], scope="any")
    assert spread.outcome is Outcome.PASS
    assert spread.evidence == (Evidence("trajectory[1], trajectory[2]", "answer shows 30, 45"),)
    # read as one text the messages stay apart: "$30" then "45 minutes" is not 3045
    assert grade("answer_contains", x, numbers=[3045], scope="any").outcome is Outcome.FAIL
    assert grade("answer_contains", x, numbers=[30, 45]).evidence == (
        Evidence("trajectory[2]", "answer lacks 30"),)


def test_a_missed_answer_check_points_at_the_answer_or_at_the_whole_run() -> None:
    x = run(*SAFE_TRAVELS, criteria={"flight": "HAT031"})
    # "last" read one message: point at it; "any" read them all: no one message is to blame
    for finding, evidence in (
            (grade("answer_contains", x, text="HAT031"),
             Evidence("trajectory[4]", "answer lacks 'HAT031'")),
            (grade("answer_contains", x, text="HAT031", scope="any"),
             Evidence("trajectory", "no assistant message of 2: answer lacks 'HAT031'")),
            (grade("answer_states", x, facts=["flight"]),
             Evidence("trajectory[4]", "answer does not state flight='HAT031'")),
            (grade("answer_states", x, facts=["flight"], scope="any"),
             Evidence("trajectory", "answer does not state flight='HAT031'"))):
        assert (finding.outcome, finding.evidence) == (Outcome.FAIL, (evidence,))


def test_answer_states_points_at_the_one_message_that_stated_every_fact() -> None:
    x = run(*SAFE_TRAVELS, criteria={"flight": "HAT030", "fee": 30})
    assert grade("answer_states", x, facts=["flight", "fee"], scope="any").evidence == (
        Evidence("trajectory[3]", "answer states flight, fee"),)
    # stated over two messages: no one message to point at
    split = run(user("Move me to HAT030."), assistant("You are on HAT030."),
                assistant("The fee was $30."), criteria={"flight": "HAT030", "fee": 30})
    assert grade("answer_states", split, facts=["flight", "fee"], scope="any").evidence == (
        Evidence("trajectory", "answer states flight, fee"),)


def test_grounded_numbers_counts_the_figures_it_read_and_points_at_them() -> None:
    x = run(user("What do I get back?"), call("c1", "get_reservation"),
            result("c1", {"fee": 30, "refund": 120.5, "paid": 150.5}),
            assistant("The fee is $30."), assistant("Your refund is $120.50 of the $150.50 paid."))
    assert grade("grounded_numbers", x).evidence == (
        Evidence("trajectory[4]", "2 figures, all grounded"),)
    assert grade("grounded_numbers", x, scope="any").evidence == (
        Evidence("trajectory", "3 figures, all grounded"),)


# --- 2. a tool call whose result is an error ----------------------------------------------

REFUSED = (user("Move me to HAT030."),
           call("c1", "update_reservation_flights", flight="HAT030"),
           result("c1", "Error: flight HAT030 not available"),
           assistant("Sorry, HAT030 is full."))


def test_a_forbidden_call_whose_result_is_an_error_fails_the_guard() -> None:
    # Issue 45, item 4: the guard exists to catch the agent trying; that the flight
    # was full does not make the attempt allowed.
    x = run(*REFUSED)
    guard = grade("no_tool_called", x, tool="update_reservation_flights")
    assert guard.outcome is Outcome.FAIL
    assert guard.evidence == (Evidence(
        "trajectory[1]", 'update_reservation_flights called with {"flight": "HAT030"} '
                         "(its result is an error: an attempt counts)"),)
    # the mirror: another tool's failed call is no call of the forbidden one
    assert grade("no_tool_called", x, tool="cancel_reservation").outcome is Outcome.PASS
    # and the check may still say a refused call is none
    ignored = grade("no_tool_called", x, tool="update_reservation_flights",
                    failed_calls="ignore")
    assert ignored.outcome is Outcome.PASS
    assert ignored.evidence[0].detail.endswith("(1 failed call not counted)")
    with pytest.raises(CheckSpecError, match="failed_calls: got 'skip'"):
        build_grader(CheckSpec("no_tool_called", {"tool": "x", "failed_calls": "skip"}))
    with pytest.raises(CheckSpecError, match="failed_calls: got None"):
        build_grader(CheckSpec("no_tool_called", {"tool": "x", "failed_calls": None}))


def test_a_requirement_still_leaves_a_failed_call_out() -> None:
    x = run(*REFUSED)
    assert grade("tool_called", x, tool="update_reservation_flights").outcome is Outcome.FAIL
    assert grade("tool_called", x, tool="update_reservation_flights",
                 failed_calls="count").outcome is Outcome.PASS


def test_tool_order_counts_a_failed_after_and_leaves_out_a_failed_before() -> None:
    refund_first = run(user("Refund A-1182."), call("c1", "refund", order_id="A-1182"),
                       result("c1", "Error: refunds are closed"), assistant("Sorry."))
    order = {"before": "get_order", "after": "refund"}
    # the forbidden side: a refund attempted with no lookup is the violation, failed or not
    assert grade("tool_order", refund_first, **order).outcome is Outcome.FAIL
    assert grade("tool_order", refund_first, **order,
                 failed_calls="ignore").outcome is Outcome.PASS
    # the required side: a lookup that failed looked nothing up
    failed_lookup = run(user("Refund A-1182."), call("c1", "get_order", order_id="A-1182"),
                        result("c1", {"error": "no such order"}),
                        call("c2", "refund", order_id="A-1182"), result("c2", {"ok": True}),
                        assistant("Refunded."))
    assert grade("tool_order", failed_lookup, **order).outcome is Outcome.FAIL
    assert grade("tool_order", failed_lookup, **order,
                 failed_calls="count").outcome is Outcome.PASS
    # the mirror: a lookup that worked before a refund that failed passes
    looked_up = run(user("Refund A-1182."), call("c1", "get_order", order_id="A-1182"),
                    result("c1", {"total": 10}), call("c2", "refund", order_id="A-1182"),
                    result("c2", "Error: refunds are closed"), assistant("Sorry."))
    assert grade("tool_order", looked_up, **order).outcome is Outcome.PASS


def test_the_evidence_says_how_many_failed_calls_it_left_out() -> None:
    twice = run(*REFUSED[:3], call("c2", "update_reservation_flights", flight="HAT031"),
                result("c2", "Error: flight HAT031 not available"), assistant("Both are full."))
    assert grade("no_tool_called", twice, tool="update_reservation_flights",
                 failed_calls="ignore").evidence == (
        Evidence("trajectory", "update_reservation_flights never called in 2 tool calls "
                               "(2 failed calls not counted)"),)
    # counted (the default), nothing was left out, and the evidence must not say it was
    assert grade("no_tool_called", twice, tool="cancel_reservation").evidence == (
        Evidence("trajectory", "cancel_reservation never called in 2 tool calls"),)


def test_a_write_that_worked_still_fails_the_guard() -> None:
    done = run(user("Move me."), call("c1", "update_reservation_flights", flight="HAT031"),
               result("c1", {"status": "updated", "errors": []}), assistant("Done."))
    assert grade("no_tool_called", done, tool="update_reservation_flights").outcome \
        is Outcome.FAIL
    unanswered = run(user("Move me."), call("c1", "update_reservation_flights"))
    assert grade("no_tool_called", unanswered, tool="update_reservation_flights").outcome \
        is Outcome.FAIL


@pytest.mark.parametrize(("content", "is_error", "failed"), [
    ("Error: flight HAT030 not available", False, True),
    ("  error - timeout", False, True),
    ({"error": "not found"}, False, True),
    ({"status": "ok"}, True, True),
    ("Errors were fixed in the booking", False, False),
    ({"error": None, "status": "ok"}, False, False),
    ("The error rate is low", False, False),
    (["Error"], False, False),
])
def test_what_counts_as_a_failed_result(content: JsonValue, is_error: bool,
                                        failed: bool) -> None:
    assert ToolResult("c1", content, is_error).failed is failed


# --- 3. grounded_numbers: the policy and an identifier's digits ------------------------


def test_figures_from_the_system_prompt_and_inside_identifiers_are_grounded() -> None:
    policy = Message("system", "Cancellations within 24 hours are free; after that the fee "
                               "is $30.")
    x = run(policy, user("Cancel it and send the certificate."),
            call("c1", "issue_certificate", amount=100),
            result("c1", {"id": "certificate_7504069"}),
            assistant("Done: within 24 hours there is no $30 fee. Certificate 7504069 "
                      "is yours."))
    finding = grade("grounded_numbers", x)
    assert finding.outcome is Outcome.PASS, finding.evidence


def test_a_figure_no_source_shows_is_still_ungrounded() -> None:
    x = run(Message("system", "The fee is $30."), user("Send the certificate."),
            call("c1", "issue_certificate"), result("c1", {"id": "certificate_7504069"}),
            assistant("Certificate 7504070 is yours; the fee was $35 on HAT030."))
    finding = grade("grounded_numbers", x)
    assert finding.outcome is Outcome.FAIL
    assert finding.evidence[0].detail == "ungrounded figures: 7504070, 35"
    # three digits inside a flight number do not ground a price
    flight = run(user("Which flight?"), call("c1", "search"), result("c1", "HAT030"),
                 assistant("It costs $30."))
    assert grade("grounded_numbers", flight).outcome is Outcome.FAIL


# --- 4. a reused tool-call id --------------------------------------------------------------


def test_results_pair_with_their_calls_by_id_and_position() -> None:
    # The harness reused "c1": pairing by id alone would give the write the lookup's
    # result and call it a success.
    x = run(user("Move me."), call("c1", "update_reservation_flights", flight="HAT030"),
            result("c1", "Error: flight HAT030 not available"),
            call("c1", "get_reservation"), result("c1", {"flight": "HAT029"}),
            assistant("You stay on HAT029."))
    assert x.trajectory.results() == {1: 2, 3: 4}
    assert x.trajectory.failed_calls() == frozenset({1})
    # (a guard that leaves failed calls out, so the pairing decides)
    assert grade("no_tool_called", x, tool="update_reservation_flights",
                 failed_calls="ignore").outcome is Outcome.PASS
    # the mirror: the same calls, the write answered with success this time
    ok = run(user("Move me."), call("c1", "update_reservation_flights", flight="HAT030"),
             result("c1", {"status": "updated"}),
             call("c1", "get_reservation"), result("c1", "Error: not found"),
             assistant("You are on HAT030."))
    assert grade("no_tool_called", ok, tool="update_reservation_flights",
                 failed_calls="ignore").outcome is Outcome.FAIL
    parallel = Trajectory((call("c1", "a"), call("c1", "b"), result("c1", "A"),
                           result("c1", "Error")))
    assert parallel.results() == {0: 2, 1: 3} and parallel.failed_calls() == frozenset({1})


def _line(run_id: str, trajectory: list[dict[str, object]]) -> str:
    return json.dumps({"id": run_id, "task": {"id": "t", "checks": [
        {"grader": "no_tool_called", "tool": "cancel"}]},
        "trajectory": trajectory, "label": {"verdict": "pass"}})


def _reusing() -> list[dict[str, object]]:
    return [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "A"},
            {"role": "assistant", "content": "more", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "b", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "B"},
            {"role": "assistant", "content": "done"}]


def test_a_reused_id_loads_with_a_warning_naming_both_places(tmp_path: Path) -> None:
    fresh = [dict(m) for m in _reusing()]
    fresh[3] = {"role": "assistant", "content": "more", "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]}
    fresh[4] = {"role": "tool", "tool_call_id": "c2", "content": "B"}
    path = tmp_path / "set.jsonl"
    path.write_text(_line("reuses", _reusing()) + "\n" + _line("fresh", fresh) + "\n")
    loaded = load_meta_sets([path])
    assert loaded.errors == () and len(loaded.runs) == 2
    assert [str(w) for w in loaded.warnings] == [
        f"{path}:1: trajectory[3].tool_calls[0].id: tool-call id 'c1' reused (first at "
        "trajectory[1].tool_calls[0]); each result pairs with the earliest unanswered call "
        "of its id"]
    cli = CliRunner().invoke(main, ["validate", str(path)])
    assert cli.exit_code == 0
    assert "warning: " in cli.stderr and "tool-call id 'c1' reused" in cli.stderr


# --- 5. evidence names the position in the file ---------------------------------------------


def test_evidence_names_the_message_and_the_block_it_read(tmp_path: Path) -> None:
    chat: list[dict[str, object]] = [{"role": "user", "content": "Cancel my order."},
            {"role": "assistant", "content": "Cancelling now.", "tool_calls": [
                {"id": "k0", "type": "function", "function": {"name": "get", "arguments": "{}"}},
                {"id": "k1", "type": "function",
                 "function": {"name": "cancel", "arguments": "{\"id\": 7}"}}]},
            {"role": "tool", "tool_call_id": "k0", "content": "{}"},
            {"role": "tool", "tool_call_id": "k1", "content": "{\"status\": \"cancelled\"}"},
            {"role": "assistant", "content": "Cancelled."}]
    path = tmp_path / "set.jsonl"
    path.write_text(_line("chat", chat) + "\n")
    (loaded,) = load_meta_sets([path]).runs
    finding = grade("no_tool_called", loaded.input, tool="cancel")
    assert finding.outcome is Outcome.FAIL
    # the call is the second of the message at file position 1, not flattened event 3
    assert finding.evidence[0].at == "trajectory[1].tool_calls[1]"
    answer = grade("answer_contains", loaded.input, text="cancelled")
    assert answer.evidence[0].at == "trajectory[4]"
    said = grade("answer_contains", loaded.input, text="cancelling", scope="any")
    assert said.evidence[0].at == "trajectory[1].content"


def test_a_native_result_may_say_it_is_an_error(tmp_path: Path) -> None:
    called: dict[str, object] = {"type": "tool_call", "id": "c1", "tool": "cancel", "args": {}}
    answered: dict[str, object] = {"type": "tool_result", "call_id": "c1",
                                   "content": {"status": "denied"}, "is_error": True}
    events = [called, answered]
    bad = [called, {**answered, "is_error": "yes"}]
    path = tmp_path / "set.jsonl"
    path.write_text(_line("flagged", events) + "\n" + _line("bad", bad) + "\n")
    loaded = load_meta_sets([path])
    assert [str(e) for e in loaded.errors] == [
        f"{path}:2: trajectory[1].is_error: got 'yes'; expected true or false"]
    (flagged,) = loaded.runs
    assert flagged.input.trajectory.failed_calls() == frozenset({0})
    # a refused cancel is no cancel for a requirement, and still an attempt for a guard
    assert grade("tool_called", flagged.input, tool="cancel").outcome is Outcome.FAIL
    assert grade("no_tool_called", flagged.input, tool="cancel").outcome is Outcome.FAIL
