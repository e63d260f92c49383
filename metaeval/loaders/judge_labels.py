"""The optional fields of a judge item that are not its text: several annotators'
labels (``labels``), a ``category`` for the per-scenario breakdown, and a free
``metadata`` object.

``labels`` is ``[{"annotator": "a1", "label": ...}, ...]``: one entry per person
(or model used as a person), each label of the kind the item takes (``a``/``b``/
``tie`` on a pairwise item; ``pass``/``fail``, an integer on the label scale, or
one of the declared classes on a pointwise one), every annotator once. When an
item has no single ``label`` its consensus is the label most annotators gave; a
tie for the most has no consensus, and such an item is left out of the
single-label agreement (never given a guessed label). ``metadata`` is kept as
read and never interpreted. Every problem is a ``BadField`` naming the field.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import BadField, shown_json
from metaeval.loaders.fields import no_unknown

ANNOTATION_FIELDS = {"annotator", "label"}
MAX_ANNOTATORS = 1000
"""More annotators than this on one item is a mistake in the file, not a panel."""

Label = str | int
"""An annotator's label: a pair label, pass/fail, a class, or an integer score."""
NO_CONSENSUS = ""
"""The label of a pair whose annotators tie for the most given label: left out of
the single-label agreement, kept for the annotators' own figures."""


@dataclass(frozen=True, slots=True)
class Annotation:
    """One annotator's label on one item."""

    annotator: str
    label: Label
    shown: str | None = None
    """A pair's order as shown to the annotator (``ab``: ``response_a`` first), when
    a labels file recorded it; None when not recorded (an item's own ``labels``)."""


def parse_annotations(raw: JsonObject, check: Callable[[JsonValue], Label | None],
                      expected: str) -> tuple[Annotation, ...]:
    """``raw["labels"]`` (absent: none). ``check`` returns the label when it is one
    this item takes, else None; ``expected`` says what it takes. Every annotator's
    label must be of one kind: a score beside a pass/fail cannot be compared."""
    value = raw.get("labels")
    if value is None and "labels" not in raw:
        return ()
    if not isinstance(value, list) or not value:
        raise BadField("labels", f"got {shown_json(value)}; expected a non-empty list of "
                       '{"annotator": ..., "label": ...} objects')
    if len(value) > MAX_ANNOTATORS:
        raise BadField("labels", f"got {len(value)} entries; expected at most {MAX_ANNOTATORS}")
    found: list[Annotation] = []
    seen: dict[str, int] = {}
    for n, entry in enumerate(value):
        where = f"labels[{n}]"
        if not isinstance(entry, dict):
            raise BadField(where, f"got {shown_json(entry)}; expected an object "
                           '{"annotator": ..., "label": ...}')
        no_unknown(entry, ANNOTATION_FIELDS, where)
        who = entry.get("annotator")
        if not isinstance(who, str) or not who.strip():
            raise BadField(f"{where}.annotator",
                           f"got {shown_json(who)}; expected a non-empty string")
        if who in seen:
            raise BadField(f"{where}.annotator", f"got {shown_json(who)} again (first at "
                           f"labels[{seen[who]}]); expected each annotator once per item")
        seen[who] = n
        label = check(entry.get("label"))
        if label is None:
            raise BadField(f"{where}.label",
                           f"got {shown_json(entry.get('label'))}; expected {expected}")
        if found and isinstance(label, int) is not isinstance(found[0].label, int):
            raise BadField(f"{where}.label",
                           f"got {shown_json(label)} beside {shown_json(found[0].label)} at "
                           "labels[0]; expected every annotator's label of one kind (all "
                           "integers, or all strings)")
        found.append(Annotation(who, label))
    return tuple(found)


def consensus(annotations: tuple[Annotation, ...]) -> Label | None:
    """The label most annotators gave; None when two or more labels tie for the most."""
    counts = Counter(a.label for a in annotations).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def parse_category(raw: JsonObject) -> str | None:
    """``category``: a non-empty string naming the item's scenario, or absent."""
    if "category" not in raw:
        return None
    value = raw["category"]
    if not isinstance(value, str) or not value.strip():
        raise BadField("category", f"got {shown_json(value)}; expected a non-empty string (the "
                       "item's scenario, for --by category)")
    return value


def parse_metadata(raw: JsonObject) -> JsonObject | None:
    """``metadata``: any JSON object, kept and never interpreted; or absent."""
    if "metadata" not in raw:
        return None
    value = raw["metadata"]
    if not isinstance(value, dict):
        raise BadField("metadata",
                       f"got {shown_json(value)}; expected a JSON object (kept as read, "
                       "never interpreted)")
    return value


def pair_label(value: JsonValue) -> str | None:
    """An annotator's pairwise label: ``a``, ``b`` or ``tie``."""
    return value if isinstance(value, str) and value in ("a", "b", "tie") else None


def point_label(value: JsonValue, labels: tuple[int, int]) -> str | int | None:
    """An annotator's pointwise label: pass/fail or an integer on the label scale."""
    if isinstance(value, str) and value in ("pass", "fail"):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and (
            labels[0] <= value <= labels[1]):
        return value
    return None


def pair_consensus(annotations: tuple[Annotation, ...]) -> str:
    """The pair label most annotators gave, or ``NO_CONSENSUS``."""
    agreed = consensus(annotations)
    return agreed if isinstance(agreed, str) else NO_CONSENSUS


@dataclass(frozen=True, slots=True)
class PointLabels:
    """What a pointwise item's label fields say."""

    verdict: str | None
    score: int | None
    label_class: str | None
    annotations: tuple[Annotation, ...]


def point_labels(raw: JsonObject, labels: tuple[int, int],
                 classes: tuple[str, ...] = ()) -> PointLabels:
    """``label``, ``score`` and ``labels`` of a pointwise item: pass/fail, an integer on
    the label scale (``labels``), or one of the declared ``classes``. Without
    ``label`` and ``score``, the annotators' consensus; none when they tie."""
    low, high = labels
    integer = (f"an integer {low}-{high} (the label scale; declare another with "
               "--label-scale LOW-HIGH)")
    kinds = f"'pass', 'fail' or {integer}" + (
        f", or a declared class ({', '.join(map(repr, classes))})" if classes else "")
    annotations = parse_annotations(
        raw, lambda v: v if isinstance(v, str) and v in classes else point_label(v, labels),
        kinds)
    label: JsonValue = raw.get("label")
    score = raw.get("score")
    score_field = "score"
    if annotations and "label" not in raw and "score" not in raw:
        agreed = consensus(annotations)
        if agreed is None:
            return PointLabels(None, None, None, annotations)
        label = agreed
    if isinstance(label, str) and label in classes and score is None:
        if any(a.label not in classes for a in annotations):
            raise BadField("labels", f"got {shown_json(label)} beside labels that are not classes; "
                           "expected every annotator's label to be a declared class")
        return PointLabels(None, None, label, annotations)
    if isinstance(label, int) and not isinstance(label, bool) and score is None:
        label, score, score_field = None, label, "label"
    if label is not None and label not in ("pass", "fail"):
        raise BadField("label", f"got {shown_json(label)}; expected {kinds}")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int)
                              or not low <= score <= high):
        raise BadField(score_field, f"got {shown_json(score)}; expected {integer}")
    if label is None and score is None:
        raise BadField("label", f"missing; expected {kinds}")
    if any(a.label in classes for a in annotations):
        raise BadField("labels", "got a declared class beside pass/fail or integer labels; "
                       "expected every annotator's label of one kind")
    return PointLabels(label if isinstance(label, str) else None, score, None, annotations)
