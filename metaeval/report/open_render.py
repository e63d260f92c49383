"""An inconclusive audit's open decision as JSON: the measures its labels cannot decide,
the further labelled items that would likely decide them, and what ``metaeval label
--next-for`` orders the unlabelled items by. Rendering only."""

from __future__ import annotations

from metaeval.audit.power import MAX_MORE, POWER
from metaeval.audit.undecided import OpenDecision
from metaeval.contract import JsonValue
from metaeval.decimals import rounded


def open_document(decision: OpenDecision | None) -> JsonValue:
    """None when every gated measure lies on one side of its bar."""
    if decision is None:
        return None
    return {
        "more_items": decision.more,
        "power": POWER,
        "most_counted": MAX_MORE,
        "measures": [{"measure": u.measure, "value": rounded(u.value),
                      "low": rounded(u.interval.low), "high": rounded(u.interval.high),
                      "level": u.interval.level, "bar": u.bar, "n": u.n,
                      "more_items": u.more} for u in decision.measures],
        "tests": [{"test": f"alternative annotator test ({t.kind})", "reason": t.reason,
                   "more_items": t.more} for t in decision.tests],
        "labels": {label: count for label, count in decision.labels},
        "unlabelled": {item: list(verdicts) for item, verdicts in decision.unlabelled},
    }
