"""Whether the labels catch a judge mutant: killed, survived, or equivalent on the
items measured.

A mutant is **killed** when its audit fails a check the judge's own audit passes
(a bar of ``[tool.metaeval.judge_audit]``, a probe that finds a bias, the
alternative annotator test), or when its verdicts disagree with the labels
significantly more often than the judge's on the same items (McNemar's exact
test, one-sided, on the paired right/wrong outcomes, at the audit's alpha). A
mutant whose verdicts equal the judge's on every item is **equivalent on these
items**: no label could tell them apart here, so it is reported apart. Every other
mutant **survived**, with the items where it and the judge disagree: the items to
label next. This module measures; it asks no judge and reads no file.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field
from enum import Enum

from metaeval.audit.collect import Calls, Decision, VerdictTable
from metaeval.audit.judge_decision import AuditVerdict, JudgeAudit
from metaeval.audit.judge_mutants.unit import Family, MutantDiff
from metaeval.audit.stats import binom_upper_tail
from metaeval.judges.base import Scale
from metaeval.loaders.judge_items import JudgeItems, Order, Slot, Variant
from metaeval.loaders.judge_labels import NO_CONSENSUS


class MutantStatus(Enum):
    """What the labels made of one judge mutant."""

    KILLED = "Killed"
    """Its audit fails a check the judge's passes, or it is significantly more often wrong."""
    SURVIVED = "Survived"
    """Its verdicts differ from the judge's, and nothing measured here tells it apart."""
    EQUIVALENT = "Equivalent"
    """Its verdicts equal the judge's on every item: equivalent on these items."""


@dataclass(frozen=True, slots=True)
class JudgeMutant:
    """One broken copy of a judge: its stable id (operator, mode, index), the
    operator, what it changes and the diff a reader is shown."""

    id: str
    operator: str
    family: Family
    detail: str
    diff: MutantDiff


@dataclass(frozen=True, slots=True)
class WorseTest:
    """McNemar's exact test, one-sided: is the mutant wrong more often than the judge
    on the labelled verdicts both gave? ``worse``: the judge right and the mutant
    wrong; ``better``: the other way round. ``p_value`` is P(X >= worse) for X ~
    Binomial(worse + better, 1/2); 1.0 with no discordant pair."""

    worse: int
    better: int
    p_value: float
    alpha: float

    @property
    def significant(self) -> bool:
        return self.p_value < self.alpha


def mcnemar_worse(worse: int, better: int, alpha: float) -> WorseTest:
    """The one-sided exact McNemar test of ``worse`` against ``better`` discordant pairs."""
    return WorseTest(worse, better, binom_upper_tail(worse, worse + better, 0.5), alpha)


@dataclass(frozen=True, slots=True)
class MutantOutcome:
    """One mutant's result: its status, the checks that killed it (each as its audit
    says it), the McNemar test, the items where it and the judge disagree (labelled
    or not) and what it cost."""

    mutant: JudgeMutant
    status: MutantStatus
    killed_by: tuple[str, ...]
    test: WorseTest
    disagree: tuple[str, ...]
    unlabelled: tuple[str, ...]
    """Of ``disagree``, the items no person has labelled: label these to kill it."""
    calls: Calls = field(default_factory=Calls)


_FIGURE = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?")


def _check(reason: str) -> str:
    """A reason without its figures: the same check failed twice reads alike."""
    return _FIGURE.sub("#", reason)


def new_failures(judge: JudgeAudit, mutant: JudgeAudit) -> tuple[str, ...]:
    """The mutant's reasons not to gate whose check the judge's audit passes. A figure
    these labels cannot decide (an interval holding its bar) counts only against a
    judge that may gate: of an undecided judge, an undecided mutant says nothing."""
    failed = {_check(r) for r in judge.reasons}
    undecided: set[str] = set()
    if judge.verdict is not AuditVerdict.MAY_GATE and mutant.open is not None:
        undecided = ({u.said() for u in mutant.open.measures}
                     | {t.said() for t in mutant.open.tests})
    return tuple(r for r in mutant.reasons if _check(r) not in failed and r not in undecided)


def _verdict(decision: Decision, scale: Scale) -> tuple[Decision, bool | None]:
    """What a decision says: itself and, for a score or pass/fail, whether it passes."""
    if decision is None or isinstance(decision, str):
        return decision, None
    return decision, scale.passes(decision)


def _right(items: JudgeItems, table: VerdictTable, scale: Scale, people: Scale
           ) -> dict[Slot, bool]:
    """Each labelled verdict, right or wrong against the people's label (unscored is
    wrong: it is not the label)."""
    right: dict[Slot, bool] = {}
    for item in items.pointwise:
        if not item.labelled:
            continue
        human = (item.verdict == "pass" if item.verdict is not None
                 else item.score is not None and item.score >= people.pass_at)
        slot = Slot(item.id)
        if slot in table.decisions:
            decided = table.decided(item.id)
            right[slot] = (decided is not None and not isinstance(decided, str)
                           and scale.passes(decided) == human)
    for pair in items.pairwise:
        if pair.label is None or pair.label == NO_CONSENSUS:
            continue
        for order in Order:
            slot = Slot(pair.id, Variant.ORIGINAL, order)
            if slot in table.decisions:
                right[slot] = table.decided(pair.id, order=order) == pair.label
    return right


@dataclass(frozen=True, slots=True)
class Compared:
    """The judge's audit and verdicts, and the mutant's, on the same items."""

    items: JudgeItems
    judge: JudgeAudit
    judge_table: VerdictTable
    judge_scale: Scale
    mutant: JudgeAudit
    mutant_table: VerdictTable
    mutant_scale: Scale


def decide(mutant: JudgeMutant, compared: Compared, calls: Calls | None = None
           ) -> MutantOutcome:
    """Killed, survived or equivalent (see the module docstring)."""
    original, changed = compared.judge_table, compared.mutant_table
    slots = sorted(set(original.decisions) | set(changed.decisions),
                   key=lambda s: (s.item, s.variant.value, s.order.value))
    differ = [s for s in slots
              if _verdict(original.decided(s.item, s.variant, s.order), compared.judge_scale)
              != _verdict(changed.decided(s.item, s.variant, s.order), compared.mutant_scale)]
    people = compared.judge.labels
    before = _right(compared.items, original, compared.judge_scale, people)
    after = _right(compared.items, changed, compared.mutant_scale, people)
    both = set(before) & set(after)
    test = mcnemar_worse(sum(before[s] and not after[s] for s in both),
                         sum(after[s] and not before[s] for s in both),
                         compared.judge.bars.alpha)
    items = tuple(dict.fromkeys(s.item for s in differ))
    labelled = {s.item for s in before}
    unlabelled = tuple(i for i in items if i not in labelled)
    killed_by = new_failures(compared.judge, compared.mutant)
    if test.significant:
        killed_by += (f"wrong against the labels {test.worse} times where the judge was "
                      f"right, right {test.better} times where it was wrong (McNemar exact, "
                      f"one-sided, p={test.p_value:.3g} < alpha {test.alpha:g})",)
    status = (MutantStatus.EQUIVALENT if not differ else
              MutantStatus.KILLED if killed_by else MutantStatus.SURVIVED)
    return MutantOutcome(mutant, status, killed_by if differ else (), test, items, unlabelled,
                         calls or Calls())


def unified_diff(mutant: JudgeMutant) -> str:
    """The mutant's change as a unified diff of its part (template, rule, decision)."""
    diff = mutant.diff
    lines = difflib.unified_diff(diff.before.splitlines(), diff.after.splitlines(),
                                 f"{diff.part} (judge)", f"{diff.part} ({mutant.id})",
                                 lineterm="", n=1)
    return "\n".join(lines)


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def judge_fingerprint(judge: str, outcome: MutantOutcome) -> str:
    """16 hex digits of the judge, the operator and the change it makes (whitespace
    folded): a finding's stable id across runs and item sets."""
    diff = outcome.mutant.diff
    key = "\x1f".join(["judge", judge, outcome.mutant.operator, diff.part, _fold(diff.before),
                       _fold(diff.after), outcome.mutant.detail])
    return hashlib.sha256(key.encode()).hexdigest()[:16]
