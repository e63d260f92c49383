"""Run every check of every labelled run, and pair each verdict with the human label.

This is the *run* phase of ``metaeval meta-eval``: it builds each run's graders
from its task's check specs, grades the run, and records one ``Case`` per
(check, run), plus one for the composed evaluator. It measures nothing and
renders nothing. A grader that raises is recorded as unscored with the
exception as its reason: never a pass, and never a crash that hides the rest.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from metaeval.audit.ablation import Sensitivity
from metaeval.config import NO_JUDGES, JudgesSection
from metaeval.contract import (
    CheckSpec,
    EvalInput,
    Finding,
    Grader,
    JsonObject,
    Kind,
    Outcome,
    evaluate,
)
from metaeval.graders.registry import build_grader
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.loaders.meta_set import MetaRun

SCORE_SCALE = (1, 2, 3, 4, 5)
EVALUATOR = "evaluator"


@dataclass(frozen=True, slots=True)
class Case:
    """One check (or the evaluator) on one run: what the human said, what the grader said.

    ``human_score`` is the run's 1-5 score; ``graded_score`` is the grader's
    ordinal score when it gives one on the same 1-5 scale, else None.
    """

    run_id: str
    category: str
    source: str
    human: Outcome
    graded: Outcome
    human_score: int | None = None
    graded_score: int | None = None
    reason: str = ""
    task: str = ""
    """The run's task id: what ``--by task`` groups by, and the cluster of a cluster bootstrap."""
    metadata: JsonObject = field(default_factory=dict)
    """The run's free metadata (the same object, not a copy), for ``--by metadata.KEY``."""
    from_overall: bool = False
    """A check's case whose human label is the run's overall pass, not a label of the
    check itself (``Label.for_check``)."""


@dataclass(frozen=True, slots=True)
class CheckRuns:
    """Every run that has one check, with the grader its own task's spec built."""

    name: str
    runs: tuple[MetaRun, ...]
    graders: tuple[Grader, ...]
    cases: tuple[Case, ...]
    unlabelled: int = 0
    """Runs with this check that no one labelled for it (nor overall): not measured."""
    sensitivity: Sensitivity | None = None
    """The ablations' counts when they were taken as the runs were read
    (``metaeval.audit.stream``, which keeps no runs); None: count them from ``runs``."""


@dataclass(frozen=True, slots=True)
class Grading:
    """What running every check on every run produced: per check name, and the evaluator."""

    checks: tuple[CheckRuns, ...]
    evaluator: tuple[Case, ...]
    unlabelled: int = 0
    """Runs with no overall human verdict: graded, left out of the evaluator's numbers."""


def spec_key(spec: CheckSpec) -> str:
    """One key per distinct spec: the same grader, parameters and name."""
    return json.dumps([spec.grader, spec.params, spec.name], sort_keys=True)


def safe_grade(grader: Grader, x: EvalInput) -> Finding:
    """``grader.grade(x)``; an exception becomes an unscored finding that names it."""
    try:
        return grader.grade(x)
    except Exception as e:  # a user's grader broke: record it, keep measuring the rest
        return Finding(grader.name, grader.version, grader.kind, Outcome.UNSCORED,
                       reason=f"grader raised {e!r}")


def ordinal(finding: Finding) -> int | None:
    """The finding's score as a 1-5 ordinal, when it is a score on that scale."""
    score = finding.score
    if finding.kind is not Kind.SCORE or score is None or finding.outcome is Outcome.UNSCORED:
        return None
    return int(score) if score == int(score) and int(score) in SCORE_SCALE else None


def grade_runs(runs: Sequence[MetaRun], allowed: AllowedModules = BUILTINS_ONLY,
               judges: JudgesSection = NO_JUDGES) -> Grading:
    """Grade every run with every check its task declares, and with the composed evaluator.

    Checks are keyed by their name (``CheckSpec.label``); runs keep their order. A
    check names user code only from ``allowed`` and judges only from ``judges`` (the
    project's config): the runs are data, whoever loaded them.
    """
    built: dict[str, Grader] = {}
    per_check: dict[str, list[tuple[MetaRun, Grader, Case]]] = {}
    unlabelled: dict[str, int] = {}
    evaluator: list[Case] = []
    for run in runs:
        graders: list[Grader] = []
        task = run.input.task.id
        for spec in run.input.task.checks:
            key = spec_key(spec)
            if key not in built:
                built[key] = build_grader(spec, allowed, judges)
            grader = built[key]
            graders.append(grader)
            human = run.label.for_check(spec.label)
            if human is None:
                # No one said what this check should find here: nothing to measure it by.
                unlabelled[spec.label] = unlabelled.get(spec.label, 0) + 1
                continue
            finding = safe_grade(grader, run.input)
            case = Case(run.id, run.category, run.source, human,
                        finding.effective_outcome(), run.label.score, ordinal(finding),
                        finding.reason, task, run.metadata,
                        spec.label not in run.label.criteria)
            per_check.setdefault(spec.label, []).append((run, grader, case))
        if run.label.verdict is not None:
            evaluator.append(Case(run.id, run.category, run.source, run.label.verdict,
                                  compose(run.input, graders), run.label.score,
                                  task=task, metadata=run.metadata))
    checks = tuple(
        CheckRuns(name, tuple(r for r, _, _ in rows), tuple(g for _, g, _ in rows),
                  tuple(c for _, _, c in rows), unlabelled.get(name, 0))
        for name, rows in sorted(per_check.items()))
    return Grading(checks, tuple(evaluator), len(runs) - len(evaluator))


def compose(x: EvalInput, graders: Sequence[Grader]) -> Outcome:
    """The evaluator's verdict: every grader, gates ANDed; unscored when one raised."""
    try:
        return evaluate(x, list(graders)).outcome
    except Exception:  # a grader raised: the composed verdict cannot be trusted either way
        return Outcome.UNSCORED
