"""How well the annotators of a meta-eval labels file agree with each other, per check.

Per check (and ``*``, the overall verdict): Krippendorff's alpha for nominal
data (the ``krippendorff`` package), which uses every run that two or more
annotators labelled whatever their number, and the mean of Cohen's kappa
(scikit-learn, through ``metrics.nominal_kappa``) over the pairs of annotators
that share two or more runs, both through ``rater_agreement`` as judge-audit's
annotators are. A grader is read against this, not against 1.0. Each value
follows ``metrics``' rule: never ``nan``; a documented 0.0 with a reason when it
is undefined (one annotator, no run labelled twice, one label only). This module
reads no file and renders nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from metaeval.audit.metrics import Value, nominal_kappa
from metaeval.audit.rater_agreement import Level, mean_kappa, measured, rater_alpha
from metaeval.loaders.judge_labels import Label
from metaeval.loaders.labels_files import Annotation

ONE_ANNOTATOR = "one annotator: no agreement to measure"


@dataclass(frozen=True, slots=True)
class Agreement:
    """The annotators of one check: how many, on how many runs, and how much they agree.

    ``shared`` counts runs two or more of them labelled; ``pairs`` the annotator
    pairs with a measured kappa (the mean kappa's denominator).
    """

    check: str
    annotators: int
    runs: int
    shared: int
    alpha: Value
    mean_kappa: Value
    pairs: int


def agreement(check: str, rows: Iterable[Annotation]) -> Agreement:
    """The agreement among the annotators of ``rows`` (all of one check)."""
    by_annotator: dict[str, dict[str, Label | None]] = {}
    for a in rows:
        by_annotator.setdefault(a.annotator, {})[a.run_id] = a.label.value
    return nominal_agreement(check, by_annotator)


def nominal_agreement(check: str,
                      by_annotator: Mapping[str, Mapping[str, Label | None]]) -> Agreement:
    """The agreement among annotators whose labels are names (pass/fail, a/b/tie):
    ``by_annotator`` is annotator -> what they labelled (a run, an item) -> label."""
    runs = sorted({run for labels in by_annotator.values() for run in labels})
    shared = sum(sum(run in labels for labels in by_annotator.values()) >= 2 for run in runs)
    if len(by_annotator) < 2:
        none = Value(0.0, ONE_ANNOTATOR)
        return Agreement(check, len(by_annotator), len(runs), 0, none, none, 0)
    kappas = []
    for first, second in itertools.combinations(sorted(by_annotator), 2):
        x, y = by_annotator[first], by_annotator[second]
        both = sorted(set(x) & set(y))
        # One shared run has no kappa (a single label): judge-audit's annotators
        # leave such pairs out the same way, and so the fallbacks below.
        if len(both) >= 2:
            kappas.append(nominal_kappa([str(x[r]) for r in both], [str(y[r]) for r in both]))
    return Agreement(check, len(by_annotator), len(runs), shared,
                     rater_alpha(by_annotator, runs, Level.NOMINAL, what="run"),
                     mean_kappa(kappas, "annotator pair"), len(measured(kappas)))


def annotator_agreement(annotations: Iterable[Annotation]) -> tuple[Agreement, ...]:
    """One ``Agreement`` per check the rows label, ``*`` (the overall verdict) first."""
    per_check: dict[str, list[Annotation]] = {}
    for a in annotations:
        per_check.setdefault(a.check, []).append(a)
    order = sorted(per_check, key=lambda c: (c != "*", c))
    return tuple(agreement(check, per_check[check]) for check in order)
