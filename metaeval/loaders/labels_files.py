"""Labels files: people's labels kept apart from the runs they label, joined by run id.

A labels file is CSV (a header row naming the columns) or JSON Lines, one label
a row: ``run_id, check, label, annotator[, rationale]``. ``check`` names a
check of the run, or is ``*`` for the run's overall verdict; ``label`` is
``pass`` or ``fail``. Several annotators may label one run; the gold label of a
(run, check) is the majority of its annotators' labels, and a tie gives none
(that check is unlabelled on that run, never a guess). ``unsure`` (what
``metaeval label`` writes when a person cannot decide) is read and counts as that
annotator's one row, but is no label: it takes no part in the gold label or the
agreement. A JSON Lines row with ``item_id`` instead of ``run_id`` labels a judge
item (``metaeval.loaders.item_labels``, read by ``judge-audit --labels``) and is passed
over here, so one file can hold both. A run some labels file
names takes its labels from the files alone; a run none names keeps the label in
its line, or is unlabelled.

A format that carries people's verdicts (``RunFormat.labels``: MLflow assessments,
Langfuse scores) is read as a labels file is with ``FORMAT:PATH`` in place of a file
(``mlflow:traces/``; a directory expands by the format's suffixes): each row it gives
goes through the same checks as a labels file's row. A path that exists is always a
labels file, whatever its name holds: a file named ``x:y.csv`` is never read as format
``x``.

Every row is data from other people: a label for a run id that was not loaded,
for a check the run does not have, a second label by one annotator for one
(run, check), or a bad value is a ``file:line`` error naming the column, and that
row is left out. This module reads files and joins; it measures nothing.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from metaeval.contract import Outcome
from metaeval.errors import BadField, InputError, shown
from metaeval.importers.runs import FORMATS, HEAD
from metaeval.importers.runs.common import BadRecord, RunFormat
from metaeval.keys import did_you_mean
from metaeval.loaders.judge_labels import MAX_ANNOTATORS as JUDGE_ITEM_ANNOTATORS
from metaeval.loaders.label_history import HISTORY_COLUMNS, WAS, Rows, checked_at, in_force
from metaeval.loaders.meta_set import Label, MetaRun
from metaeval.untrusted_json import JsonInputError, LoadError, open_regular, read_jsonl

OVERALL = "*"
"""The ``check`` of a label that is the run's overall verdict."""
REQUIRED = ("run_id", "check", "label", "annotator")
COLUMNS = (*REQUIRED, "rationale", *HISTORY_COLUMNS)
LABELS = {"pass": Outcome.PASS, "fail": Outcome.FAIL, "unsure": Outcome.UNSCORED}
"""``unsure`` is read as UNSCORED: the annotator's row, with no label in it."""
ITEM_ID = "item_id"
"""The column of a row that labels a judge item, not a run (``metaeval.loaders.item_labels``)."""
EXTRA = "\0extra"
"""Where the CSV reader puts the fields of a row longer than its header."""
MAX_FIELD = 10_000
"""Characters a field may hold; a longer one is an error, not a row kept whole."""
LINE_LIMIT = 1 << 20
"""Bytes of one line of a CSV labels file: a row of five fields of ``MAX_FIELD``
characters, quoted, fits many times over; a longer line is an error and only that
line is held, at most this much of it."""
MAX_ANNOTATORS = JUDGE_ITEM_ANNOTATORS
"""Distinct annotators the labels files of one run may name, as a judge item may have:
agreement pairs every two of them, so their number bounds the time it takes."""


@dataclass(frozen=True, slots=True)
class Annotation:
    """One row of a labels file: what one annotator said about one check of one run."""

    run_id: str
    check: str
    label: Outcome
    annotator: str
    rationale: str
    source: str
    """``file:line`` of the row."""
    was: str | None = None
    """A change's label it replaces, as written (``label_history``); None on a first
    label."""


@dataclass(frozen=True, slots=True)
class Joined:
    """Runs with the labels files' gold labels, the rows that joined, and the errors."""

    runs: tuple[MetaRun, ...]
    annotations: tuple[Annotation, ...]
    errors: tuple[LoadError, ...]
    tied: int = 0
    """(run, check) pairs whose annotators tied: no gold label, left unlabelled."""


def _row(values: dict[str, object], source: str) -> Annotation:
    for column in REQUIRED:
        value = values.get(column)
        if not isinstance(value, str) or not value:
            got = "nothing" if value is None or value == "" else shown(value)
            raise BadField(column, f"got {got}; expected a non-empty string")
    rationale = values.get("rationale", "")
    if rationale is None:
        rationale = ""
    if not isinstance(rationale, str):
        raise BadField("rationale", f"got {shown(rationale)}; expected a string")
    for column in COLUMNS:
        text = values.get(column)
        if isinstance(text, str) and len(text) > MAX_FIELD:
            raise BadField(column, f"got {len(text)} characters; expected at most {MAX_FIELD}")
    label = str(values["label"])
    if label not in LABELS:
        raise BadField("label", f"got {shown(label)}; expected 'pass', 'fail' or 'unsure'")
    was = values.get(WAS)
    if was is not None and was != "" and was not in LABELS:
        raise BadField(WAS, f"got {shown(was)}; expected the label this row changes: 'pass', "
                            "'fail' or 'unsure'")
    checked_at(values.get("at"))
    return Annotation(str(values["run_id"]), str(values["check"]), LABELS[label],
                      str(values["annotator"]), rationale, source,
                      str(was) if was else None)


def _unknown(columns: Iterable[str]) -> BadField | None:
    unknown = sorted(set(columns) - set(COLUMNS))
    if not unknown:
        return None
    return BadField(unknown[0], f"unknown column; expected {', '.join(COLUMNS)}"
                            f"{did_you_mean(unknown[0], COLUMNS)}")


class _Lines:
    """The text lines of a CSV file read as bytes a line at a time, for ``csv``: a line
    that is not UTF-8 or longer than ``LINE_LIMIT`` bytes is an error of its own
    (its row is lost, never the rest of the file); ``number`` is the line last read."""

    def __init__(self, path: Path, source: BinaryIO, errors: list[LoadError]) -> None:
        self.path, self.source, self.errors = path, source, errors
        self.number = 0

    def __iter__(self) -> Iterator[str]:
        while raw := self.source.readline(LINE_LIMIT + 1):
            self.number += 1
            if len(raw) > LINE_LIMIT and not raw.endswith(b"\n"):
                while (rest := self.source.readline(LINE_LIMIT)) and not rest.endswith(b"\n"):
                    pass  # the rest of the long line, dropped a bounded piece at a time
                self.errors.append(LoadError(str(self.path), self.number, "", (
                    f"a line of more than {LINE_LIMIT} bytes; expected fields of at most "
                    f"{MAX_FIELD} characters")))
                continue
            if self.number == 1:
                raw = raw.removeprefix(codecs.BOM_UTF8)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                self.errors.append(LoadError(str(self.path), self.number, "", (
                    f"not UTF-8: byte {raw[e.start]:#04x} at column {e.start + 1}; expected a "
                    "UTF-8 CSV file")))
                continue
            # Split as the csv module would (\r alone ends a line too), nothing more.
            yield from io.StringIO(text, newline="")


def _read_csv(path: Path, errors: list[LoadError]) -> list[Annotation]:
    # Opened as the JSON Lines reader opens (a regular file only: a fifo, a device or
    # a folder is refused before a byte is read) and read a line at a time.
    try:
        with open_regular(path) as source:
            return _csv_rows(path, _Lines(path, source, errors), errors)
    except (OSError, JsonInputError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        errors.append(LoadError(str(path), 0, "", f"cannot read: {reason}"))
        return []


def _csv_rows(path: Path, lines: _Lines, errors: list[LoadError]) -> list[Annotation]:
    reader = csv.DictReader(lines, restkey=EXTRA)
    try:
        header = reader.fieldnames or []
    except csv.Error as e:
        errors.append(LoadError(str(path), lines.number, "", f"not a valid CSV header: {e}"))
        return []
    bad = _unknown(h for h in header) or next(
        (BadField("", f"no column {c!r}; expected a header row with {', '.join(REQUIRED)}"
                  "[, rationale]") for c in REQUIRED if c not in header), None)
    if bad is not None:
        errors.append(LoadError(str(path), lines.number, bad.field, bad.message))
        return []
    found = []
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            # One bad row (a field past the csv module's own limit): the reader
            # starts again at the next line, so the rows after it are still read.
            reason = (f"a field of more than {csv.field_size_limit()} characters; expected at "
                      f"most {MAX_FIELD}") if "field limit" in str(e) else f"not valid CSV: {e}"
            errors.append(LoadError(str(path), lines.number, "", reason))
            continue
        line = lines.number
        try:
            if EXTRA in row:
                raise BadField("", f"got {len(header) + len(row[EXTRA])} fields; expected "
                               f"{len(header)}, as the header names")
            found.append(_row(dict(row), f"{path}:{line}"))
        except BadField as e:
            errors.append(LoadError(str(path), line, e.field, e.message))
    return found


def _read_jsonl(path: Path, errors: list[LoadError],
                torn: list[LoadError] | None) -> list[Annotation]:
    found = []
    for record in read_jsonl(path, errors, torn):
        try:
            if not isinstance(record.value, dict):
                raise BadField("", f"got {shown(record.value)}; expected a JSON object with "
                               f"{', '.join(REQUIRED)}")
            if ITEM_ID in record.value and "run_id" not in record.value:
                continue  # a judge item's label: judge-audit --labels reads it
            bad = _unknown(record.value)
            if bad is not None:
                raise bad
            found.append(_row(dict(record.value), record.source))
        except BadField as e:
            errors.append(record.error(e.field, e.message))
    return found


def labels_format(path: Path) -> tuple[RunFormat, Path] | None:
    """The format and path ``FORMAT:PATH`` names (``mlflow:traces/``), or None for a
    labels file. A path that exists is a labels file whatever its name holds, so a
    user's file named ``x:y.csv`` is never misread as format ``x``."""
    if os.path.lexists(path):
        return None
    name, sep, rest = str(path).partition(":")
    unit = FORMATS.get(name)
    return (unit, Path(rest)) if sep and rest and unit is not None else None


def configured(root: Path, name: str) -> Path:
    """A ``labels`` entry of the config, relative to the project's ``root``: a labels
    file, or ``FORMAT:PATH`` with its PATH under ``root`` (a file of that name that
    exists is still the file)."""
    if os.path.lexists(root / name):
        return root / name
    fmt, sep, rest = name.partition(":")
    return Path(f"{fmt}:{root / rest}") if sep and rest and fmt in FORMATS else root / name


def _carriers() -> str:
    names = sorted(name for name, unit in FORMATS.items() if unit.labels is not None)
    return ", ".join(names) if names else "none (no registered format carries labels)"


def refuse_unlabelled(paths: Iterable[Path], where: str = "--labels") -> None:
    """An ``InputError`` for a ``FORMAT:PATH`` whose format carries no labels: the
    user meant labels, and none would be read (never an empty join that looks like
    unlabelled runs)."""
    for path in paths:
        spec = labels_format(path)
        if spec is not None and spec[0].labels is None:
            raise InputError(f"{where}: got {shown(str(path))}; format {spec[0].name!r} "
                             "carries no labels; expected a labels file (.csv, .jsonl) or "
                             f"FORMAT:PATH with FORMAT one of {_carriers()}")


def _format_hint(path: Path) -> str:
    """For a missing file whose name reads as ``NAME:PATH``: what FORMAT may be."""
    name, sep, _ = str(path).partition(":")
    if not sep or not re.fullmatch(r"[A-Za-z][\w-]*", name):
        return ""
    carriers = [n for n, unit in FORMATS.items() if unit.labels is not None]
    return (f"; or, if {name!r} was meant as a format, expected FORMAT:PATH with FORMAT "
            f"one of {_carriers()}{did_you_mean(name, carriers)}")


def _format_file(path: Path) -> str:
    """For a JSON Lines file given as a labels file that a run format claims by its
    first bytes (a trace export given without ``FORMAT:``): what to give instead, once,
    rather than 'unknown column' on every line. A first row with an ``annotator`` is
    a labels file's, whatever its text holds."""
    try:
        with open_regular(path) as f:
            head = f.read(HEAD)
    except (OSError, JsonInputError):
        return ""  # the labels reader says why it cannot read it
    try:
        row = json.loads(head.split(b"\n", 1)[0])
    except ValueError:
        row = None
    if isinstance(row, dict) and "annotator" in row:
        return ""
    names = sorted(name for name, unit in FORMATS.items() if unit.sniff(head, path))
    carriers = [name for name in names if FORMATS[name].labels is not None]
    if carriers:
        unit = FORMATS[carriers[0]]
        return (f"got a file of format {unit.name!r} (by its first bytes), not a labels "
                f"file; expected --labels {unit.name}:PATH to read the verdicts that format "
                f"carries (docs/{unit.docs})")
    if names:
        return (f"got runs of format {names[0]!r} (by their first bytes), which carry no "
                f"labels; expected a labels file, or FORMAT:PATH with FORMAT one of "
                f"{_carriers()}")
    return ""


def _format_files(unit: RunFormat, path: Path, errors: list[LoadError]) -> list[Path]:
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in unit.suffixes)
        if not found:
            errors.append(LoadError(str(path), 0, "", f"no {' or '.join(unit.suffixes)} "
                                                      f"files of format {unit.name!r} here"))
        return found
    if not path.is_file():
        errors.append(LoadError(str(path), 0, "", "no such file or directory"))
        return []
    return [path]


def _read_format(unit: RunFormat, path: Path, errors: list[LoadError],
                 said: list[LoadError] | None = None) -> list[Annotation]:
    """The rows format ``unit`` reads from ``path``, each checked as a labels file's row
    is. The format's reader raises ``BadRecord`` for a file it cannot read at all (the
    error names the file); a verdict it cannot map it gives as it is, and the checks
    here refuse that row alone. What the reader read and gave no row for (its rows'
    ``left_out`` notes, if any) goes to ``said``, the warnings."""
    assert unit.labels is not None  # refuse_unlabelled said so first
    found: list[Annotation] = []
    for file in _format_files(unit, path, errors):
        try:
            rows = unit.labels(file)
            for source, columns in rows:
                # Every error names the file, even from a reader whose source does not.
                source = source if source.startswith(str(file)) else f"{file}:{source}"
                try:
                    bad = _unknown(columns)
                    if bad is not None:
                        raise bad
                    found.append(_row(dict(columns), source))
                except BadField as e:
                    errors.append(LoadError(*place(source), e.field, e.message))
            # What the format read but gives no row for (a judge's verdict in MLflow
            # feedback) is said, never dropped in silence.
            left_out = getattr(rows, "left_out", ())
            if said is not None and isinstance(left_out, list | tuple):
                said += [LoadError(str(file), 0, "", str(note)) for note in left_out]
        except BadRecord as e:
            errors.append(LoadError(str(file), 0, e.field, e.message))
        except (OSError, JsonInputError, InputError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            errors.append(LoadError(str(file), 0, "", f"cannot read: {reason}"))
    return found


def read_labels(paths: Iterable[Path], torn: list[LoadError] | None = None
                ) -> tuple[list[Annotation], list[LoadError]]:
    """Every good row of every labels file (``.csv``; ``.jsonl`` or ``.ndjson``; or
    ``FORMAT:PATH``, a format's labels), in file and line order; each bad row or file
    an error. A row naming an annotator past the first ``MAX_ANNOTATORS`` is an error
    too (the others are read). ``torn``: where a JSON Lines file's torn last line (a
    write that never finished, as the labelling page may leave after a power cut) is
    said and left out; without it, it is an error. Raises ``InputError`` before
    reading for a ``FORMAT:PATH`` whose format carries no labels."""
    paths = list(paths)
    refuse_unlabelled(paths)
    annotations: list[Annotation] = []
    errors: list[LoadError] = []
    for path in paths:
        suffix = path.suffix.lower()
        spec = labels_format(path)
        if spec is not None:
            annotations += _read_format(*spec, errors, torn)
        elif not os.path.lexists(path) and _format_hint(path):
            # A misspelt format (langsmth:feedback.jsonl) is a missing file whose name
            # reads as FORMAT:PATH: say so before the suffix picks a reader.
            errors.append(LoadError(str(path), 0, "", f"no such file{_format_hint(path)}"))
        elif suffix == ".csv":
            annotations += _read_csv(path, errors)
        elif suffix in (".jsonl", ".ndjson"):
            if said := _format_file(path):
                errors.append(LoadError(str(path), 0, "", said))
            else:
                annotations += _read_jsonl(path, errors, torn)
        elif not path.is_file():
            errors.append(LoadError(str(path), 0, "", f"no such file{_format_hint(path)}"))
        else:
            errors.append(LoadError(str(path), 0, "", f"got a {suffix or 'suffixless'} file; "
                                                      "expected .csv, .jsonl or .ndjson"))
    return _within_bound(annotations, errors), errors


def _within_bound(annotations: list[Annotation], errors: list[LoadError]) -> list[Annotation]:
    annotators: set[str] = set()
    kept = []
    for a in annotations:
        if a.annotator not in annotators and len(annotators) >= MAX_ANNOTATORS:
            errors.append(_error(a, "annotator", (
                f"got {shown(a.annotator)}, one annotator more than the {MAX_ANNOTATORS} "
                f"these labels files name already; expected at most {MAX_ANNOTATORS} "
                "annotators (agreement pairs every two of them)")))
            continue
        annotators.add(a.annotator)
        kept.append(a)
    return kept


WRITTEN = {outcome: text for text, outcome in LABELS.items()}
"""A label as a labels file writes it (``unsure``, not ``unscored``)."""
HISTORY: Rows[Annotation] = Rows(
    key=lambda a: (a.run_id, a.check, a.annotator), label=lambda a: WRITTEN[a.label],
    was=lambda a: a.was, source=lambda a: a.source, annotator=lambda a: a.annotator,
    what=lambda a: f"check {shown(a.check)} of run {shown(a.run_id)}")
"""A runs' labels file's rows seen by the history rule: one label per annotator's
(run, check), and changes that name the label they replace."""


def place(source: str) -> tuple[str, int]:
    """A row's source as an error's path and line: ``file:line``, or, for a format's
    row that names a record (``file:trace 7f3a``), the whole source at line 0."""
    path, sep, line = source.rpartition(":")
    return (path, int(line)) if sep and line.isdigit() else (source, 0)


def _error(a: Annotation, field: str, message: str) -> LoadError:
    return LoadError(*place(a.source), field, message)


def gold(labels: Sequence[Outcome]) -> Outcome | None:
    """The majority of ``labels``; None on a tie (or none): no gold label, not a guess."""
    counts = Counter(labels).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def join_labels(runs: Sequence[MetaRun], annotations: Iterable[Annotation]) -> Joined:
    """``runs`` with the gold labels of the rows that name them; the rows that joined,
    and an error for each that cannot (unknown run id or check, a repeated label)."""
    joiner = Joiner(annotations)
    joined = tuple(joiner.join(run) for run in runs)
    kept, errors, tied = joiner.finish()
    return Joined(joined, kept, errors, tied)


class Joiner:
    """Labels joined with runs one at a time, as a stream of runs is read: the rows are
    held (they are small), the runs are not. ``finish`` names the rows no run took."""

    def __init__(self, annotations: Iterable[Annotation]) -> None:
        self.errors: list[LoadError] = []
        self.unsure: list[Annotation] = []
        self.per_run: dict[str, dict[str, list[Annotation]]] = {}
        current, refused = in_force(annotations, HISTORY)
        self.errors.extend(_error(r.row, r.field, r.message) for r in refused)
        for a in current:
            if a.label is Outcome.UNSCORED:
                # Unsure: this annotator's row for the check, but no label to count.
                self.unsure.append(a)
                continue
            self.per_run.setdefault(a.run_id, {}).setdefault(a.check, []).append(a)
        self.seen: set[str] = set()
        self.kept: list[Annotation] = []
        self.tied = 0

    def join(self, run: MetaRun) -> MetaRun:
        """``run`` with the gold labels of the rows that name it (else as it is)."""
        self.seen.add(run.id)
        rows = self.per_run.get(run.id)
        if rows is None:
            return run
        checks = {c.label for c in run.input.task.checks}
        golds: dict[str, Outcome | None] = {}
        annotators: set[str] = set()
        for check, labels in rows.items():
            if check != OVERALL and check not in checks:
                expected = ", ".join(sorted(checks)) or "none"
                self.errors.extend(_error(a, "check", (
                    f"got {shown(a.check)}; expected '*' (the overall verdict) or a check of "
                    f"run {shown(a.run_id)}: {expected}{did_you_mean(a.check, checks)}"))
                    for a in labels)
                continue
            self.kept.extend(labels)
            annotators.update(a.annotator for a in labels)
            golds[check] = gold([a.label for a in labels])
        if not golds:
            return run
        self.tied += sum(g is None for g in golds.values())
        overall = golds.pop(OVERALL, None)
        criteria = {check: g for check, g in golds.items() if g is not None}
        no_gold = frozenset(check for check, g in golds.items() if g is None)
        label = Label(overall, None, criteria, labeller=", ".join(sorted(annotators)),
                      tied=no_gold)
        return replace(run, label=label)

    def finish(self, lost: Callable[[str], bool] = lambda run_id: False
               ) -> tuple[tuple[Annotation, ...], tuple[LoadError, ...], int]:
        """The rows that joined (in file order), every error (in file order), and the
        ties. A row for a run id that was never read is an error here; when ``lost``
        says that run failed to load (its error said already), the rows of each file
        are one line, not one error each: the root error is the one to read."""
        unjoined: Counter[str] = Counter()
        for run_id, rows in self.per_run.items():
            if run_id not in self.seen and lost(run_id):
                for a in (a for labels in rows.values() for a in labels):
                    unjoined[a.source.rpartition(":")[0]] += 1
                continue
            if run_id not in self.seen:
                hint = did_you_mean(run_id, self.seen)
                self.errors.extend(_error(a, "run_id", f"got {shown(a.run_id)}; expected the "
                                                       f"id of a loaded run{hint}")
                                   for labels in rows.values() for a in labels)
        for a in self.unsure:
            if a.run_id in self.seen:
                continue
            if lost(a.run_id):
                unjoined[a.source.rpartition(":")[0]] += 1
                continue
            hint = did_you_mean(a.run_id, self.seen)
            self.errors.append(_error(a, "run_id", f"got {shown(a.run_id)}; expected the id of "
                                                   f"a loaded run{hint}"))
        self.errors.extend(LoadError(path, 0, "", f"{n} label rows not joined: their runs did "
                                                  "not load") for path, n in unjoined.items())
        kept = sorted(self.kept, key=_order)
        errors = sorted(self.errors, key=lambda e: (e.path, e.line))
        return tuple(kept), tuple(errors), self.tied


def _order(a: Annotation) -> tuple[str, int]:
    return place(a.source)
