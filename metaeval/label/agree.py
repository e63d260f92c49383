"""The comparison view's figures: where the annotators of a labels file disagree, and
how far they agree (Krippendorff's alpha, the mean pairwise Cohen's kappa); how far
each annotator has got; and each annotator's own position bias on the pairs.

Per check of the runs (``*`` the overall verdict) and per kind of judge item
(pairwise, pointwise), through ``metaeval.audit.label_agreement``: alpha from the
``krippendorff`` package (nominal), kappa from scikit-learn, each undefined value
0.0 with its reason. ``unsure`` is no label and takes no part in the figures; in
the progress it counts as given, as on the annotator's own page (an entry is
labelled when every check of it has a row). The position bias is
``judge-audit --labels``' (``metaeval.audit.annotator_position``), on the pairs
of this session whose order shown was recorded. Nothing here reads or writes a
file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from metaeval.audit.annotator_position import (
    ORDERS,
    PICKS,
    AnnotatorPosition,
    annotator_positions,
)
from metaeval.audit.bars import ALPHA
from metaeval.audit.label_agreement import Agreement, nominal_agreement
from metaeval.contract import JsonObject, JsonValue
from metaeval.label.store import ITEM, Key, key_of

UNSURE = "unsure"


def _figures(a: Agreement) -> JsonObject:
    return {"group": a.check, "annotators": a.annotators, "labelled": a.runs,
            "shared": a.shared, "alpha": round(a.alpha.value, 4),
            "alpha_reason": a.alpha.reason, "mean_kappa": round(a.mean_kappa.value, 4),
            "kappa_reason": a.mean_kappa.reason, "pairs": a.pairs}


def _position(p: AnnotatorPosition) -> JsonObject:
    return {"annotator": p.annotator, "status": p.status.value, "first": p.first,
            "second": p.second, "ties": p.ties, "shown_ab": p.shown_ab,
            "shown_ba": p.shown_ba, "p_value": p.p_value, "alpha": p.alpha,
            "reason": p.reason}


def _progress(keys: Iterable[Key], targets: Mapping[tuple[str, str], tuple[str, ...]],
              annotator: str) -> list[JsonValue]:
    """Per annotator (``annotator`` first, then by name): the entries of ``targets``
    with a row for every check, of all of them."""
    given: dict[str, set[tuple[str, str, str]]] = {annotator: set()} if annotator else {}
    for key in keys:
        given.setdefault(key.annotator, set()).add((key.kind, key.target, key.check))
    order = sorted(given, key=lambda a: (a != annotator, a))
    return [{"annotator": a, "total": len(targets),
             "labelled": sum(all((kind, target, c) in given[a] for c in checks)
                             for (kind, target), checks in targets.items())} for a in order]


def comparison(rows: Iterable[JsonObject], kinds: dict[str, str],
               targets: Mapping[tuple[str, str], tuple[str, ...]] | None = None,
               annotator: str = "", alpha: float = ALPHA) -> JsonObject:
    """The figures per group, the disagreements, each annotator's progress and position
    bias. ``kinds``: item id -> ``pairwise`` or ``pointwise`` (the group an item's
    labels are measured in); ``targets``: (``run``/``item``, id) -> its checks, the
    session's entries (none: no progress); ``annotator``: the session's, listed first
    in the progress even before a label."""
    groups: dict[str, dict[str, dict[str, str]]] = {}
    given: dict[tuple[str, str, str], dict[str, str]] = {}
    keys: list[Key] = []
    picks: dict[str, list[tuple[str, str]]] = {}
    for row in rows:
        key: Key = key_of(row)
        keys.append(key)
        label = str(row["label"])
        if label == UNSURE:
            continue
        shown = row.get("shown")
        # A label a pair does not take (the file is data) is no pick: judge-audit names it.
        if (key.kind == ITEM and kinds.get(key.target) == "pairwise" and label in PICKS
                and shown in ORDERS and isinstance(shown, str)):
            picks.setdefault(key.annotator, []).append((label, shown))
        group = kinds.get(key.target, "items") if key.kind == ITEM else key.check
        groups.setdefault(group, {}).setdefault(key.annotator, {})[key.target] = label
        given.setdefault((key.kind, key.target, key.check), {})[key.annotator] = label
    order = sorted(groups, key=lambda g: (g in ("pairwise", "pointwise"), g != "*", g))
    figures: list[JsonValue] = [_figures(nominal_agreement(g, groups[g])) for g in order]
    disagreements: list[JsonValue] = [
        {"kind": kind, "id": target, "check": check, "labels": dict(sorted(labels.items()))}
        for (kind, target, check), labels in given.items() if len(set(labels.values())) > 1]
    annotators = sorted({a for g in groups.values() for a in g})
    positions: list[JsonValue] = [_position(p) for p in annotator_positions(
        dict(sorted(picks.items())), alpha=alpha)]
    return {"annotators": list(annotators), "figures": figures,
            "disagreements": disagreements,
            "progress": _progress(keys, targets or {}, annotator), "positions": positions}
