from __future__ import annotations

from dataclasses import replace

import pytest
from sklearn.metrics import cohen_kappa_score

from metaeval.audit.check_measures import (
    BaselineCheck,
    Flag,
    MetaEvalResult,
    Settings,
    measure_grading,
    meta_eval,
)
from metaeval.audit.grading import grade_runs
from metaeval.config import Bars
from metaeval.contract import CheckSpec, Outcome
from metaeval.loaders.meta_set import MetaRun, MetaSet, load_meta_sets
from tests.audit.conftest import ALLOW_FIXTURES, FIXTURES, UserMetaSet

FAST = Settings(resamples=100)
BUILT_IN_CHECKS = {"answer_mentions_refund", "grounded_numbers", "lookup_before_refund",
                   "max_steps", "no_tool_called", "nothing_else_changed", "offers_store_credit",
                   "refund_issued", "state_unchanged", "states_refund_amount"}


def test_every_built_in_check_has_both_labels_and_defined_intervals(
        repo_meta_set: MetaSet, repo_result: MetaEvalResult) -> None:
    result = repo_result
    assert {c.name for c in result.checks} == BUILT_IN_CHECKS
    assert len(repo_meta_set.runs) >= 40
    verdicts = [r.label.verdict for r in repo_meta_set.runs]
    assert abs(verdicts.count(Outcome.PASS) - verdicts.count(Outcome.FAIL)) <= 6
    for check in result.checks:
        m = check.measured
        assert m.confusion.positives and m.confusion.negatives, check.name
        assert not m.tpr_ci.reason and not m.tnr_ci.reason, check.name
        assert m.tpr_ci.low <= m.tpr.value <= m.tpr_ci.high
        assert Flag.TAUTOLOGY not in check.flags and Flag.CASE_ONLY not in check.flags
        # every check of the repository's set is failed by some run: none is UNTESTED
        assert Flag.UNTESTED not in check.flags, check.name
    refund = next(c for c in result.checks if c.name == "refund_issued").measured
    assert (refund.tpr.value, refund.tnr.value) == (1.0, 1.0)


def test_kappa_equals_scikit_learn_on_the_graded_vectors(repo_meta_set: MetaSet) -> None:
    grading = grade_runs(repo_meta_set.runs)
    result = measure_grading(grading, FAST)
    for check, measured in zip(grading.checks, result.checks, strict=True):
        human = [c.human.value for c in check.cases]
        graded = [c.graded.value for c in check.cases]
        assert measured.measured.kappa.value == pytest.approx(
            cohen_kappa_score(human, graded)), check.name
    # the evaluator misses two good runs and leaves the no-answer one unscored
    evaluator = result.evaluator.measured
    assert (evaluator.confusion.fn, evaluator.confusion.unscored) == (2, 1)


def test_unscored_is_its_own_column_and_stays_in_the_denominator(
        repo_result: MetaEvalResult) -> None:
    result = repo_result
    grounded = next(c for c in result.checks if c.name == "grounded_numbers").measured
    k = grounded.confusion
    assert k.unscored == 2 and k.unscored_neg == 2
    assert grounded.tnr.value == k.tn / (k.tn + k.fp + 2)
    assert grounded.scored_tnr.value == k.tn / (k.tn + k.fp) > grounded.tnr.value


def test_a_constant_grader_gets_kappa_zero_and_is_flagged(user_meta_set: UserMetaSet) -> None:
    loaded = load_meta_sets([user_meta_set("always_pass", "answer_resolves_task")],
                            ALLOW_FIXTURES)
    result = meta_eval(loaded.runs, FAST, allowed=ALLOW_FIXTURES)
    by_name = {c.name: c for c in result.checks}
    constant, fixed = by_name["always_pass"], by_name["answer_resolves_task"]
    assert constant.measured.kappa.value == 0.0 and constant.measured.kappa.reason
    assert {Flag.CONSTANT, Flag.TAUTOLOGY, Flag.CASE_ONLY} <= set(constant.flags)
    assert Flag.NO_SIGNAL in constant.flags
    assert not {Flag.CONSTANT, Flag.TAUTOLOGY, Flag.CASE_ONLY} & set(fixed.flags)
    assert result.failed


def test_weighted_kappa_only_for_an_ordinal_grader_and_equal_to_scikit_learn(
        user_meta_set: UserMetaSet) -> None:
    loaded = load_meta_sets([user_meta_set("reply_quality", "answer_resolves_task")],
                            ALLOW_FIXTURES)
    grading = grade_runs(loaded.runs, ALLOW_FIXTURES)
    result = measure_grading(grading, FAST)
    by_name = {c.name: c for c in result.checks}
    assert by_name["answer_resolves_task"].measured.weighted_kappa is None
    weighted = by_name["reply_quality"].measured.weighted_kappa
    assert weighted is not None
    cases = [c for c in grading.checks[1].cases if c.graded_score is not None]
    hs = [c.human_score for c in cases]
    gs = [c.graded_score for c in cases]
    for value, weights in zip(weighted, ("linear", "quadratic"), strict=True):
        assert value.value == pytest.approx(
            cohen_kappa_score(hs, gs, weights=weights, labels=[1, 2, 3, 4, 5]))
    assert weighted[0].value != pytest.approx(weighted[1].value)
    assert by_name["reply_quality"].measured.ordinal_unscored == 2


def test_categories_show_what_each_check_catches_and_lets_through(
        repo_result: MetaEvalResult) -> None:
    result = repo_result
    categories = dict(result.categories)
    wrong_target = dict(categories["near_miss/wrong_target"].cells)
    assert wrong_target["refund_issued"].caught == ("refund-wrong-order-01",
                                                    "refund-wrong-order-02")
    # the labeller judged max_steps met on these runs, so it lets nothing through
    assert wrong_target["max_steps"].let_through == ()
    refusal = dict(categories["near_miss/over_refusal"].cells)
    # over-refusal-01 says "refunds" while refusing: the labeller judged that criterion met
    assert refusal["answer_mentions_refund"].let_through == ("over-refusal-02",)
    alternative = dict(categories["pass/alternative_path"].cells)
    assert alternative["lookup_before_refund"].wrongly_failed == (
        "alternative-path-02-search-only",)
    assert alternative["refund_issued"].wrongly_failed == ()


def test_bars_global_and_per_check(repo_meta_set: MetaSet) -> None:
    strict = Settings(Bars(min_tnr=0.7), {"refund_issued": Bars(min_kappa=0.99),
                                          "grounded_numbers": Bars(min_tnr=0.5)}, resamples=100)
    result = meta_eval(repo_meta_set.runs, strict)
    flags = {c.name: c.flags for c in result.checks}
    assert Flag.BELOW_TNR in flags["answer_mentions_refund"]
    assert Flag.BELOW_TNR not in flags["grounded_numbers"]  # TNR 0.6: its own bar is lower
    assert Flag.BELOW_TNR not in flags["refund_issued"] and Flag.BELOW_KAPPA not in flags[
        "refund_issued"]
    assert result.failed


def test_a_drop_since_the_baseline_is_a_regression(repo_meta_set: MetaSet,
                                                   repo_result: MetaEvalResult) -> None:
    assert not repo_result.failed
    first = repo_result
    same = {c.name: BaselineCheck(c.measured.tpr.value, c.measured.tnr.value,
                                  c.measured.kappa.value) for c in first.checks}
    assert not meta_eval(repo_meta_set.runs, FAST, same).failed
    better = dict(same)
    old = same["max_steps"]
    better["max_steps"] = BaselineCheck(old.tpr, old.tnr + 0.1, old.kappa)
    better["retired_check"] = old
    result = meta_eval(repo_meta_set.runs, FAST, better)
    flagged = [c.name for c in result.checks if Flag.REGRESSION in c.flags]
    assert flagged == ["max_steps"]
    assert result.baseline_missing == ("retired_check",)
    assert result.failed


def test_a_grader_that_raises_is_unscored_never_a_pass(user_meta_set: UserMetaSet) -> None:
    loaded = load_meta_sets([user_meta_set("raises", "answer_resolves_task")], ALLOW_FIXTURES)
    grading = grade_runs(loaded.runs, ALLOW_FIXTURES)
    broken = next(c for c in grading.checks if c.name == "raises")
    assert {c.graded for c in broken.cases} == {Outcome.UNSCORED}
    assert broken.cases[0].reason == "grader raised KeyError('criteria.answer')"
    assert {c.graded for c in grading.evaluator} == {Outcome.UNSCORED}
    result = measure_grading(grading, FAST)
    measured = next(c for c in result.checks if c.name == "raises").measured
    assert (measured.tpr.value, measured.tnr.value, measured.confusion.unscored) == (0, 0, 38)


def _checked_by(runs: tuple[MetaRun, ...], *specs: CheckSpec) -> list[MetaRun]:
    """The runs with ``specs`` as their task's only checks, each labelled as the run's
    verdict (an overall fail alone would not say which check failed)."""
    return [replace(r, input=replace(r.input, task=replace(r.input.task, checks=specs)),
                    label=replace(r.label, criteria={
                        s.label: r.label.verdict for s in specs
                        if r.label.verdict is not None}))
            for r in runs]


# The guard of the issue: no run of the repository's set calls this tool.
NEVER_VIOLATED = CheckSpec("no_tool_called", {"tool": "update_reservation_passengers"},
                           "never_update_passengers")


def test_a_trajectory_guard_no_run_violates_is_untested_not_a_tautology(
        repo_meta_set: MetaSet) -> None:
    runs = _checked_by(repo_meta_set.runs, NEVER_VIOLATED,
                       CheckSpec("no_tool_called", {"tool": "cancel_order"}, "no_cancel"))
    result = meta_eval(runs, FAST)
    by_name = {c.name: c for c in result.checks}
    guard = by_name["never_update_passengers"]
    assert Flag.TAUTOLOGY not in guard.flags
    assert Flag.UNTESTED in guard.flags and Flag.CONSTANT in guard.flags
    assert any(n.startswith("UNTESTED: no run in the set makes it fail; add a near-miss that "
                            "does") for n in guard.notes)
    assert guard.sensitivity is not None and guard.sensitivity.unmoved
    # a warning by default: the run passes on it
    assert not guard.fails(Flag.UNTESTED) and not result.failed
    # the mirror: a guard some run violates is neither
    caught = by_name["no_cancel"]
    assert not {Flag.UNTESTED, Flag.TAUTOLOGY} & set(caught.flags)


def test_untested_fails_the_run_when_the_config_says_so(repo_meta_set: MetaSet) -> None:
    runs = _checked_by(repo_meta_set.runs, NEVER_VIOLATED)
    result = meta_eval(runs, replace(FAST, untested="fail"))
    guard = result.checks[0]
    assert guard.fails(Flag.UNTESTED) and result.failed
    with pytest.raises(ValueError, match="untested: got 'error'; expected one of warn, fail"):
        Settings(untested="error")


def test_graders_that_read_only_the_task_are_still_tautologies(repo_meta_set: MetaSet) -> None:
    # One varies across the set (so the swap shows it ignores the trajectory), one is
    # constant (so only its source shows it): both are flagged, neither is UNTESTED.
    runs = _checked_by(repo_meta_set.runs,
                       CheckSpec(f"{FIXTURES}:task_is_refund", {}, "task_is_refund"),
                       CheckSpec(f"{FIXTURES}:task_has_criteria", {}, "task_has_criteria"))
    result = meta_eval(runs, FAST, allowed=ALLOW_FIXTURES)
    by_name = {c.name: c for c in result.checks}
    varies, constant = by_name["task_is_refund"], by_name["task_has_criteria"]
    assert Flag.TAUTOLOGY in varies.flags and Flag.UNTESTED not in varies.flags
    assert varies.sensitivity is not None and varies.sensitivity.tautology
    assert any("swaps with a trajectory it decides otherwise" in n for n in varies.notes)
    assert {Flag.TAUTOLOGY, Flag.CASE_ONLY} <= set(constant.flags)
    assert Flag.UNTESTED not in constant.flags
    assert constant.sensitivity is not None and not constant.sensitivity.tautology
    assert any("reads only the task" in n for n in constant.notes)
    assert result.failed
