"""The human side of the judge-audit page as HTML tables: the annotators and their
items, the human ceiling beside the judge's agreement with them, the alternative
annotator test per annotator (with why it did not run, where it did not), and each
annotator's own position bias.

Rendering only, from the same values as ``annotators_render`` (the terminal's
table lines); every name from the user's files is HTML-escaped. Tables, not a
preformatted dump, so the page fits a 1,280 px window and the cells wrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from metaeval.audit.alt_test import PanelReport
from metaeval.audit.annotator_position import AnnotatorPosition
from metaeval.audit.bias_probes import ProbeStatus
from metaeval.report.annotators_render import PAPER, figure


def _table(table_id: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in row) + "</tr>"
                   for row in rows)
    return f'<table class="human" id="{escape(table_id)}"><tr>{head}</tr>{body}</table>'


def _share(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _panel(r: PanelReport) -> list[str]:
    a, t = r.agreement, r.alt
    out = [f"<h3>{escape(r.kind.capitalize())} items ({escape(a.level.value)} labels)</h3>",
           f'<p class="meta">{a.items} items, {a.multi} with 2 or more annotators'
           + (f", {a.no_consensus} with no consensus label (left out of the agreement)"
              if a.no_consensus else "") + ".</p>",
           _table(f"annotators-{r.kind}", ["annotator", "items labelled"],
                  [[n, k] for n, k in a.annotators]),
           _table(f"ceiling-{r.kind}", ["who", "Krippendorff's alpha", "mean kappa",
                                        "pairs", "same label"],
                  [["annotators with each other (the human ceiling)", figure(a.alpha),
                    figure(a.kappa), f"{a.pairs} pairs of annotators", _share(a.agreement)],
                   ["the judge with the annotators", figure(a.judge_alpha),
                    figure(a.judge_kappa), f"{a.judge_pairs} annotators",
                    _share(a.judge_agreement)]])]
    said = (f"scoring {t.scoring}, epsilon {t.epsilon:g} ({t.epsilon_from}), "
            f"Benjamini-Yekutieli at q {t.q:g}")
    if not t.ran:
        out.append(f'<p class="alt" id="alt-{escape(r.kind)}">Alternative annotator test '
                   f"({escape(said)}): not run: {escape(t.reason)}.</p>")
    else:
        wins = sum(x.rejected for x in t.tests)
        out.append(f'<p class="alt" id="alt-{escape(r.kind)}">Alternative annotator test '
                   f"({escape(said)}): <strong>{'passed' if t.passed else 'FAILED'}</strong>"
                   f": winning rate {t.omega:.2f} ({wins} of {len(t.tests)} annotators; "
                   f"passes at 0.5), advantage probability rho {t.rho:.2f}.</p>")
        out.append(_table(f"alt-test-{r.kind}", [
            "annotator left out", "items", "judge >= annotator", "annotator >= judge",
            "rho", "t", "p", "BY-adjusted p", "judge may replace them?"],
            [[x.annotator, x.items, x.judge_wins, x.annotator_wins, f"{x.rho:.2f}",
              "—" if x.statistic is None else f"{x.statistic:.2f}", f"{x.p_value:.3g}",
              f"{x.adjusted:.3g}", "yes: the judge may replace them" if x.rejected
              else "no: keep the annotator"] for x in t.tests]))
    if t.left_out:
        out.append('<p class="meta">Left out of the test (fewer than 30 items): '
                   + escape(", ".join(f"{n} ({k} items)" for n, k in t.left_out)) + ".</p>")
    return out


def _positions(positions: tuple[AnnotatorPosition, ...]) -> list[str]:
    if not positions:
        return []
    rows = [[p.annotator, p.status.value, f"{p.first} of {p.picks}", _share(p.first_share),
             p.ties, f"{p.shown_ab} / {p.shown_ba}",
             p.reason if p.status is ProbeStatus.NOT_RUN else f"{p.p_value:.3g}"]
            for p in positions]
    return ["<h3>Each annotator's own position bias</h3>",
            f'<p class="meta">Pairs as shown to each annotator; two-sided exact binomial test '
            f"against 1/2, ties left out; alpha {positions[0].alpha:g}, uncorrected.</p>",
            _table("annotator-position", ["annotator", "position bias", "chose the side "
                                          "shown first", "share", "ties", "shown ab / ba",
                                          "p"], rows)]


def annotators_html(reports: tuple[PanelReport, ...],
                    positions: tuple[AnnotatorPosition, ...]) -> list[str]:
    """The section of the page, or nothing without several annotators."""
    if not reports and not positions:
        return []
    body = ['<section id="annotators">',
            "<h2>Several annotators: the human ceiling and the alternative annotator test</h2>",
            f'<p class="meta">The judge is read against how well people agree with each '
            f"other, not against 1.0; the alternative annotator test ({escape(PAPER)}) asks "
            "whether the judge could replace each annotator in turn.</p>"]
    for r in reports:
        body += _panel(r)
    body += _positions(positions)
    body.append("</section>")
    return body
