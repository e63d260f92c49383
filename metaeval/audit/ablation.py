"""The ablations the dynamic tautology detector grades a run again under, and what
they moved.

An ``Ablation`` takes one part of what the agent did away from a run
(``ablate``); a ``Sensitivity`` counts, per ablation, the runs whose verdict it
moved. Both are values: ``grading.CheckRuns`` carries a check's sensitivity,
``stream`` counts it as the runs are read, and ``tautology`` reads it. Apart
from ``tautology`` so that ``grading`` can name the type without importing the
detector that imports it. This module never grades a run and never reads a
grader's source.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from metaeval.contract import EvalInput, Message, Trajectory


class Ablation(Enum):
    """One way of taking away what the agent did, to see whether a verdict moves."""

    NO_ANSWER = "no_answer"
    """Every assistant message removed: the run has no final answer."""
    EMPTY_TRAJECTORY = "empty_trajectory"
    """No events at all."""
    FINAL_IS_INITIAL = "final_is_initial"
    """``final_state`` replaced by ``initial_state``: the run changed nothing."""
    SWAPPED_TRAJECTORY = "swapped_trajectory"
    """The trajectory of the next run with the same check (the last run takes the first's)."""


def ablate(x: EvalInput, ablation: Ablation, other: Trajectory) -> EvalInput:
    """``x`` with one part taken away; ``other`` is used by SWAPPED_TRAJECTORY only."""
    if ablation is Ablation.NO_ANSWER:
        events = x.trajectory.events
        keep = [i for i, e in enumerate(events)
                if not (isinstance(e, Message) and e.role == "assistant")]
        return replace(x, trajectory=Trajectory(tuple(events[i] for i in keep),
                                                tuple(x.trajectory.at(i) for i in keep)))
    if ablation is Ablation.EMPTY_TRAJECTORY:
        return replace(x, trajectory=Trajectory())
    if ablation is Ablation.FINAL_IS_INITIAL:
        return replace(x, final_state=x.initial_state)
    return replace(x, trajectory=other)


@dataclass(frozen=True, slots=True)
class Sensitivity:
    """How many graded runs each ablation moved (a verdict that changed).

    ``contrasts``: swaps that gave a run the trajectory of a run on which the
    check's verdict differs; with none, an unmoved verdict proves nothing.
    """

    moved: tuple[tuple[Ablation, int], ...]
    runs: int
    contrasts: int = 0

    @property
    def unmoved(self) -> bool:
        """No ablation moved any verdict on any run."""
        return self.runs > 0 and all(n == 0 for _, n in self.moved)

    @property
    def tautology(self) -> bool:
        """Unmoved although some run got a trajectory that the check decides otherwise
        on its own run: the verdict is shown not to follow the trajectory."""
        return self.unmoved and self.contrasts > 0
