"""What ``metaeval findings`` prints: the tracked survivors, one, or a diff of two files.

A findings file is data another job or person wrote: every field of an entry is
shown on one line (``o``), its diff as escaped lines (``block``)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from tabulate import tabulate

from metaeval.findings import Comparison, FindingEntry, Findings, FindingsDiff
from metaeval.report.escape import lines as block
from metaeval.report.escape import one_line as o


def _row(e: FindingEntry, today: dt.date) -> list[str]:
    status = e.effective_status(today).value
    if e.expired(today):
        status += f" (accepted until {e.until}, expired)"
    elif e.until:
        status += f" until {e.until}"
    return [o(e.fingerprint[:12]), o(status), f"{o(e.path)}:{e.line}", o(e.rule),
            o(e.breaks or f"in {e.qualname}")]


def findings_table(findings: Findings, today: dt.date) -> str:
    if not findings.entries:
        return "no findings"
    rows = [_row(e, today) for e in findings.entries]
    return tabulate(rows, headers=["id", "status", "where", "rule", "what"])


def finding_text(e: FindingEntry, today: dt.date) -> str:
    lines = [
        f"finding {o(e.fingerprint)}",
        f"  mutant     {o(e.mutant_id)} ({o(e.mutant_status)})",
        f"  where      {o(e.path)}:{e.line} in {o(e.qualname)}",
        f"  rule       {o(e.rule)}",
        f"  status     {_row(e, today)[1]}",
        f"  first seen {o(str(e.first_seen.date))} at {o(e.first_seen.commit[:12])}",
        f"  last seen  {o(str(e.last_seen.date))} at {o(e.last_seen.commit[:12])}",
    ]
    if e.breaks:
        lines.append(f"  breaks     {o(e.breaks)}")
    if e.reason:
        lines.append(f"  accepted   by {o(e.accepted_by)}: {o(e.reason)}")
    return "\n".join([*lines, "", block(e.diff)]).rstrip()


def findings_diff_text(d: FindingsDiff) -> str:
    lines = [f"+ {o(e.fingerprint[:12])} {e.status.value} {o(e.path)}:{e.line} {o(e.rule)}"
             for e in d.added]
    lines += [f"- {o(e.fingerprint[:12])} {e.status.value} {o(e.path)}:{e.line} {o(e.rule)}"
              for e in d.removed]
    lines += [f"~ {o(b.fingerprint[:12])} {a.status.value} -> {b.status.value} "
              f"{o(b.path)}:{b.line}" for a, b in d.changed]
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
        return [f"  {mark} {o(e.fingerprint[:12])} {o(e.path)}:{e.line} {o(e.rule)}"
                + (f" ({o(e.breaks)})" if e.breaks else "") for e in entries]

    out = [f"against {findings_file}: {len(c.new)} new, {len(c.expired)} expired, "
           f"{len(c.known)} known open, {len(c.accepted)} accepted, {len(c.fixed)} fixed"]
    if c.new:
        why = "recorded as open" if recorded else "fail the run"
        out += [f"new survivors ({why}):", *lines(c.new, "+")]
    if c.expired:
        out += ["accepted findings past their expiry (fail the run):",
                *(f"  ! {o(e.fingerprint[:12])} {o(e.path)}:{e.line} {o(e.rule)} "
                  f"(until {o(e.until)}: {o(e.reason)})" for e in c.expired)]
    if c.fixed:
        out += ["fixed (tracked, now detected):", *lines(c.fixed, "-")]
    return "\n".join(out)
