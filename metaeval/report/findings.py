"""What ``metaeval findings`` prints: the tracked survivors, one, or a diff of two files."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from tabulate import tabulate

from metaeval.findings import Comparison, FindingEntry, Findings, FindingsDiff


def _row(e: FindingEntry, today: dt.date) -> list[str]:
    status = e.effective_status(today).value
    if e.expired(today):
        status += f" (accepted until {e.until}, expired)"
    elif e.until:
        status += f" until {e.until}"
    return [e.fingerprint[:12], status, f"{e.path}:{e.line}", e.rule,
            e.breaks or f"in {e.qualname}"]


def findings_table(findings: Findings, today: dt.date) -> str:
    if not findings.entries:
        return "no findings"
    rows = [_row(e, today) for e in findings.entries]
    return tabulate(rows, headers=["id", "status", "where", "rule", "what"])


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


def comparison_text(c: Comparison, findings_file: Path, *, recorded: bool = False) -> str:
    """A run's survivors against the findings file: what fails, what is known, what is
    fixed. ``recorded``: the new ones were written to the file (``--update-baseline``),
    so they no longer fail the run."""
    def lines(entries: tuple[FindingEntry, ...], mark: str) -> list[str]:
        return [f"  {mark} {e.fingerprint[:12]} {e.path}:{e.line} {e.rule}"
                + (f" ({e.breaks})" if e.breaks else "") for e in entries]

    out = [f"against {findings_file}: {len(c.new)} new, {len(c.expired)} expired, "
           f"{len(c.known)} known open, {len(c.accepted)} accepted, {len(c.fixed)} fixed"]
    if c.new:
        why = "recorded as open" if recorded else "fail the run"
        out += [f"new survivors ({why}):", *lines(c.new, "+")]
    if c.expired:
        out += ["accepted findings past their expiry (fail the run):",
                *(f"  ! {e.fingerprint[:12]} {e.path}:{e.line} {e.rule} (until {e.until}: "
                  f"{e.reason})" for e in c.expired)]
    if c.fixed:
        out += ["fixed (tracked, now detected):", *lines(c.fixed, "-")]
    return "\n".join(out)
