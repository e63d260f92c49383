"""Read recorded verdicts: a judge's logged answers on judge items, one a line.

``{"id", "order": "ab"|"ba", "sample": int, "verdict": ..., "raw": str}`` (or the
positional form, ``position`` with ``order``), optionally ``variant``, ``judge`` and
``usage``. Every problem is a ``LoadError`` with file:line and field; a bad line is
reported and left out, never counted. The items the verdicts are on are read by
``judge_items``; this module never reads them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import BadField, shown, shown_json
from metaeval.judges.base import DEFAULT_SCALE, Mode, Scale
from metaeval.loaders.fields import no_unknown, text_field
from metaeval.loaders.judge_items import PAIR_LABELS, PASS_FAIL, JudgeItems, Order, Slot, Variant
from metaeval.loaders.recorded_forms import Usage, judge_name, positional, strength_of, usage_of
from metaeval.untrusted_json import LoadError, Record, load_unique

RECORDED_FIELDS = {"id", "order", "sample", "verdict", "position", "strength", "raw", "variant",
                   "judge", "usage"}

RecordedValue = float | bool | str | None
"""A recorded verdict: a score, pass/fail as a bool, a pair label, or None (unscored)."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """One logged judge verdict. A pairwise verdict names the better response by
    its item label (``a``/``b``/``tie``) whatever order it was shown in; ``order``
    says which was shown first (a record in the positional form, ``position``, is
    mapped to the item label on reading). ``variant`` says which probe text was
    judged; ``strength`` how strongly a pairwise preference was stated."""

    id: str
    order: Order
    sample: int
    verdict: RecordedValue
    raw: str
    variant: Variant
    source: str
    strength: str | None = None
    """``strong`` (``A>>B``), ``slight`` (``A>B``), or None: not stated."""
    judge: str | None = None
    """The judge's name in a log of several judges; None: a one-judge log."""
    usage: Usage | None = None

    @property
    def slot(self) -> Slot:
        return Slot(self.id, self.variant, self.order)


def _verdict(raw: JsonObject, scale: Scale, kind: Mode | None,
             classes: tuple[str, ...] = ()) -> RecordedValue:
    """The recorded verdict, held to what a live reply may be: a number on the
    judge's ``scale`` (or pass/fail) for a pointwise item, a pair label for a
    pairwise one (either, when the item is not known here)."""
    value = raw.get("verdict")
    if value is None:
        return None
    number = (f"a number from {scale.low} to {scale.high} (the judge's scale; declare "
              "another with --scale LOW-HIGH), 'pass', 'fail'"
              + "".join(f", {c!r}" for c in classes))
    expected = {Mode.POINTWISE: f"{number} or null (unscored)",
                Mode.PAIRWISE: "'a', 'b', 'tie' or null (unscored)",
                None: f"{number}, 'a', 'b', 'tie' or null (unscored)"}[kind]
    if kind is not Mode.PAIRWISE:
        # bool is an int to Python: true would be the score 1. Ints are compared
        # as ints, so a 400-digit one is out of range, not an OverflowError.
        if isinstance(value, int) and not isinstance(value, bool) and (
                scale.low <= value <= scale.high):
            return float(value)
        if isinstance(value, float) and math.isfinite(value) and (
                scale.low <= value <= scale.high):
            return value
        if isinstance(value, str) and value in PASS_FAIL:
            return value == "pass"
        if isinstance(value, str) and value in classes:
            return value  # a categorical item's class
    if kind is not Mode.POINTWISE and isinstance(value, str) and value in PAIR_LABELS:
        return value
    raise BadField("verdict", f"got {shown_json(value)}; expected {expected}")


def parse_recorded(raw: JsonValue, source: str, scale: Scale = DEFAULT_SCALE,
                   kinds: Mapping[str, Mode] | None = None,
                   classes: tuple[str, ...] = ()) -> Recorded:
    """One recorded verdict; ``kinds`` says which items are pointwise and which
    pairwise, so each verdict is checked as that item's live reply would be."""
    if not isinstance(raw, dict):
        raise BadField("", f"got {shown_json(raw)}; expected a JSON object")
    no_unknown(raw, RECORDED_FIELDS, "")
    sample = raw.get("sample", 0)
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise BadField("sample", f"got {shown_json(sample)}; expected an integer >= 0")
    item_id = text_field(raw, "id", "id")
    kind = kinds.get(item_id) if kinds is not None else None
    order = (Order(text_field(raw, "order", "order", allowed=[o.value for o in Order]))
             if "order" in raw else Order.AB)
    if "position" in raw:
        verdict: RecordedValue = positional(raw, order.first, order.second, kind)
    elif "verdict" not in raw:
        raise BadField("verdict", "missing; expected the verdict (or null when unscored), or "
                       "'position' with 'order' (the response shown first, second or a tie)")
    else:
        verdict = _verdict(raw, scale, kind, classes)
    variant = (Variant(text_field(raw, "variant", "variant", allowed=[v.value for v in Variant]))
               if "variant" in raw else Variant.ORIGINAL)
    return Recorded(item_id, order, sample, verdict, text_field(raw, "raw", "raw", required=False),
                    variant, source,
                    strength_of(raw, verdict), judge_name(raw), usage_of(raw))


def load_recorded(path: Path | Sequence[Path], scale: Scale = DEFAULT_SCALE,
                  kinds: Mapping[str, Mode] | None = None, classes: tuple[str, ...] = ()
                  ) -> tuple[tuple[Recorded, ...], tuple[LoadError, ...]]:
    """Every recorded verdict of one file (or of several, read as one log), each
    checked against ``scale`` and its item's kind (see ``parse_recorded``); a bad
    line is an error and the others still load. A repeated (id, variant, order,
    sample), in one file or across them, is an error, so a verdict is never counted
    twice."""
    paths = [path] if isinstance(path, Path) else list(path)
    errors: list[LoadError] = [LoadError(str(p), 0, "", "no such file")
                               for p in paths if not p.is_file()]
    paths = [p for p in paths if p.is_file()]
    if not paths:
        return (), tuple(errors)

    def parse(line: Record, errors: list[LoadError]) -> Recorded | None:
        try:
            return parse_recorded(line.value, line.source, scale, kinds, classes)
        except BadField as bad:
            errors.append(line.error(bad.field, bad.message))
            return None

    def repeated(line: Record, record: Recorded, first: str) -> LoadError:
        return line.error("sample", f"got {shown(record.sample)}; this id, variant and "
                          f"order already has it (at {first})")

    found = load_unique(paths, errors, parse, lambda r: (r.judge, r.slot, r.sample), repeated)
    return tuple(found), tuple(errors)


def item_kinds(items: JudgeItems) -> dict[str, Mode]:
    """Which question each item asks: pairwise items compare, the rest are scored."""
    kinds = {i.id: Mode.POINTWISE for group in (items.pointwise, items.length, items.injection)
             for i in group}
    kinds.update((p.id, Mode.PAIRWISE) for group in (items.pairwise, items.pair_length,
                                                      items.pair_injection) for p in group)
    return kinds
