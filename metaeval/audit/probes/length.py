"""The length probe (pointwise): does the judge score a response higher when it is
padded with text that adds nothing? Each padded response against its original,
by the two-sided exact sign test, by padding style and level
(``bias_probes.length_probe``)."""

from __future__ import annotations

from tabulate import tabulate

from metaeval.audit.bias_probes import LengthResult, ProbeStatus, length_probe
from metaeval.audit.probes.unit import NOT_RUN, ProbeResult, ProbeRun, ProbeUnit, ProbeView
from metaeval.contract import JsonObject
from metaeval.decimals import rounded
from metaeval.judges.base import Mode

__all__ = ["UNIT"]


def _result(result: ProbeResult) -> LengthResult:
    assert isinstance(result, LengthResult)
    return result


def _run(on: ProbeRun) -> ProbeResult:
    return length_probe(on.items.length, on.table, alpha=on.bars.alpha)


def _group(r: LengthResult) -> JsonObject:
    return {"status": r.status.value, "probes": len(r.shifts), "up": r.up, "down": r.down,
            "same": r.same, "unscored": r.unscored, "p_value": r.p_value, "alpha": r.alpha,
            "mean_extra_chars": rounded(r.mean_extra, 1)}


def _document(result: ProbeResult, view: ProbeView) -> JsonObject:
    r = _result(result)
    return {"status": r.status.value, "headline": r.headline(), "up": r.up, "down": r.down,
            "same": r.same, "unscored": r.unscored, "p_value": r.p_value, "alpha": r.alpha,
            "test": "two-sided exact sign test (McNemar's exact test on pass/fail)",
            "by_style": {name: _group(g) for name, g in r.by_style},
            "by_level": {name: _group(g) for name, g in r.by_level},
            "items": [{"id": s.id, "line": s.line(), "shift": s.shift,
                       "extra_chars": s.extra_chars} for s in r.shifts]}


def _styles(r: LengthResult) -> list[str]:
    """The style of each length shift: ``file`` for a probe read from a file."""
    by_id = {s.id: "file" for s in r.shifts}
    for _, group in r.by_style:
        for s in group.shifts:
            by_id[s.id] = "generated"
    return [by_id[s.id] for s in r.shifts]


def _groups(r: LengthResult) -> list[str]:
    if not r.by_style:
        return []
    rows = [[f"{what} {name}", len(g.shifts), g.up, g.down, g.same, g.unscored,
             f"{g.mean_extra:.0f}", f"{g.p_value:.3g}", g.status.value]
            for what, groups in (("style", r.by_style), ("level", r.by_level))
            for name, g in groups]
    table = tabulate(rows, headers=["length shift", "probes", "up", "down", "same", "unscored",
                                    "mean extra chars", "sign p", "status"],
                     disable_numparse=True)
    share = r.by_style[0][1].alpha
    return [*("  " + line for line in table.splitlines()),
            f"  each row at alpha {share:.3g} (alpha over {len(r.by_style) + len(r.by_level)} "
            "rows); a row FOUND makes the probe FOUND"]


def _lines(result: ProbeResult, view: ProbeView) -> list[str]:
    ln = _result(result)
    if ln.status is ProbeStatus.NOT_RUN:
        return [f"length bias: {NOT_RUN}"]
    return [f"length bias: {ln.headline()} (down {ln.down}, same {ln.same}, unscored "
            f"{ln.unscored}; sign test p={ln.p_value:.3g}, alpha {ln.alpha:g})",
            *_groups(ln),
            *(f"  {s.line()}" for s, style in zip(ln.shifts, _styles(ln), strict=False)
              if style == "file")]


UNIT = ProbeUnit("length", "length", Mode.POINTWISE, _run, _document, _lines)
