"""Surviving mutants as tracked findings: fingerprints, the findings file, and the
comparison of a run with its baseline.

A fingerprint is built from the file, the qualified name, the operator (or the
patch id) and the normalised mutated code, never from line numbers, so adding
lines above a function or moving it keeps every fingerprint. The findings file
is sorted, stable JSON under version control. This module never decides that a
survivor is fine on its own: only an entry accepted with a reason, before its
expiry date, keeps a known survivor from failing a run.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

from metaeval.data_paths import checked_name
from metaeval.errors import InputError, OutputError, shown
from metaeval.files import write_atomic
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Status
from metaeval.untrusted_json import JsonInputError, read_json_file

FILE_VERSION = 1
SURVIVING = (Status.SURVIVED, Status.NO_COVERAGE)


class FindingStatus(Enum):
    """Whether someone has decided about a finding."""

    OPEN = "open"
    """Nobody has decided: a test is missing, or the mutant no longer describes a bug."""
    ACCEPTED = "accepted"
    """Accepted with a reason (until its expiry date, if it has one)."""


@dataclass(frozen=True, slots=True)
class Seen:
    """When a finding was seen: the commit and the date (ISO, UTC)."""

    commit: str
    date: str


@dataclass(frozen=True, slots=True)
class FindingEntry:
    """One surviving mutant, as tracked in the findings file."""

    fingerprint: str
    mutant_id: str
    rule: str
    """The operator name, or the patch mutant's id."""
    mutant_status: str
    """``Survived`` or ``NoCoverage``."""
    path: str
    line: int
    qualname: str
    breaks: str
    diff: str
    first_seen: Seen
    last_seen: Seen
    status: FindingStatus = FindingStatus.OPEN
    reason: str = ""
    accepted_by: str = ""
    until: str = ""
    """ISO date after which an accepted entry is open again; empty: no expiry."""

    def expired(self, today: dt.date) -> bool:
        return (self.status is FindingStatus.ACCEPTED and bool(self.until)
                and dt.date.fromisoformat(self.until) < today)

    def effective_status(self, today: dt.date) -> FindingStatus:
        return FindingStatus.OPEN if self.expired(today) else self.status


# --- fingerprints ---------------------------------------------------------------------


def _normalise(code: str) -> str:
    return re.sub(r"\s+", " ", code).strip()


def _key(m: Mutant) -> str:
    if m.kind is MutantKind.PATCH:
        parts = ["patch", m.target, m.id, _normalise(m.replacement)]
    else:
        parts = ["rewrite", m.path, m.qualname, m.operator, _normalise(m.original),
                 _normalise(m.replacement)]
    return "\x1f".join(parts)


def fingerprints(mutants: Iterable[Mutant]) -> dict[str, str]:
    """Mutant id -> fingerprint. Two identical faults in one function are told
    apart by the order in which they occur, which moving code does not change.
    ``mutants`` are all a scan found: a run of some of them (``--since``) takes
    theirs from every one, or a fault's order would count only the ones it ran."""
    seen: dict[str, int] = {}
    result: dict[str, str] = {}
    for m in mutants:
        key = _key(m)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        digest = hashlib.sha256(f"{key}\x1f{occurrence}".encode()).hexdigest()
        result[m.id] = digest[:16]
    return result


# --- the findings file ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Findings:
    """The findings file: every tracked survivor, sorted for stable diffs."""

    entries: tuple[FindingEntry, ...] = ()

    def find(self, ref: str) -> FindingEntry:
        """An entry by fingerprint (or a unique prefix of one) or by mutant id."""
        exact = [e for e in self.entries if ref in (e.fingerprint, e.mutant_id)]
        matches = exact or [e for e in self.entries if e.fingerprint.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise InputError(f"no finding {ref!r}; expected a fingerprint (or a unique prefix) "
                             "or a mutant id from 'metaeval findings list'")
        raise InputError(f"{ref!r} matches {len(matches)} findings; give more of the fingerprint")

    def by_fingerprint(self) -> dict[str, FindingEntry]:
        return {e.fingerprint: e for e in self.entries}


def _sorted(entries: Iterable[FindingEntry]) -> tuple[FindingEntry, ...]:
    return tuple(sorted(entries, key=lambda e: (e.path, e.qualname, e.rule, e.fingerprint)))


def _entry_json(e: FindingEntry) -> dict[str, object]:
    document: dict[str, object] = {
        "fingerprint": e.fingerprint, "mutant_id": e.mutant_id, "rule": e.rule,
        "mutant_status": e.mutant_status, "path": e.path, "line": e.line,
        "qualname": e.qualname, "breaks": e.breaks,
        "diff": e.diff.splitlines(),  # a list of lines diffs well under version control
        "first_seen": {"commit": e.first_seen.commit, "date": e.first_seen.date},
        "last_seen": {"commit": e.last_seen.commit, "date": e.last_seen.date},
        "status": e.status.value,
    }
    if e.status is FindingStatus.ACCEPTED:
        document.update(reason=e.reason, accepted_by=e.accepted_by, until=e.until or None)
    return document


def dumps(findings: Findings) -> str:
    document = {"version": FILE_VERSION,
                "findings": [_entry_json(e) for e in _sorted(findings.entries)]}
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def save(findings: Findings, path: Path) -> None:
    """Write atomically, so a crash never leaves half a findings file; ``OutputError``
    when it cannot be written (the file then stays as it was), or when an entry's
    path lies outside the repository (a mutant of an installed module found on
    ``sys.path``): ``load`` refuses such a path, so it is never written."""
    for e in findings.entries:
        try:
            checked_name(e.path, f"finding {e.fingerprint[:12]} ({e.mutant_id}): path")
        except InputError as error:
            raise OutputError(path, OSError(None, f"{error}; the findings file tracks "
                                            "survivors in the repository only")) from error
    write_atomic(path, dumps(findings), follow_links=False)  # tracked data: a branch's file


def load(path: Path, *, missing_ok: bool = True) -> Findings:
    """Read a findings file; a missing file is an empty baseline when ``missing_ok``."""
    if not path.exists():
        if missing_ok:
            return Findings()
        raise InputError(f"{path}: no such findings file")
    try:
        document = read_json_file(path)
    except (OSError, JsonInputError) as e:
        raise InputError(f"{path}: not a findings file: {e}") from e
    if not isinstance(document, dict) or document.get("version") != FILE_VERSION:
        raise InputError(f"{path}: version: got {shown(_get(document, 'version'))}; expected "
                         f"{FILE_VERSION}")
    raw = document.get("findings")
    if not isinstance(raw, list):
        raise InputError(f"{path}: findings: got {shown(raw)}; expected a list")
    return Findings(_sorted(_parse_entry(item, f"{path}: findings[{i}]")
                            for i, item in enumerate(raw)))


def _get(document: object, key: str) -> object:
    return document.get(key) if isinstance(document, dict) else None


def _parse_entry(item: object, where: str) -> FindingEntry:
    if not isinstance(item, dict):
        raise InputError(f"{where}: got {shown(item)}; expected an object")

    def text(key: str, required: bool = True) -> str:
        value = item.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str):
            raise InputError(f"{where}.{key}: got {shown(value)}; expected a string")
        return value

    def seen(key: str) -> Seen:
        value = item.get(key)
        if not isinstance(value, dict) or not all(
                isinstance(value.get(k), str) for k in ("commit", "date")):
            raise InputError(f"{where}.{key}: got {shown(value)}; expected {{commit, date}}")
        return Seen(value["commit"], value["date"])

    line = item.get("line")
    if isinstance(line, bool) or not isinstance(line, int):
        raise InputError(f"{where}.line: got {shown(line)}; expected an integer")
    diff = item.get("diff", [])
    if not isinstance(diff, list) or not all(isinstance(d, str) for d in diff):
        raise InputError(f"{where}.diff: got {shown(diff)}; expected a list of lines")
    status_text = text("status")
    try:
        status = FindingStatus(status_text)
    except ValueError as e:
        raise InputError(f"{where}.status: got {shown(status_text)}; expected 'open' or "
                         "'accepted'") from e
    until = text("until", required=False)
    if until:
        parse_date(until, f"{where}.until")
    # The path is read back by ``findings export --html`` and shown in reports: a
    # findings file comes from a branch, so it may name only a file in the repository.
    path = checked_name(text("path"), f"{where}.path")
    entry = FindingEntry(
        text("fingerprint"), text("mutant_id"), text("rule"), text("mutant_status"),
        path, line, text("qualname"), text("breaks", required=False),
        "\n".join(diff), seen("first_seen"), seen("last_seen"), status,
        text("reason", required=False), text("accepted_by", required=False), until)
    if status is FindingStatus.ACCEPTED and not entry.reason:
        raise InputError(f"{where}.reason: missing; an accepted finding needs a reason")
    return entry


def parse_date(text: str, where: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError as e:
        raise InputError(f"{where}: got {shown(text)}; expected a date YYYY-MM-DD") from e


# --- the last run's survivors ---------------------------------------------------------

LAST_RUN_FILE = Path(".metaeval") / "last-run-findings.json"
"""Under the project root: every survivor of the last finished ``metaeval mutate``,
as a findings file, so that ``metaeval findings`` shows a run's survivors before
(or without) ``--update-baseline``. Data like a cache: read back through ``load``."""


def save_last_run(results: Sequence[MutantResult], diffs: dict[str, str], seen: Seen,
                  root: Path, path: Path | None = None,
                  prints: Mapping[str, str] | None = None) -> None:
    """Write the survivors of a finished run to ``path`` (default ``root /
    LAST_RUN_FILE``, where ``metaeval findings`` reads them); a survivor
    in a file outside the repository (a module found on ``sys.path``) is left out,
    as the findings file leaves it out. ``OutputError`` when it cannot be written."""
    kept = []
    for e in survivors(results, diffs, seen, prints):
        try:
            checked_name(e.path, "path")
        except InputError:
            continue
        kept.append(e)
    write_atomic(root / LAST_RUN_FILE if path is None else path, dumps(Findings(_sorted(kept))),
                 follow_links=False)


@dataclass(frozen=True, slots=True)
class FindingsView:
    """The findings file, and the last run's survivors it does not hold yet."""

    tracked: Findings
    untracked: tuple[FindingEntry, ...] = ()
    """Survivors of the last run whose fingerprint the findings file does not know:
    open, and new to the file."""

    @property
    def every(self) -> Findings:
        return Findings(_sorted((*self.tracked.entries, *self.untracked)))

    def is_tracked(self, entry: FindingEntry) -> bool:
        return entry.fingerprint in self.tracked.by_fingerprint()

    def find(self, ref: str) -> FindingEntry:
        """An entry of the file or of the last run, as ``Findings.find`` finds one."""
        return self.every.find(ref)


def with_last_run(tracked: Findings, last: Findings) -> FindingsView:
    known = tracked.by_fingerprint()
    return FindingsView(tracked, tuple(e for e in last.entries if e.fingerprint not in known))


def accept_in(view: FindingsView, ref: str, reason: str, by: str,
              until: dt.date | None) -> tuple[Findings, FindingEntry]:
    """``accept`` over the file and the last run: an entry of the last run the file
    does not hold yet is added to it, accepted; the other untracked ones are not."""
    every, done = accept(view.every, ref, reason, by, until)
    keep = {*view.tracked.by_fingerprint(), done.fingerprint}
    return Findings(tuple(e for e in every.entries if e.fingerprint in keep)), done


# --- stale entries --------------------------------------------------------------------


class StaleWhy(Enum):
    """Why an entry can no longer match a run, the widest reason first."""

    FILE = "file not targeted"
    """Its file is in no target (a target dropped, or the file moved or deleted)."""
    FUNCTION = "function not targeted"
    """Its file is, but its function or class no longer is, or makes no mutant."""
    MUTANT = "mutant no longer made"
    """The function is targeted, but the fault is not made any more: the code changed
    under it, its operator is no longer chosen, or its patch mutant is gone."""


@dataclass(frozen=True, slots=True)
class Stale:
    """A tracked entry no run of the current targets can find again, and why."""

    entry: FindingEntry
    why: StaleWhy


# --- a run against its baseline -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Comparison:
    """A run's survivors against the findings file.

    ``new`` and ``expired`` fail the run; ``known`` (open, already tracked) and
    ``accepted`` do not; ``fixed`` were tracked and are now detected.
    """

    new: tuple[FindingEntry, ...]
    expired: tuple[FindingEntry, ...]
    known: tuple[FindingEntry, ...]
    accepted: tuple[FindingEntry, ...]
    fixed: tuple[FindingEntry, ...]

    @property
    def failing(self) -> bool:
        return bool(self.new or self.expired)


def _prints(results: Sequence[MutantResult], prints: Mapping[str, str] | None
            ) -> Mapping[str, str]:
    """``prints`` (of every mutant found, the run's among them), else the run's own."""
    return fingerprints(r.mutant for r in results) if prints is None else prints


def survivors(results: Sequence[MutantResult], diffs: dict[str, str],
              seen: Seen, prints: Mapping[str, str] | None = None) -> list[FindingEntry]:
    """Findings for the survivors of one run (Survived and NoCoverage); ``prints``:
    ``fingerprints`` of every mutant found, when the run had only some."""
    prints = _prints(results, prints)
    return [FindingEntry(prints[r.mutant.id], r.mutant.id, _rule(r.mutant), r.status.value,
                         r.mutant.path, r.mutant.span.start_line, r.mutant.qualname,
                         r.mutant.breaks, diffs.get(r.mutant.id, ""), seen, seen)
            for r in results if r.status in SURVIVING]


def _rule(m: Mutant) -> str:
    return m.id if m.kind is MutantKind.PATCH else m.operator


def triage(baseline: Findings, current: Iterable[FindingEntry], today: dt.date
           ) -> tuple[list[FindingEntry], list[FindingEntry], list[FindingEntry],
                      list[FindingEntry]]:
    """This run's survivors against the file, in their order: new (untracked), expired
    (an acceptance past its date), still open, accepted; tracked ones as the file
    holds them. Code mutants and judge mutants share it."""
    known = baseline.by_fingerprint()
    new: list[FindingEntry] = []
    expired: list[FindingEntry] = []
    still_open: list[FindingEntry] = []
    accepted: list[FindingEntry] = []
    for entry in current:
        tracked = known.get(entry.fingerprint)
        if tracked is None:
            new.append(entry)
        elif tracked.expired(today):
            expired.append(tracked)
        elif tracked.status is FindingStatus.ACCEPTED:
            accepted.append(tracked)
        else:
            still_open.append(tracked)
    return new, expired, still_open, accepted


def compare(baseline: Findings, results: Sequence[MutantResult], diffs: dict[str, str],
            seen: Seen, today: dt.date, prints: Mapping[str, str] | None = None
            ) -> Comparison:
    new, expired, still_open, accepted = triage(
        baseline, survivors(results, diffs, seen, prints), today)
    prints = _prints(results, prints)
    detected = {prints[r.mutant.id] for r in results if r.status.detected}
    fixed = [e for e in baseline.entries if e.fingerprint in detected]
    return Comparison(_sorted(new), _sorted(expired), _sorted(still_open), _sorted(accepted),
                      _sorted(fixed))


def updated(baseline: Findings, results: Sequence[MutantResult], diffs: dict[str, str],
            seen: Seen, prints: Mapping[str, str] | None = None) -> Findings:
    """The findings file after a run: new survivors added as open, tracked ones
    refreshed (a decision is kept), detected ones dropped. Entries whose mutant
    did not run (a diff-only run) or could not run (an error) stay as they were."""
    known = baseline.by_fingerprint()
    current = {e.fingerprint: e for e in survivors(results, diffs, seen, prints)}
    prints = _prints(results, prints)
    detected = {prints[r.mutant.id] for r in results if r.status.detected}
    kept = [e for fp, e in known.items() if fp not in current and fp not in detected]
    refreshed = [
        replace(e, first_seen=known[fp].first_seen, status=known[fp].status,
                reason=known[fp].reason, accepted_by=known[fp].accepted_by,
                until=known[fp].until) if fp in known else e
        for fp, e in current.items()]
    return Findings(_sorted([*kept, *refreshed]))


def accept(findings: Findings, ref: str, reason: str, by: str,
           until: dt.date | None) -> tuple[Findings, FindingEntry]:
    if not reason.strip():
        raise InputError("--reason: got an empty reason; expected why this survivor is fine")
    entry = findings.find(ref)
    done = replace(entry, status=FindingStatus.ACCEPTED, reason=reason.strip(),
                   accepted_by=by, until=until.isoformat() if until else "")
    rest = [e for e in findings.entries if e.fingerprint != entry.fingerprint]
    return Findings(_sorted([*rest, done])), done


@dataclass(frozen=True, slots=True)
class FindingsDiff:
    """Two findings files compared: what appeared, what went, what changed status."""

    added: tuple[FindingEntry, ...]
    removed: tuple[FindingEntry, ...]
    changed: tuple[tuple[FindingEntry, FindingEntry], ...]


def diff_findings(old: Findings, new: Findings) -> FindingsDiff:
    before, after = old.by_fingerprint(), new.by_fingerprint()
    return FindingsDiff(
        _sorted(e for fp, e in after.items() if fp not in before),
        _sorted(e for fp, e in before.items() if fp not in after),
        tuple((before[fp], after[fp]) for fp in sorted(before.keys() & after.keys())
              if (before[fp].status, before[fp].until) != (after[fp].status, after[fp].until)))
