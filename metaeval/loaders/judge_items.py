"""Read judge items, bias probes and recorded verdicts: JSON objects, one a line.

A record's fields say what it is: ``response_a``/``response_b`` a pairwise item
(with ``padded_a``/``padded_b`` a pairwise length probe, with ``payload`` a
pairwise injection case), ``padded`` a length probe, ``payload`` an injection
case, otherwise a pointwise item. Probe records may carry ``probe_format``
(``PROBE_FORMAT``), ``base``, ``style``, ``level`` and ``kind``. Files are
``*.ndjson`` (under ``meta_sets/judge/``) so ``validate``'s meta-set loader,
which reads ``*.jsonl``, never takes them for runs. Every problem is a
``LoadError`` with file:line and field; a bad line is reported and left out,
never counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import BadField, shown_json
from metaeval.loaders.fields import no_unknown, text_field
from metaeval.loaders.judge_labels import (
    NO_CONSENSUS,
    Annotation,
    pair_consensus,
    pair_label,
    parse_annotations,
    parse_category,
    parse_metadata,
    point_labels,
)
from metaeval.loaders.meta_set import data_files
from metaeval.untrusted_json import LoadError, Record, load_unique, repeated_id

ITEM_SUFFIX = ".ndjson"
PASS_FAIL = ("pass", "fail")
PAIR_LABELS = ("a", "b", "tie")
ITEM_META = {"labels", "category", "metadata"}
"""Optional on a labelled item: several annotators' labels, a scenario, free metadata
(read by ``metaeval.loaders.judge_labels``)."""
POINT_FIELDS = {"id", "prompt", "response", "reference", "label", "score"} | ITEM_META
PAIR_FIELDS = {"id", "prompt", "response_a", "response_b", "reference", "label"} | ITEM_META
PROBE_FORMAT = 1
"""The version of the probe records: ``probe_format`` on a record, if given, must be it."""
PROBE_META = {"probe_format", "base"}
"""Optional on every probe record: the format version and the labelled item it came from."""
LENGTH_FIELDS = {"id", "prompt", "response", "padded", "reference", "style", "level"} | PROBE_META
INJECTION_FIELDS = ({"id", "prompt", "response", "payload", "control", "reference", "label",
                     "kind"} | PROBE_META)
PAIR_LENGTH_FIELDS = ({"id", "prompt", "response_a", "response_b", "reference", "label",
                       "padded_a", "padded_b", "style", "level"} | PROBE_META)
PAIR_INJECTION_FIELDS = ({"id", "prompt", "response_a", "response_b", "reference", "label",
                          "payload", "control", "kind"} | PROBE_META)
FILES = "files"
"""The origin of a probe read from a file (``GENERATED`` probes are made from items)."""
GENERATED = "generated"
BENIGN = ("\nThank you for your patience while we looked into this; we appreciate it. ")


class Order(StrEnum):
    """Which of a pair's responses was shown first (a pointwise item has only ``AB``)."""

    AB = "ab"
    """``response_a`` first."""
    BA = "ba"
    """``response_b`` first."""

    @property
    def first(self) -> str:
        """The item label of the response shown first."""
        return "a" if self is Order.AB else "b"

    @property
    def second(self) -> str:
        return "b" if self is Order.AB else "a"


class Variant(StrEnum):
    """Which text of an item the judge was shown."""

    ORIGINAL = "original"
    """The item's own response (every item has it)."""
    PADDED = "padded"
    """A length probe's response with text added that carries no information."""
    INJECTED = "injected"
    """An injection case's response with the payload appended."""
    CONTROL = "control"
    """An injection case's response with the benign suffix of the payload's length."""


class Slot(NamedTuple):
    """Where a verdict belongs: one item, the text shown, the order shown."""

    item: str
    variant: Variant = Variant.ORIGINAL
    order: Order = Order.AB


@dataclass(frozen=True, slots=True)
class PointItem:
    """A response to score, with the human pass/fail and (optionally) an integer score
    on the label scale; a score alone passes at the label pass mark."""

    id: str
    prompt: str
    response: str
    reference: str | None
    verdict: str | None
    """``pass`` or ``fail``; None when only an integer score (or a class) was given,
    or when the annotators' labels have no consensus."""
    score: int | None
    source: str
    annotations: tuple[Annotation, ...] = ()
    """Each annotator's label (``labels``), when the item has several."""
    category: str | None = None
    metadata: JsonObject | None = None
    label_class: str | None = None
    """A categorical label: one of the declared classes (``--label-classes``)."""

    @property
    def consensus(self) -> bool:
        """Whether the item has a pass/fail or score to measure the judge against."""
        return self.verdict is not None or self.score is not None

    @property
    def labelled(self) -> bool:
        """Whether people judged it (``"label": null`` says they did not: a published
        judge log carries the judge's verdicts and no human one)."""
        return self.verdict is not None or self.score is not None


@dataclass(frozen=True, slots=True)
class PairItem:
    """Two responses to compare; ``label`` names the better one by item label, None
    when no person judged the pair (``"label": null``)."""

    id: str
    prompt: str
    response_a: str
    response_b: str
    reference: str | None
    label: str | None
    """``a``, ``b`` or ``tie``; ``NO_CONSENSUS`` when the annotators' labels tie; None
    when no person judged the pair (``"label": null``)."""
    source: str
    annotations: tuple[Annotation, ...] = ()
    category: str | None = None
    metadata: JsonObject | None = None

    @property
    def consensus(self) -> bool:
        """Whether people judged the pair and agreed on one label."""
        return self.label is not None and self.label != NO_CONSENSUS


@dataclass(frozen=True, slots=True)
class LengthProbe:
    """The same content twice; ``padded`` adds text with no information."""

    id: str
    prompt: str
    response: str
    padded: str
    reference: str | None
    source: str
    style: str = "file"
    """How the padding was written (a generated probe's style; ``file`` otherwise)."""
    level: float | None = None
    """The padding's size as a share of the response's length, when generated."""
    base: str | None = None
    """The labelled item it was made from: its verdict is the before."""
    origin: str = FILES


@dataclass(frozen=True, slots=True)
class InjectionCase:
    """A response people failed; ``payload`` is appended to it, ``control`` (a benign
    suffix of the same length) is appended instead as the control."""

    id: str
    prompt: str
    response: str
    payload: str
    control: str
    reference: str | None
    source: str
    kind: str = "file"
    """The payload's kind (see ``metaeval.audit.probe_texts.PAYLOADS``), ``file`` if not said."""
    base: str | None = None
    origin: str = FILES


def worse_of(label: str) -> str:
    """The response of a labelled pair that people did not prefer."""
    return "b" if label == "a" else "a"


@dataclass(frozen=True, slots=True)
class PairLengthProbe:
    """A labelled pair (``label`` ``a`` or ``b``) with each response padded by text
    that adds no information: the worse one padded is the probe, the better one
    padded the control."""

    id: str
    prompt: str
    response_a: str
    response_b: str
    reference: str | None
    label: str
    padded_a: str
    padded_b: str
    source: str
    style: str = "file"
    level: float | None = None
    base: str | None = None
    origin: str = FILES

    @property
    def loser(self) -> str:
        return worse_of(self.label)

    def shown(self, padded: str) -> tuple[str, str]:
        """``response_a`` and ``response_b`` with the response labelled ``padded`` padded."""
        return ((self.padded_a, self.response_b) if padded == "a"
                else (self.response_a, self.padded_b))


@dataclass(frozen=True, slots=True)
class PairInjectionCase:
    """A labelled pair with ``payload`` appended to the worse response; ``control`` (a
    benign suffix of the same length) appended to it instead is the control. The
    better response carries ``control`` in both (see ``shown``)."""

    id: str
    prompt: str
    response_a: str
    response_b: str
    reference: str | None
    label: str
    payload: str
    control: str
    source: str
    kind: str = "file"
    base: str | None = None
    origin: str = FILES

    @property
    def loser(self) -> str:
        return worse_of(self.label)

    def shown(self, suffix: str) -> tuple[str, str]:
        """The pair with ``suffix`` appended to the worse response and the benign
        ``control`` to the better one, so that both grow by the same length and the
        probe and its control differ only in the payload."""
        if self.loser == "a":
            return self.response_a + suffix, self.response_b + self.control
        return self.response_a + self.control, self.response_b + suffix


@dataclass(frozen=True, slots=True)
class JudgeItems:
    """Everything loaded from judge-item files, with every error found."""

    pointwise: tuple[PointItem, ...] = ()
    pairwise: tuple[PairItem, ...] = ()
    length: tuple[LengthProbe, ...] = ()
    injection: tuple[InjectionCase, ...] = ()
    errors: tuple[LoadError, ...] = ()
    files: tuple[str, ...] = ()
    pair_length: tuple[PairLengthProbe, ...] = ()
    pair_injection: tuple[PairInjectionCase, ...] = ()

    @property
    def count(self) -> int:
        return (len(self.pointwise) + len(self.pairwise) + len(self.length)
                + len(self.injection) + len(self.pair_length) + len(self.pair_injection))

    @property
    def probes(self) -> tuple[Probe, ...]:
        """Every probe record, of every kind."""
        return (*self.length, *self.injection, *self.pair_length, *self.pair_injection)

    def labelled(self) -> JudgeItems:
        """The labelled items alone, no probe."""
        return JudgeItems(self.pointwise, self.pairwise, errors=self.errors, files=self.files)

    def with_probes(self, probes: Iterable[Probe]) -> JudgeItems:
        """These labelled items with ``probes`` as their probes (those they had dropped)."""
        chosen = list(probes)
        return JudgeItems(
            self.pointwise, self.pairwise,
            tuple(p for p in chosen if isinstance(p, LengthProbe)),
            tuple(p for p in chosen if isinstance(p, InjectionCase)), self.errors, self.files,
            tuple(p for p in chosen if isinstance(p, PairLengthProbe)),
            tuple(p for p in chosen if isinstance(p, PairInjectionCase)))


Probe = LengthProbe | InjectionCase | PairLengthProbe | PairInjectionCase
Item = PointItem | PairItem | Probe


def benign_suffix(length: int) -> str:
    """A suffix that says nothing to a grader, exactly ``length`` characters long."""
    text = BENIGN * (length // len(BENIGN) + 1)
    return text[:length]


def _reference(raw: JsonObject) -> str | None:
    value = raw.get("reference")
    if value is not None and not isinstance(value, str):
        raise BadField("reference", f"got {shown_json(value)}; expected a string")
    return value or None


def _text(raw: JsonObject, key: str) -> str:
    """A response: any string, the empty one included (models do answer with nothing,
    and such a response is usually the clear loser); anything else is refused."""
    if key not in raw:
        raise BadField(key, "missing; expected a string (empty allowed)")
    value = raw[key]
    if not isinstance(value, str):
        raise BadField(key, f"got {shown_json(value)}; expected a string (empty allowed)")
    return value


def _fields(raw: JsonObject) -> set[str]:
    """The fields of the kind of record ``raw`` is, told by the fields it has."""
    if "response_a" in raw or "response_b" in raw:
        if "padded_a" in raw or "padded_b" in raw:
            return PAIR_LENGTH_FIELDS
        return PAIR_INJECTION_FIELDS if "payload" in raw else PAIR_FIELDS
    if "padded" in raw:
        return LENGTH_FIELDS
    return INJECTION_FIELDS if "payload" in raw else POINT_FIELDS


def parse_item(raw: JsonValue, source: str, labels: tuple[int, int] = (1, 5),
               classes: tuple[str, ...] = ()) -> Item:
    """One record to one item; raises BadField naming the field. ``labels``: the range
    of integer labels (``--label-scale``, 1-5 unless declared); ``classes``: the
    declared classes of categorical labels (``--label-classes``)."""
    if not isinstance(raw, dict):
        raise BadField("", f"got {shown_json(raw)}; expected a JSON object")
    # Unknown fields first: a misspelt "promt" is named as such, not as a missing prompt.
    fields = _fields(raw)
    pairish = "response_a" in raw or "response_b" in raw
    no_unknown(raw, fields, "", hints=PAIR_LENGTH_FIELDS | PAIR_INJECTION_FIELDS if pairish
                else LENGTH_FIELDS | INJECTION_FIELDS)
    item_id = text_field(raw, "id", "id")
    prompt = text_field(raw, "prompt", "prompt")
    reference = _reference(raw)
    if fields is not PAIR_FIELDS and fields is not POINT_FIELDS:
        return _probe(raw, fields, item_id, prompt, reference, source)
    # An explicit null is an unlabelled item (a judge log as published); a missing
    # label stays an error, so a forgotten one is never read as "no human judgment".
    unlabelled = ("label" in raw and raw["label"] is None and raw.get("score") is None
                  and not raw.get("labels"))
    category, metadata = parse_category(raw), parse_metadata(raw)
    if pairish:
        pair_labels = parse_annotations(raw, pair_label, "one of 'a', 'b', 'tie'")
        pair = (None if unlabelled else text_field(raw, "label", "label", allowed=PAIR_LABELS)
                if "label" in raw or not pair_labels else pair_consensus(pair_labels))
        return PairItem(item_id, prompt, _text(raw, "response_a"),
                        _text(raw, "response_b"), reference, None if unlabelled else pair,
                        source, pair_labels, category, metadata)
    if unlabelled:
        return PointItem(item_id, prompt, _text(raw, "response"), reference, None, None,
                         source, (), category, metadata)
    got = point_labels(raw, labels, classes)
    return PointItem(item_id, prompt, _text(raw, "response"), reference, got.verdict,
                     got.score, source, got.annotations, category, metadata, got.label_class)


def _padded(raw: JsonObject, key: str, response: str) -> str:
    padded = text_field(raw, key, key)
    if len(padded) <= len(response):
        raise BadField(key, f"got {len(padded)} characters; expected more than the "
                       f"response's {len(response)}")
    return padded


def _payload(raw: JsonObject) -> tuple[str, str]:
    payload = text_field(raw, "payload", "payload")
    control = text_field(raw, "control", "control", required=False) or benign_suffix(len(payload))
    if len(control) != len(payload):
        raise BadField("control", f"got {len(control)} characters; expected {len(payload)}, "
                       "the payload's length")
    return payload, control


def _level(raw: JsonObject) -> float | None:
    value = raw.get("level")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and value > 0):
        raise BadField("level", f"got {shown_json(value)}; expected a number > 0 (the padding as a "
                       "share of the response's length)")
    return float(value)


def _probe(raw: JsonObject, fields: set[str], item_id: str, prompt: str,
           reference: str | None, source: str) -> Probe:
    """A probe record (length or injection, pointwise or pairwise)."""
    version = raw.get("probe_format", PROBE_FORMAT)
    if isinstance(version, bool) or version != PROBE_FORMAT:
        raise BadField("probe_format",
                       f"got {shown_json(version)}; expected {PROBE_FORMAT}, the probe "
                       "format this metaeval reads")
    base = text_field(raw, "base", "base", required=False) or None
    style = text_field(raw, "style", "style", required=False) or "file"
    kind = text_field(raw, "kind", "kind", required=False) or "file"
    if fields is PAIR_LENGTH_FIELDS or fields is PAIR_INJECTION_FIELDS:
        a, b = _text(raw, "response_a"), _text(raw, "response_b")
        label = text_field(raw, "label", "label", allowed=("a", "b"))
        if fields is PAIR_LENGTH_FIELDS:
            return PairLengthProbe(item_id, prompt, a, b, reference, label,
                                   _padded(raw, "padded_a", a), _padded(raw, "padded_b", b),
                                   source, style, _level(raw), base)
        payload, control = _payload(raw)
        return PairInjectionCase(item_id, prompt, a, b, reference, label, payload, control,
                                 source, kind, base)
    response = _text(raw, "response")
    if fields is LENGTH_FIELDS:
        return LengthProbe(item_id, prompt, response, _padded(raw, "padded", response),
                           reference, source, style, _level(raw), base)
    text_field(raw, "label", "label", allowed=("fail",))
    payload, control = _payload(raw)
    return InjectionCase(item_id, prompt, response, payload, control, reference, source, kind,
                         base)


def _item_id(item: Item) -> str:
    return item.id


def load_judge_items(paths: Iterable[Path], labels: tuple[int, int] = (1, 5),
                     classes: tuple[str, ...] = ()) -> JudgeItems:
    """Every item of every file; bad lines become errors, the rest still load.
    ``labels``: the range integer labels must be in; ``classes``: the declared
    classes of categorical labels."""
    files, errors = data_files(paths, ITEM_SUFFIX)

    def parse(record: Record, errors: list[LoadError]) -> Item | None:
        try:
            return parse_item(record.value, record.source, labels, classes)
        except BadField as bad:
            errors.append(record.error(bad.field, bad.message))
            return None

    found: dict[type, list[Item]] = {PointItem: [], PairItem: [], LengthProbe: [],
                                     InjectionCase: [], PairLengthProbe: [],
                                     PairInjectionCase: []}
    def repeated(record: Record, item: Item, first: str) -> LoadError:
        return repeated_id(record, item.id, first)

    loaded: list[Item] = load_unique(files, errors, parse, _item_id, repeated)
    for item in loaded:
        found[type(item)].append(item)
    return JudgeItems(
        tuple(i for i in found[PointItem] if isinstance(i, PointItem)),
        tuple(i for i in found[PairItem] if isinstance(i, PairItem)),
        tuple(i for i in found[LengthProbe] if isinstance(i, LengthProbe)),
        tuple(i for i in found[InjectionCase] if isinstance(i, InjectionCase)),
        tuple(errors), tuple(str(f) for f in files),
        tuple(i for i in found[PairLengthProbe] if isinstance(i, PairLengthProbe)),
        tuple(i for i in found[PairInjectionCase] if isinstance(i, PairInjectionCase)))
