"""Render the annotators' part of a judge audit: the human ceiling (the annotators'
agreement with each other beside the judge's with them), the alternative
annotator test and each annotator's own position bias, as table lines and as JSON.

Rendering only: every number was computed in ``metaeval.audit.annotators``,
``metaeval.audit.alt_test`` and ``metaeval.audit.annotator_position``. Annotator
names come from the user's files: in text they are shown printable and clipped,
never raw.
"""

from __future__ import annotations

from tabulate import tabulate

from metaeval.audit.alt_test import AltTest, PanelReport
from metaeval.audit.annotator_position import AnnotatorPosition
from metaeval.audit.annotators import Agreement
from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.class_agreement import ClassAgreement
from metaeval.audit.judge_agreement import computed
from metaeval.audit.metrics import Value
from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import clipped

PAPER = "Calderon, Reichart and Dror 2025"


def name(text: str) -> str:
    """A name from the user's data, safe on a terminal: printable, one line, clipped."""
    return clipped(text if text.isprintable() else repr(text)[1:-1], 60)


def _value(v: Value) -> JsonObject:
    return {"value": round(v.value, 4) if computed(v) else None, "reason": v.reason}


def _share(x: float | None) -> JsonValue:
    return None if x is None else round(x, 4)


def _agreement(a: Agreement) -> JsonObject:
    return {"level": a.level.value, "items": a.items, "items_with_2_or_more": a.multi,
            "no_consensus": a.no_consensus,
            "annotators": [{"annotator": n, "items": k} for n, k in a.annotators],
            "among_annotators": {"krippendorff_alpha": _value(a.alpha),
                                 "mean_pairwise_kappa": _value(a.kappa), "pairs": a.pairs,
                                 "same_label": _share(a.agreement)},
            "judge_with_annotators": {"krippendorff_alpha_with_judge": _value(a.judge_alpha),
                                      "mean_kappa": _value(a.judge_kappa),
                                      "annotators": a.judge_pairs,
                                      "same_label": _share(a.judge_agreement)}}


def _alt(t: AltTest) -> JsonObject:
    return {"ran": t.ran, "reason": t.reason, "passed": t.passed,
            "winning_rate": _share(t.omega), "advantage_probability": _share(t.rho),
            "epsilon": t.epsilon, "epsilon_from": t.epsilon_from, "scoring": t.scoring,
            "q": t.q, "correction": "Benjamini-Yekutieli",
            "test": "one-sided one-sample t-test of d = W_h - W_f, H1: mean(d) < epsilon",
            "annotators": [{"annotator": a.annotator, "items": a.items,
                            "judge_wins": a.judge_wins, "annotator_wins": a.annotator_wins,
                            "rho": round(a.rho, 4),
                            "t": None if a.statistic is None else round(a.statistic, 4),
                            "p_value": a.p_value, "adjusted_p_value": a.adjusted,
                            "rejected": a.rejected} for a in t.tests],
            "left_out": [{"annotator": n, "items": k} for n, k in t.left_out]}


def annotators_document(reports: tuple[PanelReport, ...]) -> JsonValue:
    return [{"kind": r.kind, "agreement": _agreement(r.agreement), "alt_test": _alt(r.alt)}
            for r in reports]


def figure(v: Value) -> str:
    """A figure to two places, or why it was not computed."""
    return f"{v.value:.2f}" if computed(v) else f"not computed ({v.reason})"


def _s(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def annotators_lines(reports: tuple[PanelReport, ...]) -> list[str]:
    out: list[str] = []
    for r in reports:
        a, t = r.agreement, r.alt
        who = ", ".join(f"{name(n)} {k}" for n, k in a.annotators)
        out.append(f"annotators ({r.kind}, {a.level.value}): {len(a.annotators)} ({who}); "
                   f"{a.items} items, {a.multi} with 2 or more annotators"
                   + (f", {a.no_consensus} with no consensus label (left out of the "
                      "agreement above)" if a.no_consensus else ""))
        out.append(f"  human ceiling, annotators with each other: Krippendorff's alpha "
                   f"{figure(a.alpha)}; mean pairwise kappa {figure(a.kappa)} ({a.pairs} pairs); "
                   f"same label {_s(a.agreement)}")
        out.append(f"  judge with the annotators:                 alpha with the judge "
                   f"{figure(a.judge_alpha)}; mean kappa {figure(a.judge_kappa)} ({a.judge_pairs} "
                   f"annotators); same label {_s(a.judge_agreement)}")
        head = (f"alternative annotator test ({r.kind}; {t.scoring}; epsilon "
                f"{t.epsilon:g}, {t.epsilon_from}; Benjamini-Yekutieli q {t.q:g}): ")
        if not t.ran:
            out.append(head + f"not run ({t.reason})")
        else:
            verdict = "passed" if t.passed else "FAILED"
            wins = sum(x.rejected for x in t.tests)
            out.append(head + f"{verdict}: winning rate {t.omega:.2f} ({wins} of "
                       f"{len(t.tests)}; passes at 0.5), advantage probability rho "
                       f"{t.rho:.2f}")
            rows = [[name(x.annotator), x.items, x.judge_wins, x.annotator_wins,
                     f"{x.rho:.2f}", "—" if x.statistic is None else f"{x.statistic:.2f}",
                     f"{x.p_value:.3g}", f"{x.adjusted:.3g}",
                     "judge wins" if x.rejected else "no"] for x in t.tests]
            table = tabulate(rows, headers=["left out", "items", "judge >=", "annotator >=",
                                            "rho", "t", "p", "BY p", "rejected"],
                             disable_numparse=True)
            out.extend("  " + line for line in table.splitlines())
        if t.left_out:
            out.append("  left out of the test (fewer than 30 items): " + ", ".join(
                f"{name(n)} ({k})" for n, k in t.left_out))
        out.append("")
    return out


def categorical_document(c: ClassAgreement | None) -> JsonValue:
    if c is None:
        return None
    return {"n": c.n, "correct": c.correct, "accuracy": round(c.accuracy, 4),
            "accuracy_interval": {"low": round(c.accuracy_interval.low, 4),
                                  "high": round(c.accuracy_interval.high, 4),
                                  "level": c.accuracy_interval.level},
            "kappa": _value(c.kappa), "unscored": c.unscored, "classes": list(c.classes),
            "confusion": {"rows": "people's class", "columns": [*c.classes, "unscored"],
                          "counts": [list(row) for row in c.table]}}


def categorical_lines(c: ClassAgreement | None) -> list[str]:
    if c is None:
        return []
    i = c.accuracy_interval
    rows = [[name(k), *map(str, row)] for k, row in zip(c.classes, c.table, strict=True)]
    table = tabulate(rows, headers=["people \\ judge", *map(name, c.classes), "unscored"],
                     disable_numparse=True)
    return [f"categorical: {c.n} items, accuracy {c.accuracy:.2f} [{i.low:.2f}, {i.high:.2f}], "
            f"kappa {figure(c.kappa)}, {c.unscored} unscored",
            *("  " + line for line in table.splitlines()), ""]


def position_document(positions: tuple[AnnotatorPosition, ...]) -> JsonValue:
    return [{"annotator": p.annotator, "status": p.status.value, "first": p.first,
             "second": p.second, "ties": p.ties, "first_share": _share(p.first_share),
             "shown": {"ab": p.shown_ab, "ba": p.shown_ba}, "p_value": p.p_value,
             "alpha": p.alpha, "reason": p.reason or None,
             "test": "two-sided exact binomial test of first against 1/2, ties left out"}
            for p in positions]


def position_lines(positions: tuple[AnnotatorPosition, ...]) -> list[str]:
    """The annotators' own position bias: one row per annotator, FOUND flagged."""
    if not positions:
        return []
    rows = [[name(p.annotator), p.status.value, f"{p.first} of {p.picks}",
             _s(p.first_share), p.ties, f"{p.shown_ab} / {p.shown_ba}",
             p.reason if p.status is ProbeStatus.NOT_RUN else f"{p.p_value:.3g}"]
            for p in positions]
    found = [p for p in positions if p.status is ProbeStatus.FOUND]
    table = tabulate(rows, headers=["annotator", "position bias", "chose first", "share",
                                    "ties", "shown ab / ba", "p"], disable_numparse=True)
    head = (f"annotators' position bias (pairs as shown to each; two-sided exact binomial "
            f"test against 1/2, ties left out; alpha {positions[0].alpha:g}, uncorrected): "
            + (f"FOUND for {', '.join(name(p.annotator) for p in found)}" if found
               else "none found"))
    return [head, *("  " + line for line in table.splitlines()), ""]
