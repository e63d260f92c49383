"""The meta-eval and judge-audit summaries (``--summary PATH``); the shared
Markdown helpers and the mutate and gate summaries are in ``summary``."""

from __future__ import annotations

from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.check_measures import Category, CheckResult, MetaEvalResult
from metaeval.audit.judge_decision import AuditVerdict, JudgeAudit
from metaeval.audit.measured_set import MeasuredSet
from metaeval.audit.probes import PROBES, Required
from metaeval.decimals import fixed
from metaeval.report.annotators_render import figure
from metaeval.report.escape import md_code, md_plain
from metaeval.report.judge_audit_render import category_rows, items_said, verdicts_on
from metaeval.report.meta_eval_render import AGREEMENT_HEADERS, agreement_rows, interval_methods
from metaeval.report.summary import listed, table

# --- meta-eval -----------------------------------------------------------------------


def _rates(c: CheckResult) -> list[str]:
    m = c.measured
    return [md_code(c.name), str(m.n), str(m.confusion.unscored), fixed(m.tpr.value),
            fixed(m.tnr.value), fixed(m.kappa.value),
            " ".join(f.value for f in c.flags) or "—"]


def meta_eval_summary(result: MetaEvalResult, *, files: int = 0, errors: int = 0) -> str:
    """Every check's rates, then each failing flag with its reason (the bar missed,
    the drop since the baseline, why it is a tautology)."""
    checks = (*result.checks, result.evaluator)
    failing = [c for c in checks if any(c.fails(f) for f in c.flags)]
    mark = "❌" if result.failed or errors or result.unmeasured else "✅"
    head = (md_plain(f"nothing measured: {result.unmeasured}") if result.unmeasured else
            f"{len(failing)} of {len(checks)} checks fail" if failing else
            f"all {len(checks)} checks meet their bars")
    out = [f"### {mark} metaeval meta-eval: {head}", "",
           f"{result.evaluator.measured.n} human-labelled runs from {files} file(s); "
           "positive = human pass; unscored counts in every denominator; "
           f"{md_plain(interval_methods(result))}."
           + (f" {errors} bad input line(s) left out." if errors else ""), "",
           *set_said(result.measured, "run"),
           *table(["check", "n", "unscored", "TPR", "TNR", "kappa", "flags"],
                   [_rates(c) for c in checks])]
    if failing:
        lines = []
        for c in failing:
            flags = ", ".join(f.value for f in c.flags if c.fails(f))
            notes = "; ".join(c.notes)
            lines.append(f"- {md_code(c.name)}: {flags}"
                         + (f" — {md_plain(notes)}" if notes else ""))
        out += ["", "**Bars missed and flags:**", *listed(lines, "checks")]
    if result.annotators:
        out += ["", f"**Annotators** (gold = the majority; {result.tied} tie(s); `*` = the "
                "overall verdict; a value marked * is a documented fallback):", "",
                *table(list(AGREEMENT_HEADERS),
                       [[md_code(str(r[0])), *map(str, r[1:])] for r in agreement_rows(result)])]
    if result.groups:
        by = result.settings.by
        out += ["", f"**Per {md_plain(by)}** (runs; the evaluator's agreement with people):",
                "", *table([md_plain(by), "runs", "evaluator agrees"],
                           [[md_code(name), str(g.n), _evaluator(g)]
                            for name, g in result.groups])]
    return "\n".join(out).rstrip() + "\n"


def _evaluator(group: Category) -> str:
    cell = dict(group.cells).get("evaluator")
    return f"{cell.agree}/{cell.n}" if cell else "—"


# --- judge-audit ---------------------------------------------------------------------


def _probe(name: str, status: ProbeStatus, headline: str) -> str:
    if status is ProbeStatus.NOT_RUN:
        return f"- {name}: not run"
    mark = "⚠️ " if status is ProbeStatus.FOUND else ""
    return f"- {mark}{name}: {md_plain(headline)}"


def set_said(measured: MeasuredSet | None, what: str = "item") -> list[str]:
    """The set measured, as Markdown lines (with a blank line after)."""
    if measured is None:
        return []
    flag = ["**⚠️ Tuned after a held-out read: the gate refuses this result.**", ""
            ] if measured.tuned_after_read else []
    return [*flag, md_plain(measured.said(what)) + ".",
            *(f"- {md_plain(n)}" for n in measured.notes(what)), ""]


def judge_audit_summary(a: JudgeAudit) -> str:
    """The verdict and why, the agreement with people, each probe's finding."""
    mark = {AuditVerdict.MAY_GATE: "✅", AuditVerdict.REPORT_ONLY: "❌",
            AuditVerdict.VOID: "⛔", AuditVerdict.INCONCLUSIVE: "❔"}[a.verdict]
    out = [f"### {mark} metaeval judge-audit: {md_code(a.judge.name)} {a.said()}", "",
           f"{items_said(a)}; {a.labelled_verdicts} verdicts {verdicts_on(a)}, "
           f"{a.unscored} unscored.", "", *set_said(a.measured)]
    rows = []
    if a.pointwise is not None:
        p = a.pointwise
        rows.append(["pointwise", str(p.confusion.n), fixed(p.tpr.value),
                     fixed(p.tnr.value), "—", fixed(p.kappa.value)])
    if a.pairwise is not None:
        for o in a.pairwise.orders:
            rows.append([f"pairwise, order {o.order.value}", str(o.n), "—", "—",
                         fixed(o.accuracy), fixed(o.kappa.value)])
    if rows:
        out += [*table(["agreement", "n", "TPR", "TNR", "accuracy", "kappa"], rows), ""]
    for r in a.annotators:
        g, t = r.agreement, r.alt
        out.append(f"Human ceiling ({r.kind}): annotators' alpha "
                   f"{md_plain(figure(g.alpha))}, judge's alpha with them "
                   f"{md_plain(figure(g.judge_alpha))}; alternative annotator "
                   "test " + (f"not run ({md_plain(t.reason)})" if not t.ran else
                              f"{'passed' if t.passed else 'failed'}: winning rate "
                              f"{t.omega:.2f}, rho {t.rho:.2f}, epsilon {t.epsilon:g}") + ".")
        out.append("")
    if a.by_category is not None:
        headers, rows = category_rows(a.by_category)
        # table() escapes the cell separator itself: md_plain() must not do it twice.
        out += ["**By category:**", *table(headers, [[md_plain(c).replace("\\|", "|")
                                                      for c in row] for row in rows]),
                ""]
    pr = a.probes
    headlines = pr.headlines()  # every probe, the pairwise ones too
    out += ["**Probes:**", *(_probe(name, status, headlines[name])
                             for name, status in pr.statuses().items()
                             if status is not ProbeStatus.NOT_RUN
                             or PROBES[name].required is not Required.NEVER),
            f"- controls: {a.controls.said() if a.controls.ok else 'FAILED (the audit is void)'}"]
    if a.reasons:
        out += ["", "**Why:**", *listed([f"- {md_plain(r)}" for r in a.reasons], "reasons")]
    if a.calls.failed:
        out += ["", f"**{a.calls.failed} judge call(s) failed:**",
                *(f"- {n} call(s): {md_code(reason, clip=200)}" for reason, n in a.calls.failures)]
    if a.errors:
        out += ["", f"{len(a.errors)} bad input line(s) left out."]
    return "\n".join(out).rstrip() + "\n"
