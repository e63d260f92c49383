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

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

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
    labelled: Counter[str] = Counter(run for labels in by_annotator.values() for run in labels)
    runs = sorted(labelled)
    shared = sum(n >= 2 for n in labelled.values())
    if len(by_annotator) < 2:
        none = Value(0.0, ONE_ANNOTATOR)
        return Agreement(check, len(by_annotator), len(runs), 0, none, none, 0)
    kappas = pair_kappas(by_annotator)
    return Agreement(check, len(by_annotator), len(runs), shared,
                     rater_alpha(by_annotator, runs, Level.NOMINAL, what="run"),
                     mean_kappa(kappas, "annotator pair"), len(measured(kappas)))


def pair_kappas(by_annotator: Mapping[str, Mapping[str, Label | None]]) -> list[Value]:
    """Cohen's kappa of every pair of annotators sharing two or more runs, one value a
    pair (in no particular order).

    A pair's kappa depends only on its table of label against label over the runs
    it shares, so the tables of all pairs are counted first (each run adds one to
    the cell of every pair that labelled it: in numpy, never a Python step per
    pair), and scikit-learn is asked once per distinct table. Asking it per pair
    took 2 ms a pair: 800 annotators, 320,000 pairs, over ten minutes.
    """
    names = sorted(by_annotator)
    index = {name: n for n, name in enumerate(names)}
    classes = sorted({str(v) for labels in by_annotator.values() for v in labels.values()})
    code = {name: n for n, name in enumerate(classes)}
    per_run: dict[str, list[tuple[int, int]]] = {}
    for name, labels in by_annotator.items():
        for run, label in labels.items():
            per_run.setdefault(run, []).append((index[name], code[str(label)]))
    k = len(classes)
    n = len(names)
    # tables[i * n + j, first * k + second]: runs annotator i labelled ``first`` and j
    # ``second`` (i < j). At most 1,000 annotators (the loaders' bound) and a few labels.
    tables = np.zeros((n * n, k * k), dtype=np.int64)
    for labelled in per_run.values():
        if len(labelled) < 2:
            continue
        who, what = np.array(sorted(labelled), dtype=np.int64).T
        i, j = np.triu_indices(len(who), 1)
        np.add.at(tables, (who[i] * n + who[j], what[i] * k + what[j]), 1)
    # One shared run has no kappa (a single label): judge-audit's annotators leave
    # such pairs out the same way, and so the fallbacks below.
    tables = tables[tables.sum(axis=1) >= 2]
    distinct, times = np.unique(tables, axis=0, return_counts=True)
    kappas: list[Value] = []
    for table, count in zip(distinct, times, strict=True):
        first: list[str] = []
        second: list[str] = []
        for cell, runs in enumerate(table.tolist()):
            first += [classes[cell // k]] * runs
            second += [classes[cell % k]] * runs
        kappas += [nominal_kappa(first, second)] * int(count)
    return kappas


def annotator_agreement(annotations: Iterable[Annotation]) -> tuple[Agreement, ...]:
    """One ``Agreement`` per check the rows label, ``*`` (the overall verdict) first."""
    per_check: dict[str, list[Annotation]] = {}
    for a in annotations:
        per_check.setdefault(a.check, []).append(a)
    order = sorted(per_check, key=lambda c: (c != "*", c))
    return tuple(agreement(check, per_check[check]) for check in order)
