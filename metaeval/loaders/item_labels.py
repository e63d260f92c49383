"""Judge items' labels kept in a labels file, apart from the items, joined by id.

A row is one JSON object a line: ``item_id, label, annotator[, rationale,
shown]``. ``label`` is of the kind the item takes (``a``/``b``/``tie`` on a
pairwise item, naming the item's response whatever side it was shown on;
``pass``/``fail`` or an integer on the label scale on a pointwise one), or
``unsure``: that annotator's row, with no label in it. ``shown`` (``ab`` or
``ba``) is the order the pair was shown in, ``ba`` being ``response_b`` on the
left, so an annotator's own position bias can be measured. Rows with ``run_id``
label runs (``metaeval.loaders.labels_files``) and are passed over here: ``metaeval label``
writes both kinds to one file.

A joined row becomes one more annotator of its item (``judge_labels.Annotation``);
an item with no label of its own (``"label": null``, or no consensus) takes the
consensus of all its annotators, and one with its own keeps it. Every bad row (an
unknown item, a label the item does not take, a second row by one annotator) is
a ``file:line`` error naming the column, and is left out. This module reads and
joins; it measures nothing and writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from metaeval.contract import JsonValue
from metaeval.errors import BadField, shown
from metaeval.keys import did_you_mean
from metaeval.loaders.judge_items import JudgeItems, PairItem, PointItem
from metaeval.loaders.judge_labels import (
    NO_CONSENSUS,
    Annotation,
    consensus,
    pair_consensus,
    pair_label,
    point_label,
)
from metaeval.loaders.label_history import HISTORY_COLUMNS, WAS, Rows, checked_at, in_force
from metaeval.loaders.labels_files import labels_format
from metaeval.untrusted_json import LoadError, read_jsonl

REQUIRED = ("item_id", "label", "annotator")
COLUMNS = (*REQUIRED, "rationale", "shown", *HISTORY_COLUMNS)
UNSURE = "unsure"
ORDERS = ("ab", "ba")
MAX_FIELD = 10_000
"""Characters a text field may hold, as in a runs' labels file."""


@dataclass(frozen=True, slots=True)
class ItemLabel:
    """One row: what one annotator said about one judge item."""

    item_id: str
    label: str | int
    """``unsure``, or the label as written (checked against its item on joining)."""
    annotator: str
    rationale: str
    shown: str | None
    """``ab`` or ``ba``: the order the pair was shown in; None when not recorded."""
    source: str
    was: str | int | None = None
    """A change's label it replaces, as written (``label_history``); None on a first label."""


def _text(value: JsonValue, column: str, *, required: bool) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        got = "nothing" if value is None or value == "" else shown(value)
        raise BadField(column, f"got {got}; expected a {'non-empty ' if required else ''}string")
    if len(value) > MAX_FIELD:
        raise BadField(column, f"got {len(value)} characters; expected at most {MAX_FIELD}")
    return value


def parse_row(value: JsonValue, source: str) -> ItemLabel:
    """One row, checked on its own (not yet against an item); raises ``ValueError``
    with ``column: message`` when it is bad."""
    try:
        return _parse(value, source)
    except BadField as e:
        raise ValueError(f"{e.field}: {e.message}" if e.field else e.message) from e


def _parse(value: JsonValue, source: str) -> ItemLabel:
    if not isinstance(value, dict):
        raise BadField("", f"got {shown(value)}; expected a JSON object with "
                       f"{', '.join(REQUIRED)}")
    unknown = sorted(set(value) - set(COLUMNS))
    if unknown:
        raise BadField(unknown[0], f"unknown column; expected {', '.join(COLUMNS)}"
                               f"{did_you_mean(unknown[0], COLUMNS)}")
    item_id = _text(value.get("item_id"), "item_id", required=True)
    annotator = _text(value.get("annotator"), "annotator", required=True)
    label = value.get("label")
    if isinstance(label, str):
        label = _text(label, "label", required=True)
    elif isinstance(label, bool) or not isinstance(label, int):
        raise BadField("label", f"got {shown(label)}; expected 'a', 'b', 'tie', 'pass', 'fail', "
                            "an integer on the label scale, or 'unsure'")
    order = value.get("shown")
    if order is not None and order not in ORDERS:
        raise BadField("shown", f"got {shown(order)}; expected 'ab' or 'ba' (the order the "
                            "pair was shown in)")
    was = value.get(WAS)
    if was is not None and (isinstance(was, bool) or not isinstance(was, str | int)
                            or was == ""):
        raise BadField(WAS, f"got {shown(was)}; expected the label this row changes, as "
                            "written in the row it changes")
    if isinstance(was, str):
        was = _text(was, WAS, required=True)
    checked_at(value.get("at"))
    return ItemLabel(item_id, label, annotator,
                     _text(value.get("rationale"), "rationale", required=False),
                     order if isinstance(order, str) else None, source, was)


def read_item_labels(paths: Iterable[Path], torn: list[LoadError] | None = None
                     ) -> tuple[list[ItemLabel], list[LoadError]]:
    """Every good item row of every labels file (JSON Lines), in file and line order;
    rows that label runs (``run_id``) are passed over; each bad row an error.
    ``torn``: as ``labels_files.read_labels``'."""
    rows: list[ItemLabel] = []
    errors: list[LoadError] = []
    for path in paths:
        if labels_format(path) is not None:
            # A format's verdicts label its runs (traces), never judge items.
            errors.append(LoadError(str(path), 0, "", "FORMAT:PATH reads a run format's labels, "
                                    "which label runs: give it to meta-eval --labels; expected "
                                    "a .jsonl file of judge items' labels (item_id, label, "
                                    "annotator)"))
            continue
        if path.suffix.lower() not in (".jsonl", ".ndjson"):
            errors.append(LoadError(str(path), 0, "", f"got a {path.suffix or 'suffixless'} "
                                                      "file; expected .jsonl or .ndjson"))
            continue
        for record in read_jsonl(path, errors, torn):
            if isinstance(record.value, dict) and "run_id" in record.value and (
                    "item_id" not in record.value):
                continue  # a run's label: meta-eval --labels reads it
            try:
                rows.append(_parse(record.value, record.source))
            except BadField as e:
                errors.append(record.error(e.field, e.message))
    return rows, errors


HISTORY: Rows[ItemLabel] = Rows(
    key=lambda r: (r.item_id, r.annotator), label=lambda r: r.label, was=lambda r: r.was,
    source=lambda r: r.source, annotator=lambda r: r.annotator,
    what=lambda r: f"item {shown(r.item_id)}")
"""Item label rows seen by the history rule (``label_history``)."""


def _error(row: ItemLabel, field: str, message: str) -> LoadError:
    path, _, line = row.source.rpartition(":")
    return LoadError(path, int(line), field, message)


def _checked(row: ItemLabel, item: PairItem | PointItem, scale: tuple[int, int]
             ) -> str | int:
    label: str | int | None
    if isinstance(item, PairItem):
        label = pair_label(row.label)
        expected = "'a', 'b', 'tie' or 'unsure' (a pairwise item)"
    else:
        label = point_label(row.label, scale)
        expected = (f"'pass', 'fail', an integer {scale[0]}-{scale[1]} or 'unsure' "
                    "(a pointwise item)")
    if label is None:
        raise BadField("label", f"got {shown(row.label)} for item {shown(row.item_id)}; "
                            f"expected {expected}")
    if row.shown is not None and isinstance(item, PointItem):
        raise BadField("shown", f"got {shown(row.shown)} for the pointwise item "
                            f"{shown(row.item_id)}; expected none (one response, no order)")
    return label


def join_item_labels(items: JudgeItems, rows: Sequence[ItemLabel],
                     scale: tuple[int, int] = (1, 5)) -> tuple[JudgeItems, list[LoadError]]:
    """``items`` with each row joined to its item as one more annotator, and an error
    for each row that cannot be (see the module docstring). ``scale``: the range of
    integer labels (``--label-scale``)."""
    by_id: dict[str, PairItem | PointItem] = {i.id: i for i in items.pointwise}
    by_id.update((i.id, i) for i in items.pairwise)
    current, refused = in_force(rows, HISTORY)
    errors: list[LoadError] = [_error(r.row, r.field, r.message) for r in refused]
    added: dict[str, list[Annotation]] = {}
    for row in current:
        item = by_id.get(row.item_id)
        if item is None:
            errors.append(_error(row, "item_id", f"got {shown(row.item_id)}; expected the id "
                                                 f"of a loaded item"
                                                 f"{did_you_mean(row.item_id, by_id)}"))
            continue
        if row.annotator in {a.annotator for a in item.annotations}:
            errors.append(_error(row, "annotator", (
                f"{shown(row.annotator)} already labelled item {shown(row.item_id)} (at "
                f"the item's own labels, {item.source}); expected one label per annotator")))
            continue
        if row.label == UNSURE:
            continue
        try:
            label = _checked(row, item, scale)
        except BadField as e:
            errors.append(_error(row, e.field, e.message))
            continue
        given = (*item.annotations, *added.get(row.item_id, ()))
        if given and isinstance(label, int) is not isinstance(given[0].label, int):
            errors.append(_error(row, "label", (
                f"got {shown(label)} beside {shown(given[0].label)}; expected every "
                f"annotator's label of item {shown(row.item_id)} of one kind (all pass/fail "
                "or all integers)")))
            continue
        added.setdefault(row.item_id, []).append(Annotation(row.annotator, label, row.shown))
    pairs = tuple(_pair(i, tuple(added[i.id])) if i.id in added else i
                  for i in items.pairwise)
    points = tuple(_point(i, tuple(added[i.id])) if i.id in added else i
                   for i in items.pointwise)
    errors.sort(key=lambda e: (e.path, e.line))
    return replace(items, pointwise=points, pairwise=pairs), errors


def _pair(item: PairItem, new: tuple[Annotation, ...]) -> PairItem:
    annotations = (*item.annotations, *new)
    if item.label is None or item.label == NO_CONSENSUS:
        return replace(item, annotations=annotations, label=pair_consensus(annotations))
    return replace(item, annotations=annotations)


def _point(item: PointItem, new: tuple[Annotation, ...]) -> PointItem:
    annotations = (*item.annotations, *new)
    if item.labelled or item.label_class is not None:
        return replace(item, annotations=annotations)
    agreed = consensus(annotations)
    return replace(item, annotations=annotations,
                   verdict=agreed if isinstance(agreed, str) else None,
                   score=agreed if isinstance(agreed, int) else None)
