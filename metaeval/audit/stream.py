"""Grade runs as they are read, keeping only what the measures need.

``grade_runs`` holds every run, so that the tautology ablations can re-grade
them after the fact; at 10,000 real-sized runs that is over a gigabyte. A
``Stream`` takes one run at a time instead: it grades every check and the
evaluator, re-grades at once under the ablations that need only the run itself
(no answer, empty trajectory, final state = initial), and for the swap keeps,
per check, the one run still waiting for the next run's trajectory (the last
takes the first's, as in ``tautology.sensitivity``). What it keeps is the cases
(verdicts), one grader per distinct spec (for the static reading), and the
counters. The result is the ``Grading`` that ``grade_runs`` gives for the same
runs, with each check's ``Sensitivity`` already counted and no runs in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from metaeval.audit.ablation import Ablation, Sensitivity, ablate
from metaeval.audit.grading import (
    Case,
    CheckRuns,
    Grading,
    compose,
    ordinal,
    safe_grade,
    spec_key,
)
from metaeval.config import NO_JUDGES, JudgesSection
from metaeval.contract import EvalInput, Grader, Outcome, Trajectory
from metaeval.graders.registry import build_grader
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.loaders.meta_set import MetaRun

# The ablations a run can be re-graded under on its own, as it is read.
ALONE = (Ablation.NO_ANSWER, Ablation.EMPTY_TRAJECTORY, Ablation.FINAL_IS_INITIAL)


@dataclass(slots=True)
class _Check:
    """What one check has gathered so far."""

    cases: list[Case] = field(default_factory=list)
    graders: dict[str, Grader] = field(default_factory=dict)
    """One per distinct spec, in first-seen order."""
    moved: dict[Ablation, int] = field(default_factory=lambda: dict.fromkeys(Ablation, 0))
    first: Trajectory | None = None
    first_graded: Outcome | None = None
    waiting: tuple[EvalInput, Grader, Outcome] | None = None
    """The last run so far, whose swap needs the next run's trajectory."""
    contrasts: int = 0
    """Swaps that give a run the trajectory of a run the check decides otherwise
    (``Sensitivity.contrasts``): each case against the next, the last against the first."""
    unlabelled: int = 0

    def swap(self, trajectory: Trajectory) -> None:
        if self.waiting is not None:
            x, grader, graded = self.waiting
            after = safe_grade(grader, ablate(x, Ablation.SWAPPED_TRAJECTORY, trajectory))
            self.moved[Ablation.SWAPPED_TRAJECTORY] += after.effective_outcome() is not graded


class Stream:
    """Runs in, one at a time; ``finish`` gives the ``Grading``. A check names user code
    only from ``allowed`` and judges only from ``judges`` (the project's config)."""

    def __init__(self, allowed: AllowedModules = BUILTINS_ONLY,
                 judges: JudgesSection = NO_JUDGES, *, ablations: bool = True) -> None:
        self.allowed = allowed
        self.judges = judges
        self.ablations = ablations
        self.built: dict[str, Grader] = {}
        self.checks: dict[str, _Check] = {}
        self.evaluator: list[Case] = []
        self.runs = 0

    def add(self, run: MetaRun) -> None:
        """Grade ``run`` with every check of its task and the evaluator; keep the cases."""
        self.runs += 1
        graders: list[Grader] = []
        task = run.input.task.id
        for spec in run.input.task.checks:
            key = spec_key(spec)
            grader = self.built.get(key)
            if grader is None:
                grader = self.built[key] = build_grader(spec, self.allowed, self.judges)
            graders.append(grader)
            check = self.checks.setdefault(spec.label, _Check())
            human = run.label.for_check(spec.label)
            if human is None:
                check.unlabelled += 1
                continue
            check.graders.setdefault(key, grader)
            finding = safe_grade(grader, run.input)
            graded = finding.effective_outcome()
            check.cases.append(Case(run.id, run.category, run.source, human, graded,
                                    run.label.score, ordinal(finding), finding.reason, task,
                                    run.metadata, spec.label not in run.label.criteria))
            if self.ablations:
                self._ablate(check, run.input, grader, graded)
        if run.label.verdict is not None:
            self.evaluator.append(Case(run.id, run.category, run.source, run.label.verdict,
                                       compose(run.input, graders), run.label.score,
                                       task=task, metadata=run.metadata))

    @staticmethod
    def _ablate(check: _Check, x: EvalInput, grader: Grader, graded: Outcome) -> None:
        for ablation in ALONE:
            after = safe_grade(grader, ablate(x, ablation, x.trajectory))
            check.moved[ablation] += after.effective_outcome() is not graded
        check.swap(x.trajectory)
        if check.waiting is not None:
            check.contrasts += check.waiting[2] is not graded
        if check.first is None:
            check.first, check.first_graded = x.trajectory, graded
        check.waiting = (x, grader, graded)

    def finish(self) -> Grading:
        """Every check's cases and sensitivity (checks by name), and the evaluator's."""
        checks = []
        for name, check in sorted(self.checks.items()):
            if not check.cases:
                continue
            sensitivity = None
            if self.ablations and check.first is not None:
                check.swap(check.first)
                if check.waiting is not None:
                    check.contrasts += check.waiting[2] is not check.first_graded
                check.waiting = None
                sensitivity = Sensitivity(tuple((a, check.moved[a]) for a in Ablation),
                                          len(check.cases), check.contrasts)
            checks.append(CheckRuns(name, (), tuple(check.graders.values()),
                                    tuple(check.cases), check.unlabelled, sensitivity))
        return Grading(tuple(checks), tuple(self.evaluator), self.runs - len(self.evaluator))
