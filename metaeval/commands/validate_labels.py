"""``metaeval validate`` of labels files: each row checked as ``meta-eval --labels`` and
``judge-audit --labels`` check it, and joined with the runs and judge items given
beside it, so a typo in a run id or a check is found before a meta-eval.

A labels file is CSV (``run_id, check, label, annotator[, rationale, was, at]``) or
JSON Lines holding runs' rows, judge items' rows (``item_id``), or both (what
``metaeval label`` writes); ``FORMAT:PATH`` reads the labels a run format carries.
With runs (meta-set files or ``--runs FORMAT:PATH``) a run row is joined as
meta-eval joins it (unknown run or check an error); with judge items an item row
is joined as judge-audit joins it; without them, each row is checked on its own
and by the history rule (``loaders.label_history``).
Reads; never prints, never writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.loaders import item_labels, labels_files
from metaeval.loaders.item_labels import join_item_labels, read_item_labels
from metaeval.loaders.judge_items import JudgeItems
from metaeval.loaders.label_history import in_force
from metaeval.loaders.labels_files import join_labels, labels_format, place, read_labels
from metaeval.loaders.meta_set import MetaRun
from metaeval.untrusted_json import LoadError


@dataclass(frozen=True, slots=True)
class LabelsChecked:
    """What the labels files held: rows read, annotators, every error, and each torn
    last line (said, left out)."""

    rows: int
    """Rows that loaded: read, and refused by no join and no history rule."""
    annotators: int
    errors: tuple[LoadError, ...]
    torn: tuple[LoadError, ...]


def check_labels(paths: Sequence[Path], runs: Sequence[MetaRun] | None,
                 items: JudgeItems | None) -> LabelsChecked:
    """Every row of ``paths``; joined with ``runs`` and ``items`` when given."""
    torn: list[LoadError] = []
    annotations, errors = read_labels(paths, torn)
    jsonl = [p for p in paths if p.suffix.lower() in (".jsonl", ".ndjson")
             and labels_format(p) is None]
    item_rows, item_errors = read_item_labels(jsonl, [])
    # A line bad for both readers (no run_id, no item_id) is named once, and a file
    # refused whole (a trace export given as labels) is not then refused line by line.
    said = {(e.path, e.line) for e in errors}
    whole = {e.path for e in errors if e.line == 0}
    errors += [e for e in item_errors if (e.path, e.line) not in said and e.path not in whole]
    if runs is not None:
        errors += join_labels(runs, annotations).errors
    else:
        _, refused = in_force(annotations, labels_files.HISTORY)
        errors += [LoadError(*place(r.row.source), r.field, r.message) for r in refused]
    if items is not None and items.count:
        errors += join_item_labels(items, item_rows)[1]
    else:
        _, refused_items = in_force(item_rows, item_labels.HISTORY)
        errors += [LoadError(*place(r.row.source), r.field, r.message) for r in refused_items]
    # What loaded: the rows no error names (a row refused by a join or the history
    # rule was read, but is not a label anyone will count).
    bad = {(e.path, e.line) for e in errors}
    good = [(a.source, a.annotator) for a in annotations] + [
        (r.source, r.annotator) for r in item_rows]
    good = [(source, who) for source, who in good if place(source) not in bad]
    errors.sort(key=lambda e: (e.path, e.line))
    return LabelsChecked(len(good), len({who for _, who in good}), tuple(errors),
                         tuple(torn))
