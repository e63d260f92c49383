from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from metaeval.contract import (
    Error,
    EvalInput,
    Finding,
    Kind,
    Outcome,
    Timeout,
    Trajectory,
    evaluate,
    evaluator_version,
)
from tests.builders import assistant, call, result, run, user


def test_answer_is_the_last_assistant_message() -> None:
    t = Trajectory((user("hi"), assistant("first"), call("c1", "get_order"),
                    result("c1", {}), assistant("second")))
    assert t.answer() == "second"
    assert t.answer_index() == 4


@pytest.mark.parametrize("stop", [Timeout("60 s"), Error("boom")])
def test_no_answer_when_the_run_ends_in_timeout_or_error_after_it(stop: Timeout | Error) -> None:
    t = Trajectory((user("hi"), assistant("working on it"), call("c1", "refund"), stop))
    assert t.answer() is None
    assert t.answer_index() is None


def test_an_answer_after_a_recovered_error_counts() -> None:
    t = Trajectory((user("hi"), Error("retrying"), assistant("done")))
    assert t.answer() == "done"


def test_no_answer_without_an_assistant_message() -> None:
    assert Trajectory((user("hi"), call("c1", "get_order"))).answer() is None
    assert Trajectory().answer() is None


def test_tool_calls_in_order() -> None:
    t = Trajectory((user("x"), call("c1", "get_order"), result("c1", 1), call("c2", "refund")))
    assert [c.tool for c in t.tool_calls()] == ["get_order", "refund"]


@dataclass
class Spy:
    """A grader that returns a fixed outcome and records that it ran."""

    name: str
    outcome: Outcome
    cost_rank: int = 10
    kind: Kind = Kind.GATE
    score: float | None = None
    threshold: float | None = None
    version: str = "spy/1"
    calls: list[str] = field(default_factory=list)

    def grade(self, x: EvalInput) -> Finding:
        self.calls.append(x.task_id)
        return Finding(self.name, self.version, self.kind, self.outcome, self.score,
                       self.threshold)


def test_graders_run_cheapest_first() -> None:
    judge = Spy("judge", Outcome.PASS, cost_rank=100)
    rule = Spy("rule", Outcome.PASS, cost_rank=10)
    verdict = evaluate(run(), [judge, rule])
    assert [f.grader for f in verdict.findings] == ["rule", "judge"]
    assert verdict.outcome is Outcome.PASS


def test_a_failed_gate_stops_the_run_before_the_judge() -> None:
    judge = Spy("judge", Outcome.PASS, cost_rank=100)
    gate = Spy("gate", Outcome.FAIL, cost_rank=10)
    verdict = evaluate(run(), [judge, gate])
    assert verdict.outcome is Outcome.FAIL
    assert judge.calls == []
    assert verdict.skipped == ("judge",)


def test_gates_are_an_and_never_averaged() -> None:
    # Three passes and a high score cannot outvote one failed gate.
    graders = [Spy("a", Outcome.PASS), Spy("b", Outcome.PASS), Spy("c", Outcome.PASS),
               Spy("s", Outcome.PASS, kind=Kind.SCORE, score=1.0, threshold=0.5),
               Spy("bad", Outcome.FAIL, cost_rank=40)]
    assert evaluate(run(), graders).outcome is Outcome.FAIL


def test_a_score_below_its_threshold_fails_whatever_its_outcome_says() -> None:
    low = Spy("s", Outcome.PASS, kind=Kind.SCORE, score=0.4, threshold=0.5)
    assert evaluate(run(), [low]).outcome is Outcome.FAIL
    at = Spy("s", Outcome.PASS, kind=Kind.SCORE, score=0.5, threshold=0.5)
    assert evaluate(run(), [at]).outcome is Outcome.PASS


def test_a_score_without_a_number_is_unscored() -> None:
    blank = Spy("s", Outcome.PASS, kind=Kind.SCORE, score=None, threshold=0.5)
    assert evaluate(run(), [blank]).outcome is Outcome.UNSCORED


def test_unscored_with_no_failure_is_unscored_never_pass() -> None:
    verdict = evaluate(run(), [Spy("a", Outcome.PASS), Spy("b", Outcome.UNSCORED)])
    assert verdict.outcome is Outcome.UNSCORED
    # ... but a failure still wins over unscored.
    failed = evaluate(run(), [Spy("b", Outcome.UNSCORED), Spy("c", Outcome.FAIL, cost_rank=20)])
    assert failed.outcome is Outcome.FAIL


def test_no_graders_is_unscored() -> None:
    assert evaluate(run(), []).outcome is Outcome.UNSCORED


def test_evaluator_version_follows_the_graders() -> None:
    a, b = Spy("a", Outcome.PASS), Spy("b", Outcome.PASS)
    assert evaluator_version([a, b]) == evaluator_version([b, a])
    assert evaluator_version([a, b]) != evaluator_version([a, Spy("b", Outcome.PASS,
                                                                  version="spy/2")])
