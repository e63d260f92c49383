"""What ``metaeval findings`` prints: the tracked survivors, one, or a diff of two files."""

from __future__ import annotations

import datetime as dt
import json

from tabulate import tabulate

from metaeval.findings import FindingEntry, Findings, FindingsDiff


def _row(e: FindingEntry, today: dt.date) -> list[str]:
    status = e.effective_status(today).value
    if e.expired(today):
        status += f" (accepted until {e.until}, expired)"
    elif e.until:
        status += f" until {e.until}"
    return [e.fingerprint[:12], status, f"{e.path}:{e.line}", e.rule, e.breaks or e.qualname]


def findings_table(findings: Findings, today: dt.date) -> str:
    if not findings.entries:
        return "no findings"
    rows = [_row(e, today) for e in findings.entries]
    return tabulate(rows, headers=["id", "status", "where", "rule", "breaks"])


def finding_text(e: FindingEntry, today: dt.date) -> str:
    lines = [
        f"finding {e.fingerprint}",
        f"  mutant     {e.mutant_id} ({e.mutant_status})",
        f"  where      {e.path}:{e.line} in {e.qualname}",
        f"  rule       {e.rule}",
        f"  status     {_row(e, today)[1]}",
        f"  first seen {e.first_seen.date} at {e.first_seen.commit[:12]}",
        f"  last seen  {e.last_seen.date} at {e.last_seen.commit[:12]}",
    ]
    if e.breaks:
        lines.append(f"  breaks     {e.breaks}")
    if e.reason:
        lines.append(f"  accepted   by {e.accepted_by}: {e.reason}")
    return "\n".join([*lines, "", e.diff]).rstrip()


def findings_diff_text(d: FindingsDiff) -> str:
    lines = [f"+ {e.fingerprint[:12]} {e.status.value} {e.path}:{e.line} {e.rule}"
             for e in d.added]
    lines += [f"- {e.fingerprint[:12]} {e.status.value} {e.path}:{e.line} {e.rule}"
              for e in d.removed]
    lines += [f"~ {b.fingerprint[:12]} {a.status.value} -> {b.status.value} {b.path}:{b.line}"
              for a, b in d.changed]
    summary = f"{len(d.added)} added, {len(d.removed)} removed, {len(d.changed)} changed"
    return "\n".join([*lines, summary])


def findings_json(findings: Findings, today: dt.date) -> str:
    return json.dumps([{
        "fingerprint": e.fingerprint, "mutant_id": e.mutant_id,
        "status": e.effective_status(today).value, "path": e.path, "line": e.line,
        "rule": e.rule, "breaks": e.breaks, "until": e.until or None,
    } for e in findings.entries], indent=2, sort_keys=True)
