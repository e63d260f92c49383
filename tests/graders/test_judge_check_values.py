"""The judge-backed grader's details: what the judge is told, defaults, frozen values,
and a pairwise answer to a pointwise question. Written to kill mutants
`metaeval mutate` found surviving."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from metaeval.contract import EvalInput, Outcome, TaskSpec, Trajectory
from metaeval.graders.judge_check import JudgeGrader, context, judge
from metaeval.judges.base import DEFAULT_SCALE, Choice, JudgeIdentity, JudgeReply, Mode, Scale
from metaeval.judges.parse import pointwise_prompt
from tests.builders import assistant, call, result, run


def test_the_judge_is_told_the_instruction_and_sorted_arguments() -> None:
    x = run(call("c1", "refund", order_id="A-1182", amount=49.99), result("c1", {"ok": True}),
            assistant("done"))
    told = context(x)
    assert told.splitlines()[0] == "Refund order A-1182."
    assert 'refund({"amount": 49.99, "order_id": "A-1182"})' in told
    no_instruction = EvalInput(TaskSpec("t"), Trajectory((assistant("done"),)))
    assert context(no_instruction).splitlines()[0] == "(no instruction recorded)"


def test_a_judge_check_is_named_judge_unless_named() -> None:
    assert judge("steady", "the refund is right").name == "judge"
    assert judge("steady", "the refund is right", name="refund_ok").name == "refund_ok"


def test_the_judge_grader_is_frozen_and_slotted() -> None:
    grader = judge("steady", "the refund is right")
    with pytest.raises(dataclasses.FrozenInstanceError):
        grader.criterion = "anything"  # type: ignore[misc]
    assert not hasattr(grader, "__dict__")


@dataclass(frozen=True)
class AnswersPairwise:
    """A judge that answers "A" even when asked for a score."""

    @property
    def identity(self) -> JudgeIdentity:
        return JudgeIdentity("answers-pairwise")

    @property
    def scale(self) -> Scale:
        return DEFAULT_SCALE

    @property
    def modes(self) -> frozenset[Mode]:
        return frozenset(Mode)

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply:
        return JudgeReply(Choice.A, "A")

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply:
        return JudgeReply(Choice.A, "A")


def test_a_pairwise_answer_to_a_pointwise_question_is_unscored() -> None:
    finding = JudgeGrader(AnswersPairwise(), "the refund is right", "judge").grade(
        run(assistant("done")))
    assert finding.outcome is Outcome.UNSCORED
    assert finding.reason == "judge gave a pairwise answer 'A' to a pointwise question"


def test_the_criterion_line_appears_only_with_a_criterion() -> None:
    with_criterion = pointwise_prompt("task", "reply", None, "is polite", DEFAULT_SCALE)
    assert "\nCriterion: is polite\n" in with_criterion
    assert "Criterion:" not in pointwise_prompt("task", "reply", None, "", DEFAULT_SCALE)
