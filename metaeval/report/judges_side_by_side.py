"""Render several judges audited at once (``judge_audit_many``) side by side: one
row per judge (or panel) and kind of item, with agreement, kappa, the human
ceiling, the alternative annotator test, the position and length probes, the
unscored share and the cost; then each one's verdict and reasons.

Rendering only: every figure is read from the judge's own ``JudgeAudit`` (the one a
single audit of that judge gives) and ``JudgeCost``; this module computes nothing
but a share from the counts the audit holds. The JSON carries each judge's whole
audit document too, so a pipeline reads any figure the table leaves out.
"""

from __future__ import annotations

import json

from tabulate import tabulate

from metaeval.audit.alt_test import PanelReport
from metaeval.audit.annotators import Agreement
from metaeval.audit.cost import JudgeCost
from metaeval.audit.judge_agreement import computed
from metaeval.audit.judge_decision import JudgeAudit
from metaeval.audit.metrics import Value
from metaeval.commands.judge_audit_many import JudgeRow, JudgesResult
from metaeval.contract import JsonObject, JsonValue
from metaeval.judges.base import Mode
from metaeval.report.annotators_render import name
from metaeval.report.judge_audit_render import audit_document

__all__ = ["judges_document", "judges_json", "judges_text", "row_figures"]

KINDS = ("pairwise", "pointwise")


def _v(v: Value | None) -> float | None:
    return round(v.value, 4) if v is not None and computed(v) else None


def _share(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _kind_figures(a: JudgeAudit, kind: str) -> tuple[int, float | None, float | None] | None:
    """n, agreement (the share of labelled items the judge gave people's label; a
    pair in order ab, else the first order recorded) and kappa, or None when the
    audit measured no agreement on this kind."""
    if kind == "pairwise":
        if a.pairwise is None or not a.pairwise.orders:
            return None
        order = next((o for o in a.pairwise.orders if o.order.value == "ab"),
                     a.pairwise.orders[0])
        return order.n, _share(order.accuracy), _v(order.kappa)
    if a.pointwise is None:
        return None
    c = a.pointwise.confusion
    return c.n, _share((c.tp + c.tn) / c.n if c.n else None), _v(a.pointwise.kappa)


def _panel_report(a: JudgeAudit, kind: str) -> PanelReport | None:
    return next((r for r in a.annotators if r.kind == kind), None)


def row_figures(row: JudgeRow, kind: str | None) -> JsonObject | None:
    """One row's figures on ``kind`` (``pairwise``/``pointwise``) as JSON values, or
    None when the judge's audit measured no agreement on it. ``kind`` None: the row
    of a judge with no agreement measured at all (no labelled item), its probes,
    unscored share and cost still shown."""
    a = row.audit
    figures = _kind_figures(a, kind) if kind is not None else (None, None, None)
    if figures is None:
        return None
    n, agreement, kappa = figures
    report = None if kind is None else _panel_report(a, kind)
    statuses = a.probes.statuses()
    pairwise = kind == "pairwise" or (kind is None and Mode.PAIRWISE in a.modes)
    length = statuses.get("pairwise length" if pairwise else "length")
    cost = row.cost
    per_point = cost.per_point(agreement)
    return {
        "judge": row.name, "members": list(row.members), "kind": kind,
        "verdict": a.verdict.value, "n": n, "agreement": agreement, "kappa": kappa,
        "human_ceiling": None if report is None else {
            "krippendorff_alpha": _v(report.agreement.alpha),
            "mean_pairwise_kappa": _v(report.agreement.kappa)},
        "judge_with_annotators": None if report is None else {
            "krippendorff_alpha_with_judge": _v(report.agreement.judge_alpha),
            "mean_kappa": _v(report.agreement.judge_kappa)},
        "alt_test": None if report is None else {
            "ran": report.alt.ran, "passed": report.alt.passed if report.alt.ran else None,
            "winning_rate": _share(report.alt.omega),
            "advantage_probability": _share(report.alt.rho),
            "epsilon": report.alt.epsilon, "reason": report.alt.reason},
        # the position probe is of pairs: a pointwise row has none
        "position": statuses["position"].value if pairwise else None,
        "length": None if length is None else length.value,
        "unscored": a.unscored, "verdicts": a.labelled_verdicts,
        "unscored_share": _share(a.unscored / a.labelled_verdicts
                                 if a.labelled_verdicts else None),
        "cost": _cost_document(cost),
        "cost_per_point": None if per_point is None else round(per_point, 8),
    }


def _cost_document(c: JudgeCost) -> JsonObject:
    def r(x: float | None, places: int) -> JsonValue:
        return None if x is None else round(x, places)
    return {"per_item": r(c.per_item, 8), "input_tokens_per_item": r(c.input_per_item, 2),
            "output_tokens_per_item": r(c.output_per_item, 2), "price_from": c.price_from,
            "verdicts": c.verdicts, "verdicts_with_usage": c.with_usage, "items": c.items,
            "note": c.note or None}


def _rows(result: JudgesResult) -> list[JsonObject]:
    out: list[JsonObject] = []
    for row in result.rows:
        kinds = [f for f in (row_figures(row, k) for k in KINDS) if f is not None]
        none = row_figures(row, None)
        out.extend(kinds or ([] if none is None else [none]))
    return out


def judges_document(result: JudgesResult) -> JsonObject:
    deciding = result.deciding
    return {
        "judges": list[JsonValue](_rows(result)),
        "gate": result.gate,
        "exit_by": deciding.name,
        "exit_code": int(result.code),
        "audits": {row.name: audit_document(row.audit) for row in result.rows},
        "errors": [str(e) for e in result.errors],
    }


def judges_json(result: JudgesResult) -> str:
    return json.dumps(judges_document(result), indent=2)


def _f(x: object, places: int = 2) -> str:
    return "—" if x is None else f"{x:.{places}f}" if isinstance(x, float) else str(x)


PER_TABLE = 1000
"""The table shows costs per 1,000 items (a cost per item is a small fraction of a cent);
the JSON keeps them per item."""


def _money(x: object) -> str:
    return "—" if not isinstance(x, int | float) else f"{x * PER_TABLE:.4g}"


def _alt_cell(alt: object) -> str:
    if not isinstance(alt, dict):
        return "—"
    if not alt.get("ran"):
        return "not run"
    said = "passed" if alt.get("passed") else "FAILED"
    return f"{said} {_f(alt.get('winning_rate'))} / {_f(alt.get('advantage_probability'))}"


def _with_people(report: object) -> str:
    if not isinstance(report, dict):
        return "—"
    return f"{_f(report.get('krippendorff_alpha_with_judge'))} / {_f(report.get('mean_kappa'))}"


def _cost_cells(doc: JsonObject) -> list[str]:
    cost = doc.get("cost")
    assert isinstance(cost, dict)
    tokens = cost.get("input_tokens_per_item")
    if tokens is None and cost.get("per_item") is None:
        return [str(cost.get("note") or "no usage recorded"), "—", "—"]
    if tokens is None:  # a price the log recorded per call, and no tokens
        return ["not recorded", _money(cost.get("per_item")), _money(doc.get("cost_per_point"))]
    out = f"{_f(tokens, 0)} + {_f(cost.get('output_tokens_per_item'), 0)}"
    return [out, _money(cost.get("per_item")), _money(doc.get("cost_per_point"))]


def judges_text(result: JudgesResult) -> str:
    docs = _rows(result)
    lines: list[str] = []
    ceilings: dict[str, Agreement] = {}
    for row in result.rows:
        for report in row.audit.annotators:
            ceilings.setdefault(report.kind, report.agreement)
    members = sum(1 for r in result.rows if not r.members)
    panels = len(result.rows) - members
    lines.append(f"judges side by side: {members} judge(s)"
                 + (f", {panels} panel(s)" if panels else "")
                 + "; each judge's figures are its own audit's (--format json: every audit)")
    for kind, agreement in ceilings.items():
        lines.append(f"human ceiling ({kind}): {len(agreement.annotators)} annotators with each "
                     f"other, Krippendorff's alpha {_f(_v(agreement.alpha))}, mean pairwise "
                     f"kappa {_f(_v(agreement.kappa))}")
    kinds = {d.get("kind") for d in docs}
    one_kind = len(kinds) == 1  # the kind goes in the header line, not a column
    table = [[name(str(d["judge"])), *([] if one_kind else [d.get("kind") or "—"]),
              d["verdict"], _f(d.get("n")), _f(d.get("agreement")), _f(d.get("kappa")),
              _with_people(d.get("judge_with_annotators")),
              _alt_cell(d.get("alt_test")), d.get("position") or "—", d.get("length") or "—",
              _f(d.get("unscored_share")), *_cost_cells(d)] for d in docs]
    lines.append("")
    if one_kind:
        lines.append(f"{next(iter(kinds)) or 'no labelled'} items:")
    lines.append(tabulate(table, headers=[
        "judge", *([] if one_kind else ["kind"]), "verdict", "n", "agree", "kappa",
        "with people a/k", "alt test w/rho", "position", "length", "unscored",
        "tokens/item in+out", "cost/1k items", "per point"], disable_numparse=True))
    lines.append("agree: share of labelled items given people's label (pairs: order ab); "
                 "with people a/k: Krippendorff's alpha with the judge")
    lines.append("as one more annotator / its mean kappa with each; alt test w/rho: winning "
                 "rate / advantage probability; per point: cost/1k items / agree in points")
    for row in result.rows:
        note = row.cost.note
        if note and (row.cost.per_item is not None or row.cost.input_per_item is not None):
            lines.append(f"{name(row.name)}: cost from {note}")  # the table shows a figure
    for row in result.rows:
        if row.members:
            lines.append(f"{name(row.name)}: majority of {', '.join(map(name, row.members))} "
                         "(mean of scores; a tie for the most is unscored)")
    lines.append("")
    for row in result.rows:
        lines.append(f"{name(row.name)}: {row.audit.verdict.value}")
        lines.extend(f"  - {reason}" for reason in row.audit.reasons)
    deciding = result.deciding
    how = (f"--gate {name(deciding.name)}" if result.gate is not None
           else f"the worst verdict, {name(deciding.name)}'s")
    lines.append(f"exit {int(result.code)}: by {how}"
                 + (" (bad input lines were left out)" if result.errors else ""))
    if result.errors:
        lines.append("errors:")
        lines.extend(f"  {e}" for e in result.errors)
    return "\n".join(lines)
