"""The position probe: does the judge's pick follow the order the pair is shown in?
Each labelled pair judged in both orders; flips counted against a chance flip rate
by the exact binomial test (``bias_probes.position_probe``)."""

from __future__ import annotations

from metaeval.audit.bias_probes import PositionResult, ProbeStatus, position_probe
from metaeval.audit.decided import decide
from metaeval.audit.probes.unit import NOT_RUN, ProbeResult, ProbeRun, ProbeUnit, ProbeView
from metaeval.audit.strength import Strengths
from metaeval.contract import JsonObject, JsonValue
from metaeval.judges.base import Mode

__all__ = ["UNIT", "probe_document", "strength_line"]


def _result(result: ProbeResult) -> PositionResult:
    assert isinstance(result, PositionResult)
    return result


def _run(on: ProbeRun) -> ProbeResult:
    return position_probe(on.items.pairwise, decide(on.table.decisions), alpha=on.bars.alpha,
                          chance=on.bars.chance_flip)


def _strength(s: Strengths | None) -> JsonValue:
    """Stated strengths (A>>B strong, A>B slight); null when no verdict states one."""
    if s is None:
        return None
    return {"orders": {o.order.value: {"strong": o.strong, "slight": o.slight,
                                       "unstated": o.unstated} for o in s.orders},
            "flips": {"strong": s.strong_flips, "slight": s.slight_flips,
                      "unstated": s.unstated_flips}}


def strength_line(s: Strengths) -> str:
    orders = "; ".join(f"{o.order.value} strong {o.strong}, slight {o.slight}"
                       + (f", unstated {o.unstated}" if o.unstated else "") for o in s.orders)
    return (f"  preference strength: {orders}; position flips: strong {s.strong_flips}, "
            f"slight {s.slight_flips}" + (f", unstated {s.unstated_flips}"
                                          if s.unstated_flips else ""))


def probe_document(r: PositionResult) -> JsonObject:
    """The probe's figures (also each category's, with ``--by category``)."""
    return {"status": r.status.value, "headline": r.headline(), "pairs": r.pairs,
            "consistent": r.consistent, "first_preferred": r.first_preferred,
            "second_preferred": r.second_preferred, "unscored": r.unscored,
            "flips": r.flips, "p_value": r.p_value, "alpha": r.alpha, "chance": r.chance,
            "one_order": r.one_order, "reason": r.reason,
            "test": "exact binomial, flips >= observed given the chance flip rate"}


def _document(result: ProbeResult, view: ProbeView) -> JsonObject:
    return {**probe_document(_result(result)), "strength": _strength(view.strength)}


def _lines(result: ProbeResult, view: ProbeView) -> list[str]:
    pos = _result(result)
    out = [(f"position bias: not run ({pos.reason})" if pos.reason else
            f"position bias: {NOT_RUN}") if pos.status is ProbeStatus.NOT_RUN else
           f"position bias: {pos.headline()} (consistent {pos.consistent}, "
           f"first-preferred {pos.first_preferred}, second-preferred "
           f"{pos.second_preferred}, unscored {pos.unscored}; p={pos.p_value:.3g} "
           f"vs chance {pos.chance:g}, alpha {pos.alpha:g})"
           + (f"; {pos.one_order} pair(s) recorded in one order only, left out"
              if pos.one_order else "")]
    if view.strength is not None:
        out.append(strength_line(view.strength))
    return out


def _why(result: ProbeResult) -> str:
    return _result(result).reason or "no position probe items with verdicts"


UNIT = ProbeUnit("position", "position", Mode.PAIRWISE, _run, _document, _lines,
                 on_probes=False, why_not_run=_why)
