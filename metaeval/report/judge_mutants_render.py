"""What ``metaeval judge-mutants`` prints: the status table, the per-operator table,
each survivor with its diff and the items to label next, the killed mutants with
what killed them; and the stable JSON document ``metaeval gate`` reads
(``judge-mutants:counts.Survived``). Renders a result, never runs one; text from
data (templates, replies, item ids) is cut to one line where a line is shown.
"""

from __future__ import annotations

import json

from tabulate import tabulate

from metaeval.audit.judge_mutants import OPERATORS
from metaeval.audit.judge_mutants.outcome import (
    MutantOutcome,
    MutantStatus,
    judge_fingerprint,
    unified_diff,
)
from metaeval.commands.judge_mutants import JudgeMutantsResult
from metaeval.report.escape import md_code, md_plain, one_line
from metaeval.report.summary import listed, table

SHOWN_ITEMS = 10
"""At most this many item ids are listed per survivor in the table (the JSON has all)."""


def score(result: JudgeMutantsResult) -> float | None:
    """Killed of killed and survived, 0..1 (equivalent ones left out); None: neither."""
    killed, survived = (result.count(MutantStatus.KILLED), result.count(MutantStatus.SURVIVED))
    return killed / (killed + survived) if killed + survived else None


def _items(ids: tuple[str, ...]) -> str:
    shown = ", ".join(one_line(i) for i in ids[:SHOWN_ITEMS])
    return shown + (f", and {len(ids) - SHOWN_ITEMS} more" if len(ids) > SHOWN_ITEMS else "")


def mutants_text(result: JudgeMutantsResult) -> str:
    audit = result.judge
    said = audit.judge.describe()
    if not audit.temperature_known:  # a log's judge: the log does not say
        said = said.rsplit(" temperature=", 1)[0] + " temperature unknown"
    out = [f"judge: {one_line(said)} (version {audit.judge.version}; "
           f"{audit.source.value}; audit verdict {audit.verdict.value})"]
    if audit.verdict.value == "void":
        out += ["judge-mutants: nothing measured: the judge's own audit is void", *(
            f"  - {one_line(r)}" for r in audit.reasons)]
        return "\n".join(out)
    counts = [(s.value, result.count(s)) for s in MutantStatus]
    measured = score(result)
    out += ["", tabulate(counts, headers=["status", "mutants"], disable_numparse=True)]
    rows = []
    for name, unit in OPERATORS.items():
        mine = [o for o in result.outcomes if o.mutant.operator == name]
        if mine:
            rows.append([name, unit.family.value,
                         *(sum(o.status is s for o in mine) for s in MutantStatus)])
    if rows:
        out += ["", tabulate(rows, headers=["operator", "family", *(s.value for s in
                                                                    MutantStatus)],
                             disable_numparse=True)]
    for outcome in result.outcomes:
        if outcome.status is MutantStatus.SURVIVED:
            unlabelled = len(outcome.unlabelled)
            out += ["", f"survived: {outcome.mutant.id} ({one_line(outcome.mutant.detail)})",
                    *("  " + one_line(line) for line in unified_diff(outcome.mutant).splitlines()),
                    f"  disagrees with the judge on {len(outcome.disagree)} item(s), "
                    f"{unlabelled} unlabelled; label these next: "
                    f"{_items(outcome.unlabelled or outcome.disagree)}",
                    f"  against the labels: worse {outcome.test.worse}, better "
                    f"{outcome.test.better} (McNemar p={outcome.test.p_value:.3g})"]
    killed = [o for o in result.outcomes if o.status is MutantStatus.KILLED]
    if killed:
        out += ["", "killed:"] + [f"  {o.mutant.id}: {one_line(o.killed_by[0])}"
                                  for o in killed]
    same = [o.mutant.id for o in result.outcomes if o.status is MutantStatus.EQUIVALENT]
    if same:
        out += ["", f"equivalent on these items (same verdicts on every item): "
                    f"{', '.join(same)}"]
    calls = result.calls
    out += ["", f"calls: {calls.made} made, {calls.cached} from cache, {calls.failed} failed"
                + (f" (estimated {result.estimate} before any call)" if result.estimate
                   else ""),
            *(f"note: {one_line(n)}" for n in result.notes),
            *_against(result),
            "", "judge-mutants: " + (
                "no mutant applied to this judge: nothing measured" if not result.outcomes
                else f"{result.count(MutantStatus.SURVIVED)} survived, "
                     f"{result.count(MutantStatus.KILLED)} killed, "
                     f"{result.count(MutantStatus.EQUIVALENT)} equivalent"
                     + (f"; score {measured:.0%}" if measured is not None else ""))]
    return "\n".join(out)


def _against(result: JudgeMutantsResult) -> list[str]:
    c = result.comparison
    if c is None:
        return []
    return [f"findings file: {len(c.new)} new, {len(c.expired)} expired, {len(c.known)} known "
            f"open, {len(c.accepted)} accepted, {len(c.fixed)} fixed"]


def _outcome_json(o: MutantOutcome, judge: str) -> dict[str, object]:
    diff = o.mutant.diff
    return {"fingerprint": judge_fingerprint(judge, o),
            "id": o.mutant.id, "operator": o.mutant.operator, "family": o.mutant.family.value,
            "detail": o.mutant.detail, "status": o.status.value, "killed_by": list(o.killed_by),
            "mcnemar": {"worse": o.test.worse, "better": o.test.better,
                        "p_value": o.test.p_value, "alpha": o.test.alpha},
            "disagree": list(o.disagree), "unlabelled": list(o.unlabelled),
            "diff": {"part": diff.part, "before": diff.before, "after": diff.after,
                     "line": diff.line},
            "calls": {"made": o.calls.made, "cached": o.calls.cached,
                      "failed": o.calls.failed}}


def mutants_json(result: JudgeMutantsResult) -> str:
    audit = result.judge
    document = {
        "kind": "judge-mutants",
        "judge": {"name": audit.judge.name, "version": audit.judge.version,
                  "describe": audit.judge.describe(), "source": audit.source.value,
                  "verdict": audit.verdict.value, "reasons": list(audit.reasons)},
        "state": result.state.value,
        "counts": {s.value: result.count(s) for s in MutantStatus},
        "score": score(result),
        "mutants": [_outcome_json(o, audit.judge.name) for o in result.outcomes],
        "calls": {"made": result.calls.made, "cached": result.calls.cached,
                  "failed": result.calls.failed, "estimated": result.estimate},
        "notes": list(result.notes),
        "findings": None if result.comparison is None else {
            key: [e.fingerprint for e in getattr(result.comparison, key)]
            for key in ("new", "expired", "known", "accepted", "fixed")},
        "errors": [str(e) for e in audit.errors]}
    return json.dumps(document, indent=2, sort_keys=True)


def mutants_summary(result: JudgeMutantsResult) -> str:
    """``--summary``: short Markdown for a pull request's checks page: the counts, then
    the survivors a reviewer must act on (the new ones when a findings file was
    compared), each with its change and the items to label next."""
    mark = "✅" if result.code == 0 else "❌"
    name = md_code(result.judge.judge.name)
    if result.state.value != "measured":
        return f"### {mark} metaeval judge-mutants: nothing measured ({name})\n"
    c = result.comparison
    survivors = [o for o in result.outcomes if o.status is MutantStatus.SURVIVED]
    if c is not None:
        fresh = {e.mutant_id for e in (*c.new, *c.expired)}
        survivors = [o for o in survivors if o.mutant.id in fresh]
        head = ("no new survivor" if not c.failing else
                f"{len(c.new)} new survivor(s)" + (f", {len(c.expired)} expired acceptance(s)"
                                                   if c.expired else ""))
    else:
        head = f"{len(survivors)} survivor(s)" if survivors else "no survivor"
    out = [f"### {mark} metaeval judge-mutants {name}: {head}", "",
           *table([s.value for s in MutantStatus],
                  [[str(result.count(s)) for s in MutantStatus]]), ""]
    if c is not None:
        out.append(f"Against the findings file: {len(c.new)} new, {len(c.expired)} expired, "
                   f"{len(c.known)} known open, {len(c.accepted)} accepted, "
                   f"{len(c.fixed)} fixed.")
    if survivors:
        out += ["", "**Survivors** (label the items named, or accept with a reason):",
                *listed([f"- {md_code(o.mutant.id)}: {md_plain(o.mutant.detail)}; label next: "
                         + ", ".join(md_code(i) for i in (o.unlabelled or o.disagree)[:5])
                         for o in survivors], "survivors")]
    return "\n".join(out).rstrip() + "\n"
