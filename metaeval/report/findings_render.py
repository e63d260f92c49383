"""What ``metaeval findings`` prints: the tracked survivors, one, or a diff of two files.

A findings file is data another job or person wrote: every field of an entry is
shown on one line (``o``), its diff as escaped lines (``block``)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from tabulate import tabulate

from metaeval.mutation.findings_file import (
    Comparison,
    FindingEntry,
    Findings,
    FindingsDiff,
    FindingsView,
    Stale,
)
from metaeval.report.escape import lines as block
from metaeval.report.escape import one_line as o

NEW = "open, new"
"""The status shown for a survivor of the last run that the findings file does not
hold yet."""


def _row(e: FindingEntry, today: dt.date, untracked: frozenset[str] = frozenset()
         ) -> list[str]:
    status = e.effective_status(today).value
    if e.fingerprint in untracked:
        status = NEW
    elif e.expired(today):
        status += f" (accepted until {e.until}, expired)"
    elif e.until:
        status += f" until {e.until}"
    return [o(e.fingerprint[:12]), o(status), f"{o(e.path)}:{e.line}", o(e.rule),
            o(e.breaks or f"in {e.qualname}")]


def findings_table(findings: Findings, today: dt.date,
                   untracked: frozenset[str] = frozenset()) -> str:
    """Every entry; those whose fingerprint is in ``untracked`` (the last run's, not
    in the file) say so in their status."""
    if not findings.entries:
        return "no findings"
    rows = [_row(e, today, untracked) for e in findings.entries]
    return tabulate(rows, headers=["id", "status", "where", "rule", "what"])


def view_notes(view: FindingsView, findings_file: Path, stale: int | None) -> list[str]:
    """Under the table: the last run's survivors the file does not hold yet, and how
    many tracked entries are stale (None: not counted)."""
    notes = []
    if view.untracked:
        seen = view.untracked[0].last_seen
        notes.append(f"{len(view.untracked)} new from the last run ({o(seen.date)}, commit "
                     f"{o(seen.commit[:12])}), not yet in {o(str(findings_file))}: "
                     "metaeval mutate --update-baseline records them")
    if stale:
        notes.append(f"{stale} stale (file or function no longer targeted, or mutant no "
                     "longer made): metaeval findings prune")
    return notes


def finding_text(e: FindingEntry, today: dt.date, *, untracked: bool = False,
                 findings_file: Path | None = None) -> str:
    """One entry with its diff; ``untracked``: it is the last run's, not in
    ``findings_file`` yet."""
    status = _row(e, today)[1]
    if untracked:
        status = (f"{NEW}: a survivor of the last run, not in "
                  f"{o(str(findings_file or 'the findings file'))}")
    lines = [
        f"finding {o(e.fingerprint)}",
        f"  mutant     {o(e.mutant_id)} ({o(e.mutant_status)})",
        f"  where      {o(e.path)}:{e.line} in {o(e.qualname)}",
        f"  rule       {o(e.rule)}",
        f"  status     {status}",
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


def findings_json(findings: Findings, today: dt.date,
                  untracked: frozenset[str] = frozenset()) -> str:
    """Every entry; ``tracked`` is false for the last run's survivors not in the file."""
    return json.dumps([{
        "fingerprint": e.fingerprint, "mutant_id": e.mutant_id,
        "status": e.effective_status(today).value, "path": e.path, "line": e.line,
        "rule": e.rule, "breaks": e.breaks, "until": e.until or None,
        "tracked": e.fingerprint not in untracked,
    } for e in findings.entries], indent=2, sort_keys=True)


def prune_text(stale: tuple[Stale, ...], findings_file: Path, *, written: bool) -> str:
    """What ``findings prune`` drops (or would drop, in a dry run), and why."""
    if not stale:
        return f"no stale finding in {o(str(findings_file))}"
    rows = [[o(s.entry.fingerprint[:12]), o(s.entry.status.value),
             f"{o(s.entry.path)}:{s.entry.line}", o(s.entry.qualname), o(s.entry.rule),
             s.why.value] for s in stale]
    table = tabulate(rows, headers=["id", "status", "where", "in", "rule", "stale"])
    if written:
        return f"{table}\nremoved {len(stale)} stale findings from {o(str(findings_file))}"
    return (f"{table}\n{len(stale)} stale findings in {o(str(findings_file))}; "
            "nothing written (dry run): metaeval findings prune --write removes them")


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
