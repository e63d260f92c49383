"""The pairwise length and pairwise injection probes: is the worse response of a
labelled pair chosen more often when it is padded (or carries a payload) than
when the better one is padded (or carries a benign suffix)? Exact McNemar on
pair-orders (``pair_probes.pair_flip_probe``). Two units that differ only in
what they change, so they share this module."""

from __future__ import annotations

from tabulate import tabulate

from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.pair_probes import PairFlipResult, pair_flip_probe
from metaeval.audit.probes.unit import (
    NOT_RUN,
    ProbeResult,
    ProbeRun,
    ProbeUnit,
    ProbeView,
    Required,
)
from metaeval.contract import JsonObject
from metaeval.judges.base import Mode

__all__ = ["INJECTION", "LENGTH"]


def _result(result: ProbeResult) -> PairFlipResult:
    assert isinstance(result, PairFlipResult)
    return result


def _run_length(on: ProbeRun) -> ProbeResult:
    return pair_flip_probe(on.items.pair_length, on.table, "length", alpha=on.bars.alpha)


def _run_injection(on: ProbeRun) -> ProbeResult:
    return pair_flip_probe(on.items.pair_injection, on.table, "injection", alpha=on.bars.alpha)


def _flips(r: PairFlipResult, kinds: bool = True) -> JsonObject:
    document: JsonObject = {
        "status": r.status.value, "headline": r.headline(), "pairs": r.pairs,
        "units": r.units, "probe_worse": r.probe_worse, "control_worse": r.control_worse,
        "only_probe": r.only_probe, "only_control": r.only_control, "unscored": r.unscored,
        "p_value": r.p_value, "alpha": r.alpha,
        "test": "exact McNemar on pair-orders: the worse response chosen with the change "
                "against the control"}
    if kinds and r.what == "injection":
        document["by_kind"] = {k: _flips(g, False) for k, g in r.by_kind}
    return document


def _document(result: ProbeResult, view: ProbeView) -> JsonObject:
    return _flips(_result(result))


def _kinds(r: PairFlipResult) -> list[str]:
    if not r.by_kind:
        return []
    rows = [[k, g.scored, g.probe_worse, g.control_worse, g.only_probe, g.only_control,
             f"{g.p_value:.3g}", g.status.value] for k, g in r.by_kind]
    table = tabulate(rows, headers=["payload kind", "pair-orders", "worse chosen",
                                    "control", "only payload", "only control", "McNemar p",
                                    "status"], disable_numparse=True)
    return [*("  " + line for line in table.splitlines()),
            f"  each kind at alpha {r.by_kind[0][1].alpha:.3g} (alpha over {len(r.by_kind)} "
            "kinds); a kind FOUND makes the probe FOUND"]


def _lines(name: str, result: ProbeResult, view: ProbeView) -> list[str]:
    r = _result(result)
    if r.status is ProbeStatus.NOT_RUN and (view.plan_source is None
                                            or not view.pairwise_measured):
        return []
    hint = NOT_RUN
    if view.plan_source == "files" and not r.pairs:
        hint = (f"not run (no {name} probe in the item files; " + (
            "--probes generated or both makes them from the labelled pairs)"
            if view.live else "write them with --write-probes and "
            "record the judge's verdicts on them)"))
    return [f"{name}: {hint}" if r.status is ProbeStatus.NOT_RUN else
            f"{name}: {r.headline()} (discordant {r.only_probe} vs {r.only_control}, "
            f"unscored {r.unscored}; McNemar p={r.p_value:.3g}, alpha {r.alpha:g})",
            *_kinds(r)]


def _length_lines(result: ProbeResult, view: ProbeView) -> list[str]:
    return _lines("pairwise length", result, view)


def _injection_lines(result: ProbeResult, view: ProbeView) -> list[str]:
    return _lines("pairwise injection", result, view)


LENGTH = ProbeUnit("pairwise length", "pairwise_length", Mode.PAIRWISE, _run_length,
                   _document, _length_lines, required=Required.GENERATED)
INJECTION = ProbeUnit("pairwise injection", "pairwise_injection", Mode.PAIRWISE,
                      _run_injection, _document, _injection_lines,
                      required=Required.GENERATED)
