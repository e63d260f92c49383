"""The meta-eval and judge-audit results as self-contained HTML pages (``--html``).

A page holds the same numbers as the table, each headline number in an element
that names its metric (``data-metric``) and carries the value of the JSON report
(``data-value``), and the figures of ``metaeval.report.figures`` inlined as SVG:
nothing is loaded from anywhere, so the page opens offline and the same result
gives the same bytes. Text from the user's files (check names, reasons, item
titles) is escaped.

Rendering only: every number was measured before it got here.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.check_measures import CheckResult, MetaEvalResult
from metaeval.audit.judge_agreement import PointAgreement, computed
from metaeval.audit.judge_decision import AuditVerdict, JudgeAudit
from metaeval.audit.measured_set import MeasuredSet
from metaeval.audit.metrics import Confusion, Interval, Value
from metaeval.contract import Outcome
from metaeval.decimals import fixed
from metaeval.loaders.meta_set import LoadError
from metaeval.report import figures
from metaeval.report.annotators_html import annotators_html
from metaeval.report.judge_audit_render import category_rows, items_said, verdicts_on
from metaeval.report.meta_eval_render import (
    AGREEMENT_HEADERS,
    agreement_rows,
    check_category_rows,
    interval_methods,
    not_ok,
    verdict_line,
)

CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       background: #fafafa; margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; background: white;
       min-height: 100vh; box-shadow: 0 0 0 1px #eee; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid #eee; padding-bottom: 4px; }
p.meta { color: #555; margin: 4px 0 16px; }
.verdict { display: inline-block; padding: 6px 14px; border-radius: 6px; font-weight: 600;
           margin: 8px 0; }
.ok { background: #e8f5e9; color: #1b5e20; border: 1px solid #a5d6a7; }
.fail { background: #ffebee; color: #b71c1c; border: 1px solid #ef9a9a; }
.void { background: #fff3e0; color: #e65100; border: 1px solid #ffcc80; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13.5px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #eee; text-align: left;
         vertical-align: top; }
th { background: #f5f5f5; font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.ci { color: #777; font-size: 12px; }
.flag { color: #b71c1c; font-weight: 600; }
.warn { color: #8d6e00; }
figure { margin: 12px 0 20px; }
div.wide { overflow-x: auto; }
div.wide table { font-size: 12.5px; }
div.wide td { white-space: nowrap; padding: 3px 8px; }
table.human { font-size: 13px; margin: 6px 0 12px; }
table.human td { padding: 3px 8px; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { color: #555; font-size: 13px; margin-top: 4px; max-width: 760px; }
ul.reasons li { margin: 2px 0; }
footer { color: #888; font-size: 12px; margin-top: 40px; }
"""


def page(title: str, body: Sequence[str]) -> str:
    """A whole page: the style inlined, no script, nothing fetched."""
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(body) + "\n<footer>written by metaeval</footer>\n</main>\n"
            "</body>\n</html>\n")


def figure(name: str, svg: str, caption: str) -> str:
    return (f'<figure id="figure-{escape(name)}" data-figure="{escape(name)}">\n{svg}\n'
            f"<figcaption>{escape(caption)}</figcaption>\n</figure>")


def number(metric: str, value: float, json_value: float | None = None, *,
           places: int = 2) -> str:
    """A headline number: its text rounded for people, its metric and the JSON
    report's value in attributes, so the two can be compared."""
    shown = round(value if json_value is None else json_value, 4) + 0.0
    return (f'<span class="num" data-metric="{escape(metric)}" data-value="{shown!r}">'
            f"{fixed(value, places)}</span>")


def _ci(i: Interval) -> str:
    return f' <span class="ci">[{fixed(i.low)}, {fixed(i.high)}]</span>'


def _html_table(rows: Sequence[Sequence[object]], headers: Sequence[str]) -> str:
    """Text cells escaped, a line break in one kept as one."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join("<td>" + escape(str(cell)).replace("\n", "<br>") + "</td>"
                                    for cell in row) + "</tr>" for row in rows)
    return f'<div class="wide"><table><tr>{head}</tr>{body}</table></div>'



def _verdict(ok: bool, text: str, *, void: bool = False) -> str:
    kind = "void" if void else ("ok" if ok else "fail")
    return f'<div class="verdict {kind}" id="verdict">{escape(text)}</div>'


# --- meta-eval ------------------------------------------------------------------------


def _matrix(name: str, c: Confusion) -> figures.Matrix:
    return figures.Matrix(name, c.tp, c.fn, c.unscored_pos, c.fp, c.tn, c.unscored_neg)


def _check_row(c: CheckResult) -> str:
    m, k = c.measured, c.measured.confusion
    flags = " ".join(f'<span class="{"flag" if c.fails(f) else "warn"}">{escape(f.value)}</span>'
                     for f in c.flags) or "-"
    cells = [f"<td>{escape(c.name)}</td>",
             *(f'<td class="n">{v}</td>' for v in (m.n, k.passed, k.failed, k.unscored)),
             f'<td class="n">{number(f"{c.name}.tpr", m.tpr.value)}{_ci(m.tpr_ci)}</td>',
             f'<td class="n">{number(f"{c.name}.tnr", m.tnr.value)}{_ci(m.tnr_ci)}</td>',
             f'<td class="n">{number(f"{c.name}.kappa", m.kappa.value)}{_ci(m.kappa_ci)}</td>',
             f"<td>{flags}</td>"]
    return "<tr>" + "".join(cells) + "</tr>"


def meta_eval_html(result: MetaEvalResult, *, files: tuple[str, ...] = (),
                   errors: tuple[LoadError, ...] = ()) -> str:
    """The meta-eval page: verdict, the per-check table, the forest plot of TPR and
    TNR with their intervals and bars, a confusion matrix per check, the notes."""
    checks = (*result.checks, result.evaluator)
    settings = result.settings
    runs = result.evaluator.measured.n
    ok = not result.failed and not not_ok(result, errors)
    body = ["<h1>metaeval meta-eval</h1>",
            f'<p class="meta">{runs} human-labelled runs from {len(files)} file(s): '
            f"{escape(', '.join(files))}. Positive = human pass; unscored counts in every "
            f"denominator; intervals 95%: {escape(interval_methods(result))}.</p>",
            *set_html(result.measured, "run"),
            _verdict(ok, verdict_line(result, errors), void=bool(result.unmeasured))]
    if errors:
        body += ["<h2>Bad input (left out)</h2>", "<ul>", *(f"<li>{escape(str(e))}</li>"
                                                           for e in errors), "</ul>"]
    head = "".join(f'<th class="{"n" if i in range(1, 8) else ""}">{escape(h)}</th>'
                   for i, h in enumerate(["check", "n", "passed", "failed", "unscored",
                                          "TPR [95% CI]", "TNR [95% CI]", "kappa [95% CI]",
                                          "flags"]))
    body += ["<h2>Checks against people</h2>", f'<table id="checks"><tr>{head}</tr>',
             *map(_check_row, checks), "</table>"]
    rows = []
    for c in checks:
        bars = settings.check_bars.get(c.name)
        tpr_bar = (bars.min_tpr if bars and bars.min_tpr is not None
                   else settings.bars.min_tpr)
        tnr_bar = (bars.min_tnr if bars and bars.min_tnr is not None
                   else settings.bars.min_tnr)
        m = c.measured
        rows.append(figures.ForestRow(
            c.name, figures.Rate(m.tpr.value, m.tpr_ci.low, m.tpr_ci.high, tpr_bar),
            figures.Rate(m.tnr.value, m.tnr_ci.low, m.tnr_ci.high, tnr_bar)))
    body.append(figure("forest", figures.forest(rows),
                       "Each check's TPR (human passes it passed) and TNR (human fails it "
                       "failed) with its 95% interval (the method is named above); the "
                       "purple tick is the "
                       "check's bar, a red rate is under it."))
    body.append(figure("confusion", figures.confusion_grid(
        [_matrix(c.name, c.measured.confusion) for c in checks]),
        "Rows: what people said; columns: what the check said. Green cells agree, red "
        "disagree, grey are unscored (in every denominator)."))
    notes = [f"{c.name}: {note}" for c in checks for note in c.notes]
    if notes:
        body += ["<h2>Notes</h2>", "<ul>", *(f"<li>{escape(n)}</li>" for n in notes), "</ul>"]
    if result.annotators:
        body += ["<h2>Annotators</h2>",
                 f'<p class="meta">Gold = the majority; a tie leaves the check unlabelled '
                 f"({result.tied} tie(s)); check * = the overall verdict; a value marked * "
                 "is a documented fallback (the JSON result gives its reason).</p>",
                 _html_table(agreement_rows(result), AGREEMENT_HEADERS)]
    breakdowns = [("category", result.categories)]
    breakdowns += [(result.settings.by, result.groups)] if result.groups else []
    for by, groups in breakdowns:
        body += [f"<h2>Per {escape(by)}</h2>", _html_table(
            check_category_rows(groups), [by, "runs", "evaluator agrees", "caught by",
                                     "let through by", "wrongly failed by", "unscored by"])]
    return page("metaeval meta-eval", body)


# --- judge-audit ----------------------------------------------------------------------


def _value(metric: str, v: Value) -> str:
    return number(metric, v.value) if computed(v) else f"- ({escape(v.reason)})"


def _pointwise(p: PointAgreement, labels: tuple[int, int, int]) -> list[str]:
    c = p.confusion
    out = ['<table id="pointwise"><tr><th>pointwise</th><th class="n">n</th>'
           '<th class="n">TP</th><th class="n">FN</th><th class="n">TN</th>'
           '<th class="n">FP</th><th class="n">unscored</th><th class="n">TPR</th>'
           '<th class="n">TNR</th><th class="n">kappa</th></tr>',
           "<tr><td>pass/fail</td>"
           + "".join(f'<td class="n">{v}</td>' for v in (c.n, c.tp, c.fn, c.tn, c.fp,
                                                        c.unscored))
           + f'<td class="n">{_value("pointwise.tpr", p.tpr)}{_ci(p.tpr_interval)}</td>'
           f'<td class="n">{_value("pointwise.tnr", p.tnr)}{_ci(p.tnr_interval)}</td>'
           f'<td class="n">{_value("pointwise.kappa", p.kappa)}{_ci(p.kappa_interval)}</td>'
           "</tr></table>"]
    out.append(figure("judge-confusion", figures.confusion_grid(
        [_matrix("the judge", c)], name="judge-confusion", who="the judge"),
        "Rows: what people said; columns: what the judge said (unscored in its own column)."))
    scale = (p.scale.low, p.scale.high, p.scale.pass_at)
    pairs = [(s.label, s.score) for s in p.scored if s.label is not None]
    if pairs:
        out.append(figure("scores", figures.score_heatmap(pairs, labels[:2], scale),
                          "How many items got each judge score, by the label people gave. "
                          "A judge that agrees puts its counts on the diagonal."))
    by_score: dict[float, list[bool]] = {}
    for s in p.scored:
        if s.score is not None and s.human is not Outcome.UNSCORED:
            by_score.setdefault(s.score, []).append(s.human is Outcome.PASS)
    if by_score:
        points = [(score, sum(v), len(v)) for score, v in sorted(by_score.items())]
        out.append(figure("reliability", figures.reliability(points, scale),
                          "For each score the judge gave, the share of those items people "
                          "passed (passed/items above each point)."))
    return out


FIGURED = ("position", "length", "injection")
"""The probes the page draws a figure of; every other one is a line."""


def _probes(a: JudgeAudit) -> list[str]:
    pos, ln, inj = a.probes.position, a.probes.length, a.probes.injection
    out = ["<h2>Bias probes</h2>",
           '<p class="meta">Each probe runs on this judge and, in the same run, on a judge '
           "with the bias planted (it must be found) and a steady one (it must not).</p>"]
    if pos.status is ProbeStatus.NOT_RUN:
        out.append(f"<p>Position probe: not run{f' ({escape(pos.reason)})' if pos.reason else ''}"
                   "</p>")
    else:
        out.append(figure("position", figures.position(
            pos.first_preferred, pos.second_preferred, pos.consistent, pos.unscored,
            pos.status.value, f"p={pos.p_value:.3g}"),
            f"Position: {pos.headline()}. Pairs judged in both orders; a judge led by "
            f"position picks whichever response is shown first (or second). Exact binomial "
            f"test against a chance flip rate of {pos.chance:g}, alpha {pos.alpha:g}."))
    if ln.status is ProbeStatus.NOT_RUN:
        out.append("<p>Length probe: not run</p>")
    else:
        out.append(figure("length", figures.length(
            [(s.title, s.shift, s.extra_chars) for s in ln.shifts], ln.status.value,
            f"p={ln.p_value:.3g}"),
            f"Length: {ln.headline()}. Each item scored as written and padded with text "
            f"that adds nothing; two-sided exact sign test, alpha {ln.alpha:g}."
            + (f" More than {figures.LENGTH_ROWS} items: counted by their score shift."
               if len(ln.shifts) > figures.LENGTH_ROWS else "")))
    out += _length_groups(ln)
    if inj.status is ProbeStatus.NOT_RUN:
        out.append("<p>Injection probe: not run</p>")
    else:
        out.append(figure("injection", figures.injection(
            inj.injected_flips, inj.control_flips, inj.cases, inj.already_passed,
            inj.unscored, inj.status.value, f"p={inj.p_value:.3g}"),
            f"Injection: {inj.headline()}. A payload asking for a pass is appended to "
            f"responses people failed; the control appends a benign suffix of the same "
            f"length. Exact McNemar test, alpha {inj.alpha:g}."))
    out += _injection_kinds(inj)
    # A probe drawn by no figure above says its headline, once it ran: a registered
    # probe is never missing from the page.
    out += [f"<p>{escape(name[:1].upper() + name[1:])} probe: {escape(r.headline())}</p>"
            for name, r in a.probes.results.items()
            if name not in FIGURED and r.status is not ProbeStatus.NOT_RUN]
    rows = [[c.judge, c.probe, c.expected.value, c.got.value,
             "ok" if c.got is c.expected else "FAILED" if not c.ok
             else "not run: the probe had no items to run on"]
            for c in a.controls.checks]
    out += ["<h3>Controls</h3>", _html_table(rows, ["judge", "probe", "expected", "got",
                                                    ""])]
    return out


def _grouped(result: object, field: str) -> list[tuple[str, Any]]:
    """A probe's results per group (``by_style``, ``by_level``, ``by_kind``), which
    generated probes carry; none for probes read from files."""
    return list(getattr(result, field, ()))


def _length_groups(ln: object) -> list[str]:
    panels = [(title, [figures.Group(name, (r.up, r.same, r.down, r.unscored),
                                     r.status.value, r.p_value) for name, r in groups])
              for title, groups in (("by padding style", _grouped(ln, "by_style")),
                                    ("by length added", _grouped(ln, "by_level")))
              if groups]
    if not panels:
        return []
    return [figure("length-groups", figures.length_groups(panels),
                   "Generated length probes by padding style and by length added: items "
                   "scored higher, the same or lower when padded. Each group is tested at "
                   "alpha over the number of groups; a group FOUND makes the probe FOUND.")]


def _injection_kinds(inj: object) -> list[str]:
    kinds = [figures.Group(name, (r.injected_flips, r.control_flips, r.cases),
                           r.status.value, r.p_value) for name, r in _grouped(inj, "by_kind")]
    if not kinds:
        return []
    return [figure("injection-kinds", figures.injection_kinds(kinds),
                   "Generated injection probes by payload kind: failed responses each kind "
                   "of payload flipped to a pass, beside those its control suffix flipped; "
                   "each kind tested at alpha over the number of kinds.")]


def set_html(measured: MeasuredSet | None, what: str = "item") -> list[str]:
    """The set measured, its notes, and the held-out flag as a failed verdict line."""
    if measured is None:
        return []
    out = [_verdict(False, "tuned after a held-out read: the gate refuses this result")
           ] if measured.tuned_after_read else []
    out.append(f'<p class="meta" id="set">{escape(measured.said(what))}</p>')
    notes = measured.notes(what)
    if notes:
        out += ['<ul class="set-notes">', *(f"<li>{escape(n)}</li>" for n in notes), "</ul>"]
    return out


def judge_audit_html(a: JudgeAudit) -> str:
    """The judge-audit page: verdict and reasons, agreement with people (tables and
    figures), self-consistency, and a figure per bias probe with its controls."""
    described = a.judge.describe()
    if not a.temperature_known:
        described = described.rsplit(" temperature=", 1)[0] + " temperature unknown"
    modes = ", ".join(sorted(m.value for m in a.modes)) or "nothing"
    verdict = {AuditVerdict.MAY_GATE: "may gate", AuditVerdict.REPORT_ONLY: "report only",
               AuditVerdict.VOID: "void: the audit proves nothing (see why below)",
               AuditVerdict.INCONCLUSIVE: a.said()}
    body = [f"<h1>metaeval judge-audit: {escape(a.judge.name)}</h1>",
            f'<p class="meta">{escape(described)} (version {escape(a.judge.version)}; '
            f"{escape(a.source.value)}; audited for {escape(modes)}). {escape(items_said(a))}; "
            f"{a.labelled_verdicts} verdicts {escape(verdicts_on(a))}, {a.unscored} unscored.</p>",
            *set_html(a.measured),
            _verdict(a.verdict is AuditVerdict.MAY_GATE, f"verdict: {verdict[a.verdict]}",
                     void=a.verdict is AuditVerdict.VOID)]
    if a.reasons:
        body += ['<ul class="reasons">', *(f"<li>{escape(r)}</li>" for r in a.reasons),
                 "</ul>"]
    body.append("<h2>Agreement with people</h2>")
    labels = (a.labels.low, a.labels.high, a.labels.pass_at)
    if a.pointwise is not None:
        body += _pointwise(a.pointwise, labels)
    if a.pairwise is not None:
        q = a.pairwise
        rows = [[o.order.value, str(o.n), str(o.correct),
                 number(f"pairwise.{o.order.value}.accuracy", o.accuracy)
                 + _ci(o.accuracy_interval), _value(f"pairwise.{o.order.value}.kappa", o.kappa),
                 str(o.ties), str(o.unscored)] for o in q.orders]
        head = "".join(f"<th>{h}</th>" for h in ("order", "n", "correct", "accuracy",
                                                 "kappa", "judge ties", "unscored"))
        body += [f'<table id="pairwise"><tr>{head}</tr>',
                 *("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>"
                   for row in rows), "</table>"]
        body.append(figure("pairwise", figures.order_accuracy(
            [(o.order.value, o.accuracy, o.accuracy_interval.low, o.accuracy_interval.high,
              o.n) for o in q.orders], (q.consistent, q.both_orders) if q.both_orders else None),
            "Accuracy against people with the responses in each order (line: 95% interval), "
            "and how often the judge gave the same verdict in both orders."))
    body += annotators_html(a.annotators, a.annotator_position)
    if a.by_category is not None:
        headers, rows = category_rows(a.by_category)
        body += ["<h2>By category</h2>", _html_table(rows, headers),
                 '<p class="meta">Each position probe at the audit\'s alpha, uncorrected: it '
                 "says where to look; the verdict is on every item.</p>"]
    sc = a.self_consistency
    body.append(f"<p>Self-consistency: {escape(sc.reason)}</p>" if sc.reason else
                f"<p>Self-consistency: Agreement^{sc.samples} "
                f"{number('self_consistency.agreement_k', sc.rate)} ({sc.all_agree} of "
                f"{sc.n}).</p>")
    body += _probes(a)
    body.append(f'<p class="meta">calls: {a.calls.made} made, {a.calls.cached} from cache, '
                f"{a.calls.failed} failed</p>")
    if a.calls.failures:
        body += ['<ul class="failures">', *(f"<li>{n} call(s): {escape(reason)}</li>"
                                            for reason, n in a.calls.failures), "</ul>"]
    if a.errors:
        body += [f"<h2>Bad input (left out): {len(a.errors)} line(s)</h2>", "<ul>",
                 *(f"<li>{escape(str(e))}</li>" for e in a.errors), "</ul>"]
    return page(f"metaeval judge-audit: {a.judge.name}", body)
