"""Judge mutants that survive, as findings: the same findings file, fingerprints,
baseline and acceptance (with expiry) as code mutants, so ``metaeval findings
accept|list|export --file FILE`` work on them unchanged.

A survivor's fingerprint is the judge's name, the operator and the change (before
and after, whitespace folded): stable across runs and item sets, and another for a
judge whose template or rule was edited. Its path is the ``pyproject.toml`` that
configures the judge (a judge has no source line), its qualname ``judge NAME``.
Killed and equivalent mutants are detected: a tracked entry of one is dropped.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

from metaeval import vcs
from metaeval.audit.judge_mutants.outcome import (
    MutantOutcome,
    MutantStatus,
    judge_fingerprint,
    unified_diff,
)
from metaeval.mutation.findings_file import (
    Comparison,
    FindingEntry,
    Findings,
    Seen,
    load,
    save,
    triage,
)

__all__ = ["judge_comparison", "judge_findings", "judge_updated", "track"]

CONFIG_PATH = "pyproject.toml"


def judge_findings(judge: str, outcomes: tuple[MutantOutcome, ...], seen: Seen
                   ) -> list[FindingEntry]:
    """An open finding for each survivor: what breaks is the items to label next."""
    found = []
    for o in outcomes:
        if o.status is not MutantStatus.SURVIVED:
            continue
        items = ", ".join((o.unlabelled or o.disagree)[:5])
        found.append(FindingEntry(
            judge_fingerprint(judge, o), o.mutant.id, o.mutant.operator, "Survived",
            CONFIG_PATH, max(o.mutant.diff.line, 1), f"judge {judge}",
            f"the labels cannot tell judge {judge!r} from it ({o.mutant.detail}); "
            f"label next: {items}", unified_diff(o.mutant), seen, seen))
    return found


def judge_comparison(baseline: Findings, judge: str, outcomes: tuple[MutantOutcome, ...],
                     seen: Seen, today: dt.date) -> Comparison:
    """This run's survivors against the file: ``new`` and ``expired`` fail the run."""
    new, expired, still_open, accepted = triage(
        baseline, judge_findings(judge, outcomes, seen), today)
    detected = {judge_fingerprint(judge, o) for o in outcomes
                if o.status is not MutantStatus.SURVIVED}
    fixed = [e for e in baseline.entries if e.fingerprint in detected]
    return Comparison(tuple(new), tuple(expired), tuple(still_open), tuple(accepted),
                      tuple(fixed))


def judge_updated(baseline: Findings, judge: str, outcomes: tuple[MutantOutcome, ...],
                  seen: Seen) -> Findings:
    """The file after this run: new survivors added open, tracked ones refreshed (a
    decision kept), detected ones dropped; other entries (code mutants, other
    judges) stay as they were."""
    known = baseline.by_fingerprint()
    current = {e.fingerprint: e for e in judge_findings(judge, outcomes, seen)}
    detected = {judge_fingerprint(judge, o) for o in outcomes
                if o.status is not MutantStatus.SURVIVED}
    kept = [e for fp, e in known.items() if fp not in current and fp not in detected]
    refreshed = [replace(e, first_seen=known[fp].first_seen, status=known[fp].status,
                         reason=known[fp].reason, accepted_by=known[fp].accepted_by,
                         until=known[fp].until) if fp in known else e
                 for fp, e in current.items()]
    return Findings(tuple(sorted([*kept, *refreshed],
                                 key=lambda e: (e.path, e.qualname, e.rule, e.fingerprint))))


def track(judge: str, outcomes: tuple[MutantOutcome, ...], path: Path | None, update: bool,
          root: Path) -> tuple[Comparison | None, Findings]:
    """The survivors against the findings file at ``path`` (None: not compared), the
    file written back when ``update``; and the open findings SARIF is to hold (the
    file's after this run, or this run's survivors alone)."""
    seen = Seen(vcs.head_commit(root), vcs.today().isoformat())
    if path is None:
        return None, Findings(tuple(judge_findings(judge, outcomes, seen)))
    baseline = load(path)
    comparison = judge_comparison(baseline, judge, outcomes, seen, vcs.today())
    after = judge_updated(baseline, judge, outcomes, seen)
    if update:
        save(after, path)
    return comparison, after
