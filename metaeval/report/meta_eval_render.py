"""What ``metaeval meta-eval`` prints: a tabulate table for people, stable JSON for machines.

Rendering only: every number was measured before it got here. Keys are sorted
and floats rounded to 4 places, so the same input gives the same bytes. A
metric with a documented fallback carries its reason; nothing prints ``nan``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from tabulate import tabulate

from metaeval.audit.check_measures import (
    BOOTSTRAP,
    CLUSTER_BOOTSTRAP,
    WILSON,
    Category,
    CheckResult,
    Measured,
    MetaEvalResult,
)
from metaeval.audit.label_agreement import Agreement
from metaeval.audit.metrics import Interval, Value
from metaeval.contract import JsonObject, JsonValue
from metaeval.decimals import fixed
from metaeval.loaders.meta_set import LoadError
from metaeval.report.escape import one_line
from metaeval.report.judge_audit_render import set_lines

JSON_VERSION = 1
PLACES = 4


def _num(x: float) -> float:
    # round() keeps -0.0; a report that flips between 0.0 and -0.0 is not byte-stable.
    return round(x, PLACES) + 0.0


def _ci(i: Interval) -> list[JsonValue]:
    return [_num(i.low), _num(i.high)]


def _reasons(m: Measured) -> JsonObject:
    named: list[tuple[str, Value | Interval]] = [
        ("tpr", m.tpr), ("tnr", m.tnr), ("precision", m.precision),
        ("balanced_accuracy", m.balanced_accuracy), ("kappa", m.kappa),
        ("scored_tpr", m.scored_tpr), ("scored_tnr", m.scored_tnr), ("tpr_ci", m.tpr_ci),
        ("tnr_ci", m.tnr_ci), ("kappa_ci", m.kappa_ci), ("youden_j_ci", m.youden_ci)]
    if m.weighted_kappa is not None:
        named += [("weighted_kappa_linear", m.weighted_kappa[0]),
                  ("weighted_kappa_quadratic", m.weighted_kappa[1])]
    return {key: v.reason for key, v in named if v.reason}


def check_json(c: CheckResult) -> JsonObject:
    m = c.measured
    k = m.confusion
    weighted: JsonValue = None
    if m.weighted_kappa is not None:
        weighted = {"linear": _num(m.weighted_kappa[0].value),
                    "quadratic": _num(m.weighted_kappa[1].value),
                    "unscored": m.ordinal_unscored}
    ablations: JsonValue = None
    if c.sensitivity is not None:
        ablations = {a.value: n for a, n in c.sensitivity.moved}
    notes: list[JsonValue] = list(c.notes)
    reads: list[JsonValue] = [*sorted({r for s in c.static for r in s.reads})]
    return {
        "name": c.name, "n": m.n, "passed": k.passed, "failed": k.failed,
        "unscored": k.unscored, "tp": k.tp, "fn": k.fn, "tn": k.tn, "fp": k.fp,
        "tpr": _num(m.tpr.value), "tnr": _num(m.tnr.value), "precision": _num(m.precision.value),
        "balanced_accuracy": _num(m.balanced_accuracy.value), "kappa": _num(m.kappa.value),
        "tpr_ci": _ci(m.tpr_ci), "tnr_ci": _ci(m.tnr_ci), "kappa_ci": _ci(m.kappa_ci),
        "flags": [f.value for f in c.flags],
        "scored_tpr": _num(m.scored_tpr.value), "scored_tnr": _num(m.scored_tnr.value),
        "youden_j_ci": _ci(m.youden_ci), "weighted_kappa": weighted,
        "reasons": _reasons(m), "notes": notes,
        "ablations_moved": ablations,
        "reads": reads,
        "clusters": m.clusters, "shared_tasks": m.shared_tasks,
        "ci_methods": {"tpr": m.tpr_method, "tnr": m.tnr_method, "kappa": m.kappa_method},
        "labels": None if c.sources is None else {
            "own": c.sources.own, "overall_pass": c.sources.overall_pass,
            "not_measured": c.sources.not_measured},
    }


def _category_json(category: Category) -> JsonObject:
    return {"n": category.n, "checks": {name: {
        "agree": cell.agree, "n": cell.n, "human_fail": cell.human_fail,
        "caught": list(cell.caught),
        "let_through": list(cell.let_through), "wrongly_failed": list(cell.wrongly_failed),
        "unscored": list(cell.unscored)} for name, cell in category.cells}}


def _agreement_json(a: Agreement) -> JsonObject:
    reasons: JsonObject = {key: v.reason for key, v in (("alpha", a.alpha),
                                                         ("mean_kappa", a.mean_kappa))
                           if v.reason}
    return {"check": a.check, "annotators": a.annotators, "runs": a.runs, "shared": a.shared,
            "alpha": _num(a.alpha.value), "mean_kappa": _num(a.mean_kappa.value),
            "pairs": a.pairs, "reasons": reasons}


AGREEMENT_HEADERS = ("check", "annotators", "runs", "labelled by 2+", "Krippendorff alpha",
                     "mean pairwise kappa", "pairs")


def agreement_rows(result: MetaEvalResult) -> list[list[str | int]]:
    """One row a check of the labels files' annotators; a fallback value is marked *."""
    def mark(v: Value) -> str:
        return f"{v.value:.2f}{'*' if v.reason else ''}"

    return [[one_line(a.check), a.annotators, a.runs, a.shared, mark(a.alpha),
             mark(a.mean_kappa), a.pairs] for a in result.annotators]


def _agreement_table(result: MetaEvalResult) -> str:
    rows = agreement_rows(result)
    notes = [f"  {one_line(a.check)}: {key} is a fallback: {one_line(v.reason)}"
             for a in result.annotators for key, v in (("alpha", a.alpha),
                                                       ("mean kappa", a.mean_kappa))
             if v.reason]
    return ("annotators (labels files; gold = the majority, a tie leaves the check "
            f"unlabelled: {result.tied} tie(s); * = the overall verdict):\n"
            + tabulate(rows, headers=AGREEMENT_HEADERS, tablefmt="simple",
                       disable_numparse=True)
            + ("\n" + "\n".join(notes) if notes else ""))


OK_LINE = "OK: every check meets its bars and none is a tautology"
FAIL_LINE = "FAIL: a bar is missed, a regression or a tautology is flagged"


def not_ok(result: MetaEvalResult, errors: Sequence[LoadError]) -> str:
    """Why the verdict cannot be OK though no bar failed: nothing was measured, or some
    input was bad (an error anywhere means no OK anywhere); empty when it can be."""
    if result.unmeasured:
        return result.unmeasured
    if errors:
        return (f"bad input: {len(errors)} error(s), left out of the figures; the "
                "verdict speaks only of what loaded")
    return ""


def verdict_line(result: MetaEvalResult, errors: Sequence[LoadError]) -> str:
    """The last line of every page: NOTHING MEASURED, FAIL, INCOMPLETE or OK."""
    if result.unmeasured:
        return f"NOTHING MEASURED: {one_line(result.unmeasured)}"
    if result.failed:
        return FAIL_LINE
    why = not_ok(result, errors)
    return f"INCOMPLETE: {why}" if why else OK_LINE


def meta_eval_json(result: MetaEvalResult, *, files: tuple[str, ...] = (),
                   errors: tuple[LoadError, ...] = ()) -> str:
    settings = result.settings
    document: JsonObject = {
        "version": JSON_VERSION,
        "meta_sets": list(files),
        "errors": [str(e) for e in errors],
        "settings": {"seed": settings.seed, "resamples": settings.resamples,
                     "confidence": 0.95},
        "checks": [check_json(c) for c in result.checks],
        "evaluator": check_json(result.evaluator),
        "categories": {name: _category_json(cat) for name, cat in result.categories},
        "baseline_missing": list(result.baseline_missing),
        "ok": not result.failed and not not_ok(result, errors),
    }
    if not_ok(result, errors):
        document["reason"] = not_ok(result, errors)
    # Only when asked for or present, so that a result without them keeps its bytes.
    if result.groups:
        document["by"] = {"key": settings.by, "groups": {
            name: _category_json(cat) for name, cat in result.groups}}
    if result.unlabelled:
        document["unlabelled"] = result.unlabelled
    if result.annotators:
        document["annotators"] = [_agreement_json(a) for a in result.annotators]
        document["tied"] = result.tied
    if result.measured is not None:
        document["set"] = result.measured.document()
    return json.dumps(document, indent=2, sort_keys=True)


# --- table ---------------------------------------------------------------------------


def _rate(v: Value, i: Interval) -> str:
    mark = "*" if v.reason else ""
    return f"{fixed(v.value)}{mark} [{fixed(i.low)}, {fixed(i.high)}]"


def _row(c: CheckResult) -> list[str | int]:
    m = c.measured
    k = m.confusion
    weighted = "-"
    if m.weighted_kappa is not None:
        weighted = f"{fixed(m.weighted_kappa[0].value)}/{fixed(m.weighted_kappa[1].value)}"
    sources = ("overall" if c.sources is None else
               f"{c.sources.own}/{c.sources.overall_pass}/{c.sources.not_measured}")
    return [one_line(c.name), m.n, sources, k.passed, k.failed, k.unscored, k.tp, k.fn, k.tn,
            k.fp,
            _rate(m.tpr, m.tpr_ci), _rate(m.tnr, m.tnr_ci),
            f"{fixed(m.precision.value)}{'*' if m.precision.reason else ''}",
            fixed(m.balanced_accuracy.value), _rate(m.kappa, m.kappa_ci), weighted,
            " ".join(f.value for f in c.flags) or "-"]


HEADERS = ["check", "n", "own/pass/not", "pass", "fail", "unscored", "TP", "FN", "TN", "FP",
           "TPR [95% CI]", "TNR [95% CI]", "precision", "bal.acc", "kappa [95% CI]",
           "wkappa lin/quad", "flags"]


def _notes(c: CheckResult) -> list[str]:
    lines = [f"  {one_line(c.name)}: {one_line(note)}" for note in c.notes]
    lines += [f"  {one_line(c.name)}: {key} is a fallback: {one_line(str(why))}"
              for key, why in sorted(_reasons(c.measured).items())]
    return lines


def _names(cells: list[tuple[str, tuple[str, ...], int]]) -> str:
    # A cell is several lines by design, one a check: no name can add one.
    return "\n".join(f"{one_line(name)} {len(ids)}/{n}" for name, ids, n in cells if ids) or "-"


def check_category_rows(categories: tuple[tuple[str, Category], ...]) -> list[list[str | int]]:
    """Each category's row of meta-eval's by-category table (the table and the HTML
    page alike): its runs, the evaluator's agreement, and which checks caught, let
    through, wrongly failed or left unscored how many of its runs."""
    rows: list[list[str | int]] = []
    for name, category in categories:
        cells = [(check, cell) for check, cell in category.cells if check != "evaluator"]
        evaluator = dict(category.cells).get("evaluator")
        rows.append([
            one_line(name), category.n,
            f"{evaluator.agree}/{evaluator.n}" if evaluator else "-",
            _names([(check, c.caught, c.human_fail) for check, c in cells]),
            _names([(check, c.let_through, c.human_fail) for check, c in cells]),
            _names([(check, c.wrongly_failed, c.n - c.human_fail) for check, c in cells]),
            _names([(check, c.unscored, c.n) for check, c in cells]),
        ])
    return rows


def _wrong_runs(result: MetaEvalResult) -> list[str]:
    """``--show-runs``: per check (the evaluator last), the ids of the runs it let
    through (people failed, it passed) and wrongly failed (people passed, it failed)."""
    wrong: dict[str, tuple[list[str], list[str]]] = {}
    for _, category in result.categories:
        for check, cell in category.cells:
            through, failed = wrong.setdefault(check, ([], []))
            through.extend(cell.let_through)
            failed.extend(cell.wrongly_failed)
    order = [c.name for c in result.checks] + [result.evaluator.name]
    lines = []
    for name in order:
        for label, ids in zip(("let through", "wrongly failed"), wrong.get(name, ([], [])),
                              strict=True):
            if ids:
                lines.append(f"  {one_line(name)}: {label} {len(ids)}: "
                             + ", ".join(one_line(i) for i in ids))
    return lines or ["  none: every check agrees with people on every run it decided"]
def _interval_lines(result: MetaEvalResult) -> list[str]:
    """Say how the intervals treat trials of one task: resampled together (a cluster
    bootstrap), or as independent runs although they share a task."""
    every = (*result.checks, result.evaluator)
    clustered = [c for c in every if c.measured.clusters]
    alone = [c for c in every if not c.measured.clusters and c.measured.shared_tasks]
    lines = []
    if clustered:
        tasks = max(c.measured.clusters for c in clustered)
        lines.append(f"intervals: cluster bootstrap over tasks (up to {tasks} tasks; the "
                     "trials of one task are resampled together, not counted as independent "
                     f"cases) for {len(clustered)} of {len(every)} rows")
    if alone:
        lines.append(f"intervals: {len(alone)} row(s) have runs that share a task but are "
                     "resampled run by run (" + (
                         "--cluster run" if result.settings.cluster == "run" else
                         "fewer than 10 tasks; --cluster task forces a cluster bootstrap")
                     + "): if those runs are trials of one task, the intervals are too narrow")
    return ["\n".join(lines)] if lines else []


def interval_methods(result: MetaEvalResult) -> str:
    """The methods of the intervals the page shows, in one sentence: every page (table,
    HTML) says it, so no page names one method while showing another's numbers."""
    every = (*result.checks, result.evaluator)
    settings = result.settings
    rates = sorted({m for c in every for m in (c.measured.tpr_method, c.measured.tnr_method)})
    fell = [c.name for c in every if CLUSTER_BOOTSTRAP not in (
        c.measured.tpr_method, c.measured.tnr_method) and c.measured.clusters]
    if all(m.startswith(WILSON) for m in rates):
        said = f"TPR and TNR intervals: {WILSON}"
        if fell:
            said += (" (the cluster bootstrap collapsed to a point at 0 or 1 for "
                     + ", ".join(map(one_line, fell)) + ": Wilson covers the boundary)")
    elif rates == [CLUSTER_BOOTSTRAP]:
        said = "TPR and TNR intervals: cluster bootstrap over tasks"
    else:
        said = ("TPR and TNR intervals: cluster bootstrap over tasks, Wilson where it "
                "collapsed to a point at 0 or 1 (the JSON's ci_methods says which)")
    kappa = sorted({CLUSTER_BOOTSTRAP if c.measured.clusters else BOOTSTRAP for c in every})
    fell = [c.name for c in every if c.measured.kappa_method.startswith(WILSON)]
    return (f"{said}; kappa intervals: {' and '.join(kappa)} of {settings.resamples}, "
            f"seed {settings.seed}" + (
                " (Wilson on the observed agreement where every resample gave 1.00: "
                + ", ".join(map(one_line, fell)) + ")" if fell else ""))


def meta_eval_table(result: MetaEvalResult, *, files: tuple[str, ...] = (),
                    errors: tuple[LoadError, ...] = (), show_runs: bool = False) -> str:
    # Every run graded: those with an overall verdict (the evaluator's row) and those
    # without, which a check's own label may still measure.
    runs = result.evaluator.measured.n + result.unlabelled
    settings = result.settings
    parts = [f"meta-eval: {runs} runs from {len(files)} file(s); positive = human pass; "
             f"unscored counts in every denominator; {interval_methods(result)}",
             "own/pass/not: the runs a check was measured on by its own label, by an "
             "overall pass (a run people passed passes every check), and those it was not "
             "(an overall fail does not say which check failed: it measures the evaluator)"]
    parts.extend(_interval_lines(result))
    parts.extend(set_lines(result.measured, "run"))
    if result.unlabelled:
        parts[0] += (f"; {result.unlabelled} of them with no overall human verdict "
                     "(unlabelled, or their annotators tied): not in the evaluator's row, "
                     "measured only by a check's own label")
    if errors:
        parts.append("bad input (left out):\n" + "\n".join(f"  {one_line(str(e))}"
                                                            for e in errors))
    rows = [_row(c) for c in result.checks] + [_row(result.evaluator)]
    parts.append(tabulate(rows, headers=HEADERS, tablefmt="simple", disable_numparse=True))
    notes = [line for c in (*result.checks, result.evaluator) for line in _notes(c)]
    if result.baseline_missing:
        notes.append("  in the baseline but not measured now: "
                     + ", ".join(map(one_line, result.baseline_missing)))
    if notes:
        parts.append("notes (* = a documented fallback value):\n" + "\n".join(notes))
    if result.annotators:
        parts.append(_agreement_table(result))
    breakdowns = [("category", result.categories)]
    breakdowns += [(settings.by, result.groups)] if result.groups else []
    for by, groups in breakdowns:
        parts.append(f"per {one_line(by)} (k/m: k of the m runs with that human label):\n"
                     + tabulate(check_category_rows(groups),
                                headers=[one_line(by), "runs", "evaluator agrees", "caught by",
                                         "let through by", "wrongly failed by", "unscored by"],
                                tablefmt="simple", disable_numparse=True))
    if show_runs:
        parts.append("runs each check got wrong (let through: people failed it, the check "
                     "passed; wrongly failed: people passed it, the check failed):\n"
                     + "\n".join(_wrong_runs(result)))
    warned = sorted({f.value for c in (*result.checks, result.evaluator) for f in c.flags
                     if not c.fails(f)})
    line = verdict_line(result, errors)
    parts.append(line + (f" (warnings, not failures: {', '.join(warned)})"
                         if warned and line == OK_LINE else ""))
    return "\n\n".join(parts)
