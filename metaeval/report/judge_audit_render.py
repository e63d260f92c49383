"""Render a judge audit: a table for people and JSON with stable keys for machines.

Rendering only: every number was computed before it got here.
"""

from __future__ import annotations

import json

from tabulate import tabulate

from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.breakdown import CategoryFigures
from metaeval.audit.collect import Calls
from metaeval.audit.controls import Controls
from metaeval.audit.judge_agreement import (
    AGGREGATE,
    PairAgreement,
    PointAgreement,
    computed,
)
from metaeval.audit.judge_decision import AuditSource, JudgeAudit
from metaeval.audit.measured_set import MeasuredSet
from metaeval.audit.metrics import Interval, Value
from metaeval.audit.probe_budget import ProbePlan
from metaeval.audit.probes import PROBES, ProbeView
from metaeval.audit.probes.position import probe_document
from metaeval.contract import JsonObject, JsonValue
from metaeval.decimals import fixed, rounded
from metaeval.judges.base import Mode
from metaeval.report.annotators_render import (
    annotators_document,
    annotators_lines,
    categorical_document,
    categorical_lines,
    position_document,
    position_lines,
)
from metaeval.report.annotators_render import name as printable
from metaeval.report.escape import one_line
from metaeval.report.open_render import open_document


def probe_view(a: JudgeAudit) -> ProbeView:
    """What the probes' rows need from the audit besides their own results."""
    return ProbeView(a.strength, None if a.probe_plan is None else a.probe_plan.source.value,
                     a.pairwise is not None, a.source is AuditSource.LIVE)
KEYS = ("judge", "agreement", "self_consistency", *(u.key for u in PROBES.values()), "probes",
        "controls", "calls", "verdict", "reasons", "inconclusive", "errors", "annotators",
        "annotator_position", "by_category", "set")
"""The JSON document's top-level keys, in order: one per registered probe."""


def _value(v: Value) -> JsonObject:
    """A figure that could not be computed is null with the reason, never 0."""
    return {"value": rounded(v.value) if computed(v) else None, "reason": v.reason}


def _interval(i: Interval) -> JsonObject:
    return {"low": rounded(i.low), "high": rounded(i.high), "level": i.level,
            "reason": i.reason}


def _point(p: PointAgreement | None) -> JsonValue:
    if p is None:
        return None
    c = p.confusion
    return {"n": c.n, "tp": c.tp, "fn": c.fn, "tn": c.tn, "fp": c.fp, "unscored": c.unscored,
            "tpr": _value(p.tpr), "tpr_interval": _interval(p.tpr_interval),
            "tnr": _value(p.tnr), "tnr_interval": _interval(p.tnr_interval),
            "kappa": _value(p.kappa), "kappa_interval": _interval(p.kappa_interval),
            "ordinal": {"n": p.ordinal_n, "unscored": p.ordinal_unscored,
                        "pass_fail_only": p.ordinal_pass_fail,
                        "weighted_kappa_linear": _value(p.weighted_linear),
                        "weighted_kappa_quadratic": _value(p.weighted_quadratic)}}


def _pair(p: PairAgreement | None) -> JsonValue:
    if p is None:
        return None
    orders: JsonObject = {
        o.order.value: {"n": o.n, "correct": o.correct, "accuracy": rounded(o.accuracy),
                  "accuracy_interval": _interval(o.accuracy_interval),
                  "kappa": _value(o.kappa), "kappa_interval": _interval(o.kappa_interval),
                  "ties": o.ties, "unscored": o.unscored}
        for o in p.orders}
    return {"n": p.n, "human_ties": p.human_ties, "orders": orders,
            "not_recorded": [o for o in ("ab", "ba") if o not in orders],
            "both_orders": p.both_orders, "consistent": p.consistent,
            "consistency": rounded(p.consistency) if p.both_orders else None}
















def _plan(plan: ProbePlan | None) -> JsonValue:
    if plan is None:
        return None
    return {"source": plan.source.value, "seed": plan.seed,
            "counts": [{"origin": o, "family": f, "probes": n} for o, f, n in plan.counts],
            "questions": plan.questions, "cached": plan.cached, "calls": plan.calls,
            "budget": plan.budget, "dropped": plan.dropped, "written": plan.written}


def _controls(c: Controls) -> JsonObject:
    return {"ok": c.ok, "ran": c.ran, "checks": [{"judge": k.judge, "probe": k.probe,
                                    "expected": k.expected.value, "got": k.got.value,
                                    "ok": k.ok, "headline": k.headline} for k in c.checks]}


def _calls(c: Calls) -> JsonObject:
    return {"made": c.made, "cached": c.cached, "failed": c.failed,
            "failures": [{"reason": reason, "calls": n} for reason, n in c.failures]}


def failure_lines(c: Calls) -> list[str]:
    """Why calls failed, one line a reason with its count, most frequent first."""
    more = c.failed - sum(n for _, n in c.failures)
    return ([f"  {n} call(s): {one_line(reason)}" for reason, n in c.failures]
            + ([f"  {more} call(s): other reasons"] if more > 0 else []))


def items_said(a: JudgeAudit) -> str:
    """The labelled items, the unlabelled ones and the probes apart, and what the
    probes asked the judge: ``a.items`` alone counts every probe as an item (478
    "items" for 30 written)."""
    c = a.counts
    said = (f"{c.labelled} labelled item{'' if c.labelled == 1 else 's'}, "
            + (f"{c.unlabelled} unlabelled, " if c.unlabelled else "") + f"{c.probes} probe(s)")
    plan = a.probe_plan
    if plan is not None and plan.questions:
        said += f", {plan.questions} probe question(s) ({plan.calls} call(s))"
    return said


def verdicts_on(a: JudgeAudit) -> str:
    """What the verdicts counted are on: labelled items, unless some were not."""
    unlabelled = a.counts.unlabelled
    return ("on labelled items" if not unlabelled
            else f"on items ({unlabelled} of them unlabelled)")


def audit_document(a: JudgeAudit) -> JsonObject:
    j = a.judge
    view = probe_view(a)
    modes: JsonValue = [m.value for m in sorted(a.modes, key=lambda m: m.value)]
    b = a.bars
    return {
        "judge": {"name": j.name, "model": j.model, "prompt_hash": j.prompt_hash,
                  "temperature": j.temperature if a.temperature_known else None,
                  "endpoint": j.endpoint,
                  "version": j.version, "mode": a.source.value,
                  "modes": modes,
                  "scale": {"low": a.scale.low, "high": a.scale.high,
                            "pass_at": a.scale.pass_at}},
        "agreement": {"items": a.items, "labelled_items": a.counts.labelled,
                      "unlabelled_items": a.counts.unlabelled,
                      "probe_items": a.counts.probes, "not_recorded": a.not_recorded,
                      "unscored": a.unscored, "verdicts": a.labelled_verdicts,
                      "samples": a.samples.total, "unscored_samples": a.samples.unscored,
                      "verdicts_with_no_scored_sample": a.samples.none_scored,
                      "bars": {"kappa": b.kappa, "tpr": b.tpr, "tnr": b.tnr,
                               "unscored": b.unscored, "alpha": b.alpha},
                      "labels": {"low": a.labels.low, "high": a.labels.high,
                                 "pass_at": a.labels.pass_at,
                                 "warning": a.label_warning or None},
                      "pointwise": _point(a.pointwise), "pairwise": _pair(a.pairwise),
                      "categorical": categorical_document(a.categorical)},
        "self_consistency": {"samples": a.self_consistency.samples,
                             "n": a.self_consistency.n,
                             "all_agree": a.self_consistency.all_agree,
                             "agreement_k": None if a.self_consistency.reason
                             else rounded(a.self_consistency.rate),
                             "source": "the recorded samples" if a.source is AuditSource.RECORDED
                             else "--samples",
                             "aggregate": AGGREGATE, "reason": a.self_consistency.reason},
        **{unit.key: unit.document(a.probes.results[name], view)
           for name, unit in PROBES.items()},
        "probes": _plan(a.probe_plan),
        "controls": _controls(a.controls),
        "calls": _calls(a.calls),
        "verdict": a.verdict.value,
        "reasons": list(a.reasons),
        "inconclusive": open_document(a.open),
        "errors": [str(e) for e in a.errors],
        "annotators": annotators_document(a.annotators),
        "annotator_position": position_document(a.annotator_position),
        "by_category": None if a.by_category is None else [
            _category_document(c) for c in a.by_category],
        "set": None if a.measured is None else a.measured.document(),
    }


def _category_document(c: CategoryFigures) -> JsonObject:
    return {"category": c.category, "items": c.items, "pointwise": _point(c.pointwise),
            "pairwise": _pair(c.pairwise), "position": probe_document(c.position),
            "annotators": annotators_document(c.annotators)}


def category_rows(figures: tuple[CategoryFigures, ...]) -> tuple[list[str], list[list[str]]]:
    """The by-category table (headers, rows): text cells, user names made printable."""
    rows = []
    for c in figures:
        p, q = c.pointwise, c.pairwise
        alt = c.annotators[0].alt if c.annotators else None
        rows.append([
            "(no category)" if c.category is None else printable(c.category), str(c.items),
            "—" if p is None else f"{p.confusion.n}",
            "—" if p is None else f"{_v(p.tpr)} / {_v(p.tnr)} / {_v(p.kappa)}",
            "—" if q is None else str(q.n),
            "—" if q is None else " ".join(f"{o.order.value} {o.accuracy:.2f}/{_v(o.kappa)}"
                                           for o in q.orders),
            c.position.status.value if c.position.status is ProbeStatus.NOT_RUN
            else c.position.headline(),
            "—" if not c.annotators else (f"{_v(c.annotators[0].agreement.alpha)} / "
                                          f"{_v(c.annotators[0].agreement.judge_alpha)}"),
            "—" if alt is None else (f"not run: {alt.reason}" if not alt.ran else
                                     f"{'passed' if alt.passed else 'FAILED'} "
                                     f"omega {alt.omega:.2f} rho {alt.rho:.2f}")])
    return (["category", "items", "pointwise n", "TPR / TNR / kappa", "pairwise n",
             "accuracy/kappa by order", "position", "alpha people / with judge",
             "alternative annotator test"], rows)


def _category_lines(figures: tuple[CategoryFigures, ...] | None) -> list[str]:
    if figures is None:
        return []
    headers, rows = category_rows(figures)
    return ["by category (each position probe at the audit's alpha, uncorrected: it says "
            "where to look, the verdict is on every item):",
            tabulate(rows, headers=headers, disable_numparse=True), ""]


def audit_json(a: JudgeAudit) -> str:
    return json.dumps(audit_document(a), indent=2)


def _v(v: Value) -> str:
    if not computed(v):
        return f"not computed ({v.reason})"
    return fixed(v.value) + (f" ({v.reason})" if v.reason else "")


def _i(i: Interval) -> str:
    return f"[{fixed(i.low)}, {fixed(i.high)}]"


def audit_text(a: JudgeAudit) -> str:
    modes = ", ".join(sorted(m.value for m in a.modes)) or "nothing"
    described = a.judge.describe()
    if not a.temperature_known:
        described = described.rsplit(" temperature=", 1)[0] + " temperature unknown"
    out = [f"judge: {one_line(described)} (version {one_line(a.judge.version)}; "
           f"{a.source.value}; "
           f"audited for {modes})",
           *_scale_lines(a),
           f"items: {a.counts.labelled} labelled, "
           + (f"{a.counts.unlabelled} unlabelled, " if a.counts.unlabelled else "")
           + f"{a.counts.probes} probe(s)"
           + (f" ({a.not_recorded} with no recorded verdict, left out)"
              if a.not_recorded else ""),
           *set_lines(a.measured),
           *_plan_lines(a.probe_plan),
           f"verdicts: {a.labelled_verdicts} {verdicts_on(a)}, {a.unscored} unscored; "
           f"samples: {a.samples.total}, {a.samples.unscored} unscored, "
           f"{a.samples.none_scored} verdict(s) with no scored sample", ""]
    if a.pointwise is not None:
        p, c = a.pointwise, a.pointwise.confusion
        out.append(tabulate(
            [["pass/fail", c.n, c.tp, c.fn, c.tn, c.fp, c.unscored,
              f"{_v(p.tpr)} {_i(p.tpr_interval)}", f"{_v(p.tnr)} {_i(p.tnr_interval)}",
              f"{_v(p.kappa)} {_i(p.kappa_interval)}"]],
            headers=["pointwise", "n", "TP", "FN", "TN", "FP", "unscored", "TPR", "TNR",
                     "kappa"], disable_numparse=True))
        lab = a.labels
        out.append(f"human pass: label 'pass', or an integer label >= {lab.pass_at} on "
                   f"{lab.low}-{lab.high}")
        if a.label_warning:
            out.append(f"warning: {a.label_warning}")
        no_score = (f"; {p.ordinal_pass_fail} judged pass/fail, with no score"
                    if p.ordinal_pass_fail else "")
        out.append(f"ordinal {lab.low}-{lab.high} on {p.ordinal_n} items "
                   f"({p.ordinal_unscored} unscored{no_score}): "
                   f"weighted kappa linear {_v(p.weighted_linear)}, "
                   f"quadratic {_v(p.weighted_quadratic)}")
        out.append("")
    if a.pairwise is not None:
        q = a.pairwise
        rows = [[o.order.value, o.n, o.correct, f"{fixed(o.accuracy)} {_i(o.accuracy_interval)}",
                 f"{_v(o.kappa)} {_i(o.kappa_interval)}", o.ties, o.unscored]
                for o in q.orders]
        out.append(tabulate(rows, headers=["pairwise order", "n", "correct", "accuracy",
                                           "kappa", "judge ties", "unscored"],
                            disable_numparse=True))
        missing = [o for o in ("ab", "ba") if o not in {r.order for r in q.orders}]
        out.append(f"human ties: {q.human_ties}; " + (
            f"same verdict in both orders: {q.consistent} of {q.both_orders} "
            f"({fixed(q.consistency)})" if q.both_orders else "no item recorded in both orders")
            + (f"; order {', '.join(missing)} not recorded" if missing else ""))
        out.append("")
    out.extend(categorical_lines(a.categorical))
    out.extend(annotators_lines(a.annotators))
    out.extend(position_lines(a.annotator_position))
    out.extend(_category_lines(a.by_category))
    sc = a.self_consistency
    out.append(f"self-consistency: {sc.reason}" if sc.reason else
               f"self-consistency: Agreement^{sc.samples} {fixed(sc.rate)} "
               f"({sc.all_agree} of {sc.n}); verdict by {AGGREGATE}")
    view = probe_view(a)
    for name, unit in PROBES.items():
        out.extend(one_line(line) for line in unit.lines(a.probes.results[name], view))
    out.append(f"controls: {a.controls.said()}" + (" — " + "; ".join(
        f"{one_line(c.judge)} {c.probe} {c.got.value}" for c in a.controls.checks)
        if a.controls.ran else ""))
    out.append(f"calls: {a.calls.made} made, {a.calls.cached} from cache, "
               f"{a.calls.failed} failed" + (", because:" if a.calls.failures else ""))
    out.extend(failure_lines(a.calls))
    out.append("")
    out.append(f"verdict: {a.said()}")
    out.extend(f"  - {one_line(r)}" for r in a.reasons)
    if a.errors:
        out.append("")
        out.append(f"bad input (left out, exit 2): {len(a.errors)} line(s)")
        out.extend(f"  {one_line(str(e))}" for e in a.errors)
    return "\n".join(out)


def set_lines(measured: MeasuredSet | None, what: str = "item") -> list[str]:
    """The set measured and what the split and the files disagree on; the held-out
    flag first, in capitals, so it is not read past."""
    if measured is None:
        return []
    notes = measured.notes(what)
    flag = ["TUNED AFTER A HELD-OUT READ: the gate refuses this result"
            ] if measured.tuned_after_read else []
    return [*flag, one_line(measured.said(what)), *(f"  {one_line(n)}" for n in notes)]


def _scale_lines(a: JudgeAudit) -> list[str]:
    """The judge's score range and pass mark, when it scores (a pairwise judge has none)."""
    if Mode.POINTWISE not in a.modes:
        return []
    declared = a.source is AuditSource.RECORDED and not a.temperature_known
    return [f"judge scale: {a.scale.low}-{a.scale.high}, a pass at >= {a.scale.pass_at}"
            + (" (declared for the recorded scores: --scale, --pass-at or the config)"
               if declared else "")]


def _plan_lines(plan: ProbePlan | None) -> list[str]:
    """Where the probes came from, and what they cost."""
    if plan is None:
        return []
    origins: dict[str, list[str]] = {}
    for origin, family, n in plan.counts:
        origins.setdefault(origin, []).append(f"{n} {family}")
    where = "; ".join(f"{o}: {', '.join(fs)}" for o, fs in origins.items()) or "none"
    seed = f", seed {plan.seed}" if plan.source.value != "files" else ""
    lines = [f"probes ({plan.source.value}{seed}): {where}"]
    if plan.questions or plan.budget is not None:
        lines.append(f"probe questions: {plan.questions}, {plan.cached} cached, {plan.calls} "
                     "call(s)" + (f"; --probe-budget {plan.budget}: {plan.dropped} probe(s) "
                                  "left out" if plan.budget is not None else ""))
    if plan.written:
        lines.append(f"generated probes written to {one_line(str(plan.written))}")
    return lines







