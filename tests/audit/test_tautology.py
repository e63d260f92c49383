from __future__ import annotations

from dataclasses import replace

from metaeval.audit.ablation import Ablation, ablate
from metaeval.audit.grading import grade_runs
from metaeval.audit.tautology import (
    CASE_ONLY,
    SELF_COMPARISON,
    independence,
    sensitivity,
    static_flags,
    static_report,
)
from metaeval.contract import CheckSpec, EvalInput, Kind, Outcome, Trajectory
from metaeval.graders.base import RANK_USER, Judgement, RuleGrader, failed, passed
from metaeval.graders.registry import BUILTINS, build_grader
from metaeval.loaders.meta_set import MetaSet, load_meta_sets
from tests.audit.conftest import ALLOW_FIXTURES, CASE_ANSWER, UserMetaSet
from tests.fixtures import user_graders


def test_ablations_take_away_what_they_say(repo_meta_set: MetaSet) -> None:
    run = next(r for r in repo_meta_set.runs if r.id == "refund-plus-cancel-02")
    other = repo_meta_set.runs[0].input.trajectory
    x = run.input
    assert x.trajectory.answer() is not None
    no_answer = ablate(x, Ablation.NO_ANSWER, other)
    assert no_answer.trajectory.answer() is None
    assert no_answer.trajectory.tool_calls() == x.trajectory.tool_calls()
    assert ablate(x, Ablation.EMPTY_TRAJECTORY, other).trajectory == Trajectory()
    same = ablate(x, Ablation.FINAL_IS_INITIAL, other)
    assert same.final_state == x.initial_state != x.final_state
    assert ablate(x, Ablation.SWAPPED_TRAJECTORY, other).trajectory == other != x.trajectory


def test_the_case_file_grader_is_a_tautology_and_the_fixed_one_is_not(
        user_meta_set: UserMetaSet) -> None:
    loaded = load_meta_sets([user_meta_set("answer_from_case", "answer_resolves_task")],
                            ALLOW_FIXTURES)
    assert not loaded.errors
    checks = {c.name: c for c in grade_runs(loaded.runs, ALLOW_FIXTURES).checks}
    defective = sensitivity(checks["answer_from_case"])
    fixed = sensitivity(checks["answer_resolves_task"])
    # It passes every run, so no swap brings a trajectory it decides otherwise: the
    # ablations alone cannot prove it; its source, read with them, does.
    assert defective.unmoved and defective.contrasts == 0 and not defective.tautology
    assert dict(defective.moved) == dict.fromkeys(Ablation, 0)
    why = independence(defective, static_flags(checks["answer_from_case"].graders))
    assert why is not None and "reads only the task" in why
    assert not fixed.unmoved and not fixed.tautology
    assert independence(fixed, static_flags(checks["answer_resolves_task"].graders)) is None
    moved = dict(fixed.moved)
    assert moved[Ablation.NO_ANSWER] > 0 and moved[Ablation.EMPTY_TRAJECTORY] > 0
    # the final state is not what this grader reads: that ablation must not move it
    assert moved[Ablation.FINAL_IS_INITIAL] == 0


def test_removing_the_answer_moves_the_fixed_grader_from_failed_to_unscored(
        repo_meta_set: MetaSet) -> None:
    run = next(r for r in repo_meta_set.runs if r.id == "ungrounded-figure-02")
    task = replace(run.input.task, criteria={**run.input.task.criteria, "answer": CASE_ANSWER})
    x = replace(run.input, task=task)
    grader = user_graders.answer_resolves_task()
    assert grader.grade(x).outcome is Outcome.FAIL
    assert user_graders.answer_from_case().grade(x).outcome is Outcome.PASS
    ablated = ablate(x, Ablation.NO_ANSWER, Trajectory())
    after = grader.grade(ablated)
    assert after.outcome is Outcome.UNSCORED and after.reason == "no answer in the trace"
    # the defective grader does not notice the answer is gone
    assert user_graders.answer_from_case().grade(ablated).outcome is Outcome.PASS


def test_static_reading_flags_the_case_file_grader_and_not_the_fixed_one() -> None:
    defective = static_report(user_graders.answer_from_case())
    assert defective.flags == (CASE_ONLY, SELF_COMPARISON)
    assert defective.reads == ("task",)
    assert any("str(expected) vs str(answer)" in d for d in defective.details)
    fixed = static_report(user_graders.answer_resolves_task())
    assert fixed.flags == ()
    assert fixed.reads == ("task", "trajectory")
    constant = static_report(user_graders.always_pass())
    assert constant.flags == (CASE_ONLY,) and constant.reads == ()


def _example_spec(name: str) -> CheckSpec:
    params: dict[str, dict[str, object]] = {
        "no_tool_called": {"tool": "refund"}, "tool_called": {"tool": "refund"},
        "tool_order": {"before": "get_order", "after": "refund"}, "max_steps": {"value": 3},
        "state_includes": {"path": "refunds", "match": {}}, "state_unchanged": {},
        "answer_contains": {"text": "refund"}, "grounded_numbers": {},
        "answer_states": {"facts": ["order_id"]},
        "judge": {"judge": "steady", "criterion": "the refund is confirmed"}}
    return CheckSpec(name, params[name])  # type: ignore[arg-type]


def test_no_built_in_grader_is_flagged_by_static_reading() -> None:
    for name in BUILTINS:
        report = static_report(build_grader(_example_spec(name)))
        assert report.flags == (), (name, report)
        assert not report.note, (name, report.note)
        assert set(report.reads) & {"trajectory", "final_state", "whole run"}, name


def test_no_built_in_check_of_the_repository_is_a_tautology(repo_meta_set: MetaSet) -> None:
    for check in grade_runs(repo_meta_set.runs).checks:
        assert not sensitivity(check).tautology, check.name


def test_comparing_two_parts_of_the_trajectory_is_not_a_self_comparison() -> None:
    def check(x: EvalInput) -> Judgement:
        calls = x.trajectory.tool_calls()
        first = calls[0].tool if calls else ""
        same = [c for c in calls if c.tool == first]
        return passed() if len(same) == 1 else failed()

    def same_expression(x: EvalInput) -> Judgement:
        return passed() if x.final_state == x.final_state else failed()

    ordered = static_report(RuleGrader("ordered", "1", Kind.GATE, RANK_USER, check))
    assert ordered.flags == () and ordered.reads == ("trajectory",)
    identical = static_report(RuleGrader("same", "1", Kind.GATE, RANK_USER, same_expression))
    assert identical.flags == (SELF_COMPARISON,)


def test_a_lambda_grader_has_no_function_to_read_and_is_not_flagged() -> None:
    report = static_report(RuleGrader("x", "1", Kind.GATE, RANK_USER, lambda x: passed()))
    assert report.flags == ()
    assert report.note


def test_an_unmoved_verdict_that_reads_the_trajectory_is_no_proof(
        repo_meta_set: MetaSet) -> None:
    # No run calls this tool: ablations only take calls away, and every swap brings a
    # trajectory it also passes. Nothing shows the verdict ignores the trajectory.
    spec = CheckSpec("no_tool_called", {"tool": "update_reservation_passengers"})
    runs = [replace(r, input=replace(r.input, task=replace(r.input.task, checks=(spec,))))
            for r in repo_meta_set.runs]
    check = grade_runs(runs).checks[0]
    sens = sensitivity(check)
    assert sens.unmoved and sens.contrasts == 0 and not sens.tautology
    assert independence(sens, static_flags(check.graders)) is None
