"""Short Markdown summaries for a pull request's checks page (``--summary PATH``).

One per command: a headline saying pass or fail and why, the counts, then what a
reviewer acts on: the new survivors with file:line and a one-line diff, the bars
missed, the probes that found a bias. Written for ``$GITHUB_STEP_SUMMARY``,
which GitHub renders as GitHub-flavoured Markdown; ``append_summary`` adds to
the file, so several commands of one step can share it.

Rendering only: every number was measured before it got here. Text that comes
from the user's code or data (a diff, a check name, a reason) goes into code
spans or is escaped, so it cannot open a link, an image or a table of its own.

The meta-eval and judge-audit summaries live in ``audit_summary``: their types
come with scikit-learn, which a mutate or gate run must not pay to import.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from metaeval.data_paths import read_bounded
from metaeval.errors import InputError, OutputError
from metaeval.files import write_atomic
from metaeval.gate_bars import BarResult, BarStatus
from metaeval.mutation.find.diffs import rewrite_diff
from metaeval.mutation.findings_file import FindingEntry
from metaeval.mutation.model import MutantResult, Status
from metaeval.mutation.score import UNDETECTED, mutation_score, status_counts
from metaeval.report.escape import md_code, md_plain
from metaeval.report.mutate_outcome import MutateOutcome

SUMMARY_LIMIT = 64 * 1024 * 1024
"""Bytes of a summary file read to append to (GitHub keeps 1 MiB of a step's)."""
LISTED = 20
"""At most this many survivors, bars or checks are listed; the rest are counted."""


def append_summary(path: Path, text: str) -> None:
    """Add ``text`` to the Markdown file at ``path`` (created when missing), in one
    atomic write. Raises ``OutputError`` when it cannot be read or written."""
    try:  # a fifo or a device is never read: it would block or never end
        before = (read_bounded(path.resolve(), SUMMARY_LIMIT, str(path)).decode("utf-8")
                  if path.exists() else "")
    except OSError as e:
        raise OutputError(path, e) from e
    except (InputError, UnicodeDecodeError) as e:
        why = str(e).removeprefix(f"{path}: ")
        raise OutputError(path, OSError(None, f"cannot read it to append: {why}")) from e
    if before and not before.endswith("\n\n"):
        before += "\n" if before.endswith("\n") else "\n\n"
    write_atomic(path, before + text.rstrip("\n") + "\n", follow_links=True)


def one_line_diff(diff: str) -> str:
    """The first changed line of a unified diff, before → after, as code spans."""
    removed = next((line[1:] for line in diff.splitlines()
                    if line.startswith("-") and not line.startswith("---")), "")
    added = next((line[1:] for line in diff.splitlines()
                  if line.startswith("+") and not line.startswith("+++")), "")
    if not removed.strip() and not added.strip():
        return "(no diff)"
    return f"{md_code(removed.strip()) if removed.strip() else '(nothing)'} → " \
           f"{md_code(added.strip()) if added.strip() else '(removed)'}"


def listed(lines: list[str], what: str) -> list[str]:
    more = len(lines) - LISTED
    return lines[:LISTED] + ([f"- … and {more} more {what}"] if more > 0 else [])


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers),
            *("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |"
              for row in rows)]


# --- mutate --------------------------------------------------------------------------


def _survivor_line(path: str, line: int, rule: str, diff: str, breaks: str,
                   status: str) -> str:
    what = f" ({status})" if status != Status.SURVIVED.value else ""
    text = f"- {md_code(f'{path}:{line}')} {md_code(rule)}{what}: {one_line_diff(diff)}"
    return text + (f" — breaks: {md_plain(breaks)}" if breaks else "")


def _entry_line(e: FindingEntry) -> str:
    return _survivor_line(e.path, e.line, e.rule, e.diff, e.breaks, e.mutant_status)


def _result_line(r: MutantResult, root: Path) -> str:
    m = r.mutant
    return _survivor_line(m.path, m.span.start_line, m.operator, rewrite_diff(r, root),
                          m.breaks, r.status.value)


def mutate_summary(outcome: MutateOutcome) -> str:
    """The run's score and counts, then the survivors a reviewer must act on: the
    new ones when a findings file was compared, else every undetected one."""
    run = outcome.run
    if run is None:
        why = " ".join(m.text for m in (*outcome.before, *outcome.after)) or "nothing ran"
        mark = "✅" if outcome.code == 0 else "❌"
        return f"### {mark} metaeval mutate: no mutant ran\n\n{md_plain(why)}\n"
    results = run.results
    counts = status_counts(results)
    score = mutation_score(results)
    undetected = [r for r in results if r.status in UNDETECTED]
    c = outcome.comparison
    if c is not None:
        failing = len(c.new) + len(c.expired)
        head = ("no new survivor" if not failing else
                f"{len(c.new)} new survivor{'s' * (len(c.new) != 1)}"
                + (f", {len(c.expired)} expired acceptance" if c.expired else ""))
    else:
        head = ("every mutant detected" if not undetected else
                f"{len(undetected)} undetected mutant{'s' * (len(undetected) != 1)}")
    mark = "✅" if outcome.code == 0 else "❌"
    score_text = "n/a" if score is None else f"{score:.1%}"
    out = [f"### {mark} metaeval mutate: {head}", "",
           f"Mutation score **{score_text}** over {len(results)} mutants.", "",
           *table([s.value for s in Status], [[str(counts[s]) for s in Status]]), ""]
    if c is not None:
        out.append(f"Against the findings file: {len(c.new)} new, {len(c.expired)} expired, "
                   f"{len(c.known)} known open, {len(c.accepted)} accepted, "
                   f"{len(c.fixed)} fixed.")
        if c.new:
            out += ["", "**New survivors** (add a test that kills each, or accept it with "
                    "a reason):", *listed([_entry_line(e) for e in c.new], "survivors")]
        if c.expired:
            out += ["", "**Accepted findings past their expiry:**",
                    *listed([_entry_line(e) for e in c.expired], "findings")]
    elif undetected:
        out += ["**Survivors:**",
                *listed([_result_line(r, outcome.root) for r in undetected], "survivors")]
    if outcome.write_errors:
        out += ["", "Files that could not be written: "
                + ", ".join(md_code(str(e.path)) for e in outcome.write_errors)]
    return "\n".join(out).rstrip() + "\n"


# --- gate ----------------------------------------------------------------------------


def _value(r: BarResult) -> str:
    return "—" if r.value is None else f"{r.value:.4g}"


def gate_summary(decided: Sequence[BarResult]) -> str:
    """Every bar with its value; the ones that fail listed first."""
    failing = [r for r in decided if r.status.fails]
    mark = "❌" if failing else "✅"
    head = (f"{len(failing)} of {len(decided)} bars fail" if failing
            else f"all {len(decided)} bars met")
    out = [f"### {mark} metaeval gate: {head}", ""]
    if failing:
        out += ["**Bars missed:**", *listed([
            f"- {md_code(r.bar.metric)}: {_value(r)}, bar {md_code(r.bar.describe())}"
            + (" (missing)" if r.status is BarStatus.MISSING else "")
            + (f" — {md_plain(r.detail)}" if r.detail else "") for r in failing], "bars"), ""]
    rows = [[md_code(r.bar.metric), _value(r), md_code(r.bar.describe()), r.status.value]
            for r in decided]
    out += table(["metric", "value", "bar", "status"], rows)
    return "\n".join(out).rstrip() + "\n"
