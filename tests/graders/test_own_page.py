"""docs/graders-own.md: its grader is the one kept in tests/fixtures/own_grader.py,
word for word, and that grader does what the page says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metaeval.audit.tautology import static_report
from metaeval.contract import Grader, Outcome
from metaeval.testing import Bars, assert_graders
from tests.builders import assistant, call, result, run, user
from tests.fixtures.own_grader import refund_matches_lookup

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "graders-own.md"
COPY = ROOT / "tests" / "fixtures" / "own_grader.py"
MODULE = "tests.fixtures.own_grader"


def test_the_page_shows_the_tested_grader_word_for_word() -> None:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)
    assert blocks and blocks[0] == COPY.read_text()


def test_the_page_grader_passes_fails_and_is_unscored_where_it_says() -> None:
    grader = refund_matches_lookup()
    assert isinstance(grader, Grader)
    good = run(user("Refund A-1182."), call("c1", "get_order", order_id="A-1182"),
               result("c1", {"total": 49.99}), call("c2", "refund", amount=49.99),
               result("c2", {"status": "issued"}), assistant("Refunded."))
    assert grader.grade(good).outcome is Outcome.PASS
    wrong = run(user("Refund A-1182."), call("c1", "get_order", order_id="A-1182"),
                result("c1", {"total": 49.99}), call("c2", "refund", amount=59.99),
                result("c2", {"status": "issued"}), assistant("Refunded."))
    failed = grader.grade(wrong)
    assert failed.outcome is Outcome.FAIL
    assert failed.evidence[0].at == "trajectory[3]"
    assert failed.evidence[0].detail == "refunded 59.99; the order total is 49.99"
    blind = run(user("Refund A-1182."), call("c2", "refund", amount=49.99),
                result("c2", {"status": "issued"}))
    undecided = grader.grade(blind)
    assert undecided.outcome is Outcome.UNSCORED
    assert undecided.reason == "nothing to compare the refund with"
    refused = run(user("Refund A-1182."), call("c1", "get_order"),
                  result("c1", {"total": 49.99}), call("c2", "refund", amount=59.99),
                  result("c2", "Error: refunds are closed"))
    assert grader.grade(refused).outcome is Outcome.PASS
    report = static_report(grader)
    assert report.flags == () and report.reads == ("trajectory",)


def _run(run_id: str, amount: float, verdict: str) -> str:
    return json.dumps({
        "id": run_id, "category": "near_miss/wrong_amount" if verdict == "fail" else "pass",
        "task": {"id": "refund", "checks": [{"grader": f"{MODULE}:refund_matches_lookup"}]},
        "trajectory": [
            {"type": "message", "role": "user", "content": "Refund A-1182."},
            {"type": "tool_call", "id": "c1", "tool": "get_order", "args": {}},
            {"type": "tool_result", "call_id": "c1", "content": {"total": 49.99}},
            {"type": "tool_call", "id": "c2", "tool": "refund", "args": {"amount": amount}},
            {"type": "tool_result", "call_id": "c2", "content": {"status": "issued"}},
            {"type": "message", "role": "assistant", "content": "Refunded."}],
        "label": {"verdict": verdict, "criteria": {"refund_matches_lookup": verdict}}})


def test_assert_graders_holds_the_page_grader_to_people(tmp_path: Path) -> None:
    meta_set = tmp_path / "refunds.jsonl"
    meta_set.write_text("\n".join([_run("ok-1", 49.99, "pass"), _run("ok-2", 49.99, "pass"),
                                   _run("wrong-1", 59.99, "fail"),
                                   _run("wrong-2", 4.99, "fail")]) + "\n")
    result = assert_graders(meta_set, allowed_modules=[MODULE], forbid={"UNTESTED"},
                            checks={"refund_matches_lookup": Bars(min_tpr=0.9, min_tnr=0.9)})
    assert [c.name for c in result.checks] == ["refund_matches_lookup"]
    # the mirror: with no near miss in the set, the same call says UNTESTED
    meta_set.write_text(_run("ok-1", 49.99, "pass") + "\n" + _run("ok-2", 49.99, "pass") + "\n")
    with pytest.raises(AssertionError, match="refund_matches_lookup: UNTESTED"):
        assert_graders(meta_set, allowed_modules=[MODULE], forbid={"UNTESTED"})
