"""The kill rule's statistics: the one-sided exact McNemar test, checked against
scipy's binomial test, and a test that must say no."""

from __future__ import annotations

from dataclasses import replace

import pytest
from scipy.stats import binomtest

from metaeval.audit.bars import DEFAULT_BARS
from metaeval.audit.collect import VerdictTable
from metaeval.audit.controls import run_controls
from metaeval.audit.judge_decision import AuditSource, JudgeAudit, audit_judge
from metaeval.audit.judge_mutants import Family, MutantDiff
from metaeval.audit.judge_mutants.outcome import (
    Compared,
    JudgeMutant,
    MutantOutcome,
    MutantStatus,
    decide,
    mcnemar_worse,
    new_failures,
)
from metaeval.judges.base import JudgeIdentity, Scale
from metaeval.loaders.judge_items import JudgeItems, Order, PairItem, PointItem, Slot, Variant


@pytest.mark.parametrize(("worse", "better"), [(5, 0), (6, 1), (10, 10), (3, 9), (40, 22),
                                               (0, 4), (700, 640)])
def test_mcnemar_matches_scipys_one_sided_binomial_test(worse: int, better: int) -> None:
    test = mcnemar_worse(worse, better, 0.05)
    expected = binomtest(worse, worse + better, 0.5, alternative="greater").pvalue
    assert test.p_value == pytest.approx(expected, rel=1e-9)


def test_five_discordant_items_all_one_way_are_significant_and_four_are_not() -> None:
    assert mcnemar_worse(5, 0, 0.05).significant  # 1/32 < 0.05
    assert not mcnemar_worse(4, 0, 0.05).significant  # 1/16 > 0.05: must say no
    assert not mcnemar_worse(0, 9, 0.05).significant  # better, never worse
    assert mcnemar_worse(0, 0, 0.05).p_value == 1.0  # nothing discordant: no evidence


# --- the decision, on hand-made verdict tables ----------------------------------------

SCALE = Scale(1, 5, 4)
MUTANT = JudgeMutant("m", "m", Family.DECISION, "a change", MutantDiff("decision", "a", "b"))


def _point(n: int, label: str | None) -> PointItem:
    return PointItem(f"i{n}", "p", "r", None, label, None, "test")


def _decide(items: JudgeItems, judge: dict[Slot, float | str | None],
            mutant: dict[Slot, float | str | None], mutant_scale: Scale = SCALE) -> MutantOutcome:
    controls = run_controls(items, DEFAULT_BARS)
    tables = [VerdictTable({s: (v,) for s, v in t.items()}) for t in (judge, mutant)]
    audits = [audit_judge(JudgeIdentity(name), scale, items, table,
                          source=AuditSource.RECORDED, controls=controls)
              for name, scale, table in (("j", SCALE, tables[0]), ("m", mutant_scale,
                                                                   tables[1]))]
    return decide(MUTANT, Compared(items, audits[0], tables[0], SCALE, audits[1], tables[1],
                                   mutant_scale))


def test_identical_verdicts_are_equivalent_and_one_moved_verdict_is_not() -> None:
    items = JudgeItems(tuple(_point(n, "pass" if n < 6 else "fail") for n in range(12)))
    verdicts: dict[Slot, float | str | None] = {
        Slot(f"i{n}"): 5.0 if n < 6 else 1.0 for n in range(12)}
    same = _decide(items, verdicts, dict(verdicts))
    assert same.status is MutantStatus.EQUIVALENT and same.disagree == ()
    moved = _decide(items, verdicts, {**verdicts, Slot("i7"): 5.0})
    assert moved.status is MutantStatus.SURVIVED
    assert moved.disagree == ("i7",) and moved.unlabelled == ()
    assert (moved.test.worse, moved.test.better) == (1, 0)


def test_the_same_score_read_against_another_pass_mark_is_not_equivalent() -> None:
    items = JudgeItems(tuple(_point(n, "fail") for n in range(6)))
    verdicts: dict[Slot, float | str | None] = {Slot(f"i{n}"): 3.0 for n in range(6)}
    lowered = _decide(items, verdicts, dict(verdicts), Scale(1, 5, 3))
    # Every 3 now passes against six fail labels: six worse, p = 1/64: killed.
    assert lowered.status is MutantStatus.KILLED
    assert lowered.test.worse == 6 and lowered.test.significant


def test_an_unscored_verdict_is_wrong_against_the_label() -> None:
    items = JudgeItems(tuple(_point(n, "pass") for n in range(5)))
    verdicts: dict[Slot, float | str | None] = {Slot(f"i{n}"): 5.0 for n in range(5)}
    unread = _decide(items, verdicts, {s: None for s in verdicts})
    assert unread.test.worse == 5 and unread.status is MutantStatus.KILLED


def test_pairs_are_right_per_order_and_an_unlabelled_pair_is_named_to_label() -> None:
    pairs = tuple(PairItem(f"p{n}", "p", "x", "y", None, "a" if n else None, "t")
                  for n in range(6))
    items = JudgeItems(pairwise=pairs)
    judge: dict[Slot, float | str | None] = {
        Slot(p.id, Variant.ORIGINAL, o): "a" for p in pairs for o in Order}
    flipped = {**judge, Slot("p0", Variant.ORIGINAL, Order.BA): "b"}
    outcome = _decide(items, judge, flipped)
    assert outcome.disagree == ("p0",) and outcome.unlabelled == ("p0",)
    assert outcome.test.worse == 0  # p0 has no label: not weighed


def test_a_failure_the_judge_already_has_is_not_a_new_one() -> None:
    items = JudgeItems(tuple(_point(n, "pass") for n in range(2)))
    audit = audit_judge(JudgeIdentity("j"), SCALE, items,
                        VerdictTable({Slot("i0"): (5.0,), Slot("i1"): (5.0,)}),
                        source=AuditSource.RECORDED, controls=run_controls(items, DEFAULT_BARS))
    judge: JudgeAudit = replace(audit, reasons=("kappa 0.41 < 0.6", "position bias FOUND"))
    mutant = replace(audit, reasons=("kappa 0.12 < 0.6", "position bias FOUND",
                                     "TNR 0.50 < 0.8"))
    assert new_failures(judge, mutant) == ("TNR 0.50 < 0.8",)
    assert new_failures(mutant, judge) == ()


# --- what metaeval mutate found surviving in outcome.py, each pinned ------------------


def test_a_p_value_equal_to_alpha_is_not_significant() -> None:
    assert not mcnemar_worse(5, 0, 1 / 32).significant  # p = 1/32 exactly: not below
    assert mcnemar_worse(5, 0, 1 / 32 + 1e-9).significant


def test_a_figure_is_a_placeholder_not_nothing() -> None:
    items = JudgeItems(tuple(_point(n, "pass") for n in range(2)))
    audit = audit_judge(JudgeIdentity("j"), SCALE, items,
                        VerdictTable({Slot("i0"): (5.0,), Slot("i1"): (5.0,)}),
                        source=AuditSource.RECORDED, controls=run_controls(items, DEFAULT_BARS))
    # "kappa 0.41 < 0.6" and "kappa  < " are different checks: figures become "#".
    judge = replace(audit, reasons=("kappa 0.41 < 0.6",))
    assert new_failures(judge, replace(audit, reasons=("kappa  < ",))) == ("kappa  < ",)


def _scored(n: int, score: int) -> PointItem:
    return PointItem(f"s{n}", "p", "r", None, None, score, "test")


def test_integer_labels_pass_at_the_people_pass_mark_itself() -> None:
    # Labels 4 (at the pass mark: a pass) and 2 (a fail); the judge right on all.
    items = JudgeItems((*(_scored(n, 4) for n in range(3)), *(_scored(n + 3, 2)
                                                             for n in range(3))))
    judge: dict[Slot, float | str | None] = {
        Slot(f"s{n}"): 5.0 if n < 3 else 1.0 for n in range(6)}
    wrong = _decide(items, judge, {**judge, Slot("s3"): 5.0, Slot("s0"): 1.0})
    assert (wrong.test.worse, wrong.test.better) == (2, 0)


def test_a_labelled_pair_judged_wrong_in_one_order_counts_worse_and_no_consensus_is_skipped(
        ) -> None:
    pairs = (PairItem("p0", "p", "x", "y", None, "a", "t"),
             PairItem("p1", "p", "x", "y", None, "", "t"))  # "": annotators tied
    items = JudgeItems(pairwise=pairs)
    judge: dict[Slot, float | str | None] = {
        Slot(p.id, Variant.ORIGINAL, o): "a" for p in pairs for o in Order}
    outcome = _decide(items, judge, {**judge, Slot("p0", Variant.ORIGINAL, Order.BA): "b",
                                     Slot("p1", Variant.ORIGINAL, Order.AB): "b"})
    assert (outcome.test.worse, outcome.test.better) == (1, 0)
    assert outcome.unlabelled == ("p1",)


def test_an_outcome_keeps_what_asking_the_mutant_cost() -> None:
    from metaeval.audit.collect import Calls

    items = JudgeItems(tuple(_point(n, "pass") for n in range(2)))
    verdicts: dict[Slot, float | str | None] = {Slot("i0"): 5.0, Slot("i1"): 5.0}
    tables = VerdictTable({s: (v,) for s, v in verdicts.items()})
    audit = audit_judge(JudgeIdentity("j"), SCALE, items, tables, source=AuditSource.RECORDED,
                        controls=run_controls(items, DEFAULT_BARS))
    compared = Compared(items, audit, tables, SCALE, audit, tables, SCALE)
    assert decide(MUTANT, compared, Calls(3, 1, 0)).calls == Calls(3, 1, 0)
    assert decide(MUTANT, compared).calls == Calls()


def test_the_diff_is_unified_with_one_line_of_context() -> None:
    from metaeval.audit.judge_mutants.outcome import unified_diff

    mutant = replace(MUTANT, diff=MutantDiff("decision", "a\nb\nc\nd\ne", "a\nb\nX\nd\ne"))
    assert unified_diff(mutant) == ("--- decision (judge)\n+++ decision (m)\n@@ -2,3 +2,3 @@\n"
                                    " b\n-c\n+X\n d")


def test_a_fingerprint_folds_whitespace_and_keeps_its_documented_form() -> None:
    import hashlib

    from metaeval.audit.judge_mutants.outcome import judge_fingerprint

    def outcome(before: str, after: str, operator: str = "m") -> MutantOutcome:
        mutant = replace(MUTANT, operator=operator, diff=MutantDiff("decision", before, after))
        return MutantOutcome(mutant, MutantStatus.SURVIVED, (), mcnemar_worse(0, 0, 0.05), (),
                             ())

    assert judge_fingerprint("j", outcome("a  b\n", "c")) == judge_fingerprint(
        "j", outcome("a b", "c"))
    assert judge_fingerprint("j", outcome("a b", "c")) != judge_fingerprint("j", outcome("ab", "c"))
    # Fields are kept apart: judge "jm" of operator "x" is not judge "j" of "mx".
    assert judge_fingerprint("jm", outcome("a", "b", "x")) != judge_fingerprint(
        "j", outcome("a", "b", "mx"))
    key = "\x1f".join(["judge", "j", "m", "decision", "a b", "c", "a change"])
    assert judge_fingerprint("j", outcome("a b", "c")) == hashlib.sha256(
        key.encode()).hexdigest()[:16]


def test_a_figure_the_labels_cannot_decide_is_no_kill_beside_a_judge_that_may_not_gate(
        ) -> None:
    # 30 of each label, the judge right on all; with no probe records it may not gate
    # (report only), so a figure the mutant leaves undecided is no new failure.
    items = JudgeItems(tuple(_point(n, "pass" if n < 30 else "fail") for n in range(60)))
    verdicts: dict[Slot, float | str | None] = {
        Slot(f"i{n}"): 5.0 if n < 30 else 1.0 for n in range(60)}
    # Four fails passed: TNR 0.87 [0.70, 0.95] holds the bar 0.8, and McNemar 4-0 is
    # p = 1/16: nothing here tells the mutant apart, and the four items say where.
    moved = _decide(items, verdicts, {**verdicts, **{Slot(f"i{n}"): 5.0
                                                     for n in range(30, 34)}})
    assert not moved.test.significant
    assert moved.status is MutantStatus.SURVIVED
    assert moved.disagree == ("i30", "i31", "i32", "i33")
    assert moved.killed_by == ()
