"""The comparison view's figures: where the annotators of a labels file disagree, and
how far they agree (Krippendorff's alpha, the mean pairwise Cohen's kappa).

Per check of the runs (``*`` the overall verdict) and per kind of judge item
(pairwise, pointwise), through ``metaeval.audit.label_agreement``: alpha from the
``krippendorff`` package (nominal), kappa from scikit-learn, each undefined value
0.0 with its reason. ``unsure`` is no label and takes no part. Nothing here
reads or writes a file.
"""

from __future__ import annotations

from collections.abc import Iterable

from metaeval.audit.label_agreement import Agreement, nominal_agreement
from metaeval.contract import JsonObject, JsonValue
from metaeval.label.store import ITEM, Key, key_of

UNSURE = "unsure"


def _figures(a: Agreement) -> JsonObject:
    return {"group": a.check, "annotators": a.annotators, "labelled": a.runs,
            "shared": a.shared, "alpha": round(a.alpha.value, 4),
            "alpha_reason": a.alpha.reason, "mean_kappa": round(a.mean_kappa.value, 4),
            "kappa_reason": a.mean_kappa.reason, "pairs": a.pairs}


def comparison(rows: Iterable[JsonObject], kinds: dict[str, str]) -> JsonObject:
    """The figures per group and the disagreements. ``kinds``: item id -> ``pairwise``
    or ``pointwise`` (the group an item's labels are measured in)."""
    groups: dict[str, dict[str, dict[str, str]]] = {}
    given: dict[tuple[str, str, str], dict[str, str]] = {}
    for row in rows:
        key: Key = key_of(row)
        label = str(row["label"])
        if label == UNSURE:
            continue
        group = kinds.get(key.target, "items") if key.kind == ITEM else key.check
        groups.setdefault(group, {}).setdefault(key.annotator, {})[key.target] = label
        given.setdefault((key.kind, key.target, key.check), {})[key.annotator] = label
    order = sorted(groups, key=lambda g: (g in ("pairwise", "pointwise"), g != "*", g))
    figures: list[JsonValue] = [_figures(nominal_agreement(g, groups[g])) for g in order]
    disagreements: list[JsonValue] = [
        {"kind": kind, "id": target, "check": check, "labels": dict(sorted(labels.items()))}
        for (kind, target, check), labels in given.items() if len(set(labels.values())) > 1]
    annotators = sorted({a for g in groups.values() for a in g})
    return {"annotators": list(annotators), "figures": figures,
            "disagreements": disagreements}
