"""Patch mutants for the grading contract: the rules that turn findings into a verdict.

Each one switches off one rule DESIGN.md calls not negotiable; the tests under
tests/ must notice every one (`metaeval mutate` runs them all).
"""

from __future__ import annotations

from collections.abc import Sequence

from metaeval.contract import (
    EvalInput,
    Finding,
    Grader,
    Kind,
    Message,
    Outcome,
    Trajectory,
    Verdict,
    evaluator_version,
)
from metaeval.mutation.patches import patch_mutant


@patch_mutant("unscored-counts-as-pass", target="metaeval.contract:Finding.effective_outcome",
              breaks="An unscored finding (no answer, unparseable reply) counts as a pass.")
def unscored_is_pass(self: Finding) -> Outcome:
    if self.outcome is Outcome.UNSCORED or (self.kind is Kind.SCORE and self.score is None):
        return Outcome.PASS
    if self.kind is Kind.SCORE and self.threshold is not None and self.score is not None \
            and self.score < self.threshold:
        return Outcome.FAIL
    return self.outcome


@patch_mutant("score-threshold-ignored", target="metaeval.contract:Finding.effective_outcome",
              breaks="A score below its threshold no longer fails the run.")
def threshold_ignored(self: Finding) -> Outcome:
    if self.kind is Kind.SCORE and self.score is None:
        return Outcome.UNSCORED
    return self.outcome


@patch_mutant("gate-and-becomes-average", target="metaeval.contract:evaluate",
              breaks="Gates are averaged: a failed gate is outvoted by the passing ones.")
def evaluate_by_average(x: EvalInput, graders: Sequence[Grader]) -> Verdict:
    findings = tuple(g.grade(x) for g in sorted(graders, key=lambda g: g.cost_rank))
    passing = sum(1 for f in findings if f.effective_outcome() is Outcome.PASS)
    outcome = Outcome.PASS if findings and passing * 2 >= len(findings) else Outcome.FAIL
    return Verdict(x.task_id, evaluator_version(graders), outcome, findings)


@patch_mutant("no-graders-is-pass", target="metaeval.contract:evaluate",
              breaks="A run no grader looked at passes instead of being unscored.")
def evaluate_empty_passes(x: EvalInput, graders: Sequence[Grader]) -> Verdict:
    findings = tuple(g.grade(x) for g in sorted(graders, key=lambda g: g.cost_rank))
    outcomes = {f.effective_outcome() for f in findings}
    if Outcome.FAIL in outcomes:
        outcome = Outcome.FAIL
    elif outcomes <= {Outcome.PASS}:
        outcome = Outcome.PASS
    else:
        outcome = Outcome.UNSCORED
    return Verdict(x.task_id, evaluator_version(graders), outcome, findings)


@patch_mutant("answer-survives-a-timeout", target="metaeval.contract:Trajectory.answer_index",
              breaks="A run that timed out after its last reply is graded on that reply.")
def answer_despite_timeout(self: Trajectory) -> int | None:
    for i in range(len(self.events) - 1, -1, -1):
        event = self.events[i]
        if isinstance(event, Message) and event.role == "assistant":
            return i
    return None
