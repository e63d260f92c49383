"""How well the annotators of a meta-eval labels file agree with each other, per check.

Per check (and ``*``, the overall verdict): Krippendorff's alpha for nominal
data (the ``krippendorff`` package), which uses every run that two or more
annotators labelled whatever their number, and the mean of Cohen's kappa
(scikit-learn, through ``metrics.nominal_kappa``) over the pairs of annotators
that share a run. A grader is read against this, not against 1.0. Each value
follows ``metrics``' rule: never ``nan``; a documented 0.0 with a reason when it
is undefined (one annotator, no run labelled twice, one label only). This module
reads no file and renders nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import krippendorff
import numpy as np

from metaeval.audit.metrics import Value, nominal_kappa
from metaeval.labels import Annotation

ONE_ANNOTATOR = "one annotator: no agreement to measure"
NO_SHARED_RUN = "no run labelled by two annotators"


@dataclass(frozen=True, slots=True)
class Agreement:
    """The annotators of one check: how many, on how many runs, and how much they agree.

    ``shared`` counts runs two or more of them labelled; ``pairs`` the annotator
    pairs that share a run (the mean kappa's denominator).
    """

    check: str
    annotators: int
    runs: int
    shared: int
    alpha: Value
    mean_kappa: Value
    pairs: int


def _alpha(matrix: list[list[float]], labels: set[str], shared: int) -> Value:
    if shared == 0:
        return Value(0.0, NO_SHARED_RUN)
    if len(labels) == 1:
        return Value(0.0, f"one label only: every label is {next(iter(labels))!r}")
    value = float(krippendorff.alpha(reliability_data=np.array(matrix, dtype=float),
                                     level_of_measurement="nominal"))
    return Value(value)


def agreement(check: str, rows: Iterable[Annotation]) -> Agreement:
    """The agreement among the annotators of ``rows`` (all of one check)."""
    by_annotator: dict[str, dict[str, str]] = {}
    for a in rows:
        by_annotator.setdefault(a.annotator, {})[a.run_id] = a.label.value
    return nominal_agreement(check, by_annotator)


def nominal_agreement(check: str, by_annotator: Mapping[str, Mapping[str, str]]) -> Agreement:
    """The agreement among annotators whose labels are names (pass/fail, a/b/tie):
    ``by_annotator`` is annotator -> what they labelled (a run, an item) -> label."""
    runs = sorted({run for labels in by_annotator.values() for run in labels})
    counts = {run: sum(run in labels for labels in by_annotator.values()) for run in runs}
    shared = sum(n >= 2 for n in counts.values())
    names = sorted(by_annotator)
    if len(names) < 2:
        none = Value(0.0, ONE_ANNOTATOR)
        return Agreement(check, len(names), len(runs), 0, none, none, 0)
    labels = {label for given in by_annotator.values() for label in given.values()}
    code = {label: float(n) for n, label in enumerate(sorted(labels))}
    matrix = [[code[by_annotator[name][run]] if run in by_annotator[name] else np.nan
               for run in runs] for name in names]
    kappas = []
    for first, second in itertools.combinations(names, 2):
        both = sorted(set(by_annotator[first]) & set(by_annotator[second]))
        # One shared run has no kappa (a single label): averaging its documented 0.0
        # in would pull the ceiling down whenever an occasional third annotator
        # breaks a tie. judge-audit's annotators leave such pairs out the same way.
        if len(both) >= 2:
            kappas.append(nominal_kappa([by_annotator[first][r] for r in both],
                                        [by_annotator[second][r] for r in both]))
    if not kappas:
        mean = Value(0.0, NO_SHARED_RUN)
    else:
        reasons = sorted({k.reason for k in kappas if k.reason})
        mean = Value(sum(k.value for k in kappas) / len(kappas),
                     f"{len(reasons)} kind(s) of fallback among the pairs: {'; '.join(reasons)}"
                     if reasons else "")
    return Agreement(check, len(names), len(runs), shared, _alpha(matrix, labels, shared),
                     mean, len(kappas))


def annotator_agreement(annotations: Iterable[Annotation]) -> tuple[Agreement, ...]:
    """One ``Agreement`` per check the rows label, ``*`` (the overall verdict) first."""
    per_check: dict[str, list[Annotation]] = {}
    for a in annotations:
        per_check.setdefault(a.check, []).append(a)
    order = sorted(per_check, key=lambda c: (c != "*", c))
    return tuple(agreement(check, per_check[check]) for check in order)
