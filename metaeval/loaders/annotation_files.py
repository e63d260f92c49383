"""Convert annotation files of the form ``{annotator: {item_id: label}}`` (the
layout of the AltTest datasets, Calderon et al. 2025, and of many labelling
exports) into judge items carrying several annotators' ``labels``, and a judge's
labels of the same form (``{judge: {item_id: label}}``, or ``{item_id: label}``
for one judge) into recorded verdicts.

Mapping, per item kind (``--kind``):

| source label | pairwise | pointwise |
| --- | --- | --- |
| ``a``, ``model_a`` | ``a`` | refused |
| ``b``, ``model_b`` | ``b`` | refused |
| ``tie`` | ``tie`` | refused |
| ``pass``, ``fail`` | refused | as is |
| an integer | refused | as is (checked against the label scale on reading) |
| ``null`` (judge only) | ``null``: unscored | ``null``: unscored |

``--map FROM=TO`` adds or replaces a row; any other label is an error naming the
file, the annotator and the item, never a guess. A pairwise label names the item's
response (``model_a`` is ``response_a``), not a position, so every recorded verdict
is in order ``ab``. The files carry no texts: with ``texts`` (``--texts``, read by
``annotation_texts``) each item gets its prompt and responses, so it can be
labelled and shown to a live judge; without, the items' ``prompt`` says so and
their responses are empty: they are for a recorded audit only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import InputError, shown
from metaeval.loaders.annotation_texts import ItemText
from metaeval.loaders.judge_labels import MAX_ANNOTATORS
from metaeval.untrusted_json import JsonInputError, read_json_file

PAIR_MAP: Mapping[str, str] = {"a": "a", "b": "b", "tie": "tie", "model_a": "a",
                               "model_b": "b"}
POINT_MAP: Mapping[str, str] = {"pass": "pass", "fail": "fail"}
NO_TEXT = "(no text: imported from an annotation file, for a recorded audit only)"


@dataclass(frozen=True, slots=True)
class Imported:
    items: tuple[JsonObject, ...]
    recorded: tuple[JsonObject, ...]
    judge_only: int = 0
    """Judge labels on items no annotator labelled: left out."""


def _read(path: Path) -> JsonValue:
    try:
        return read_json_file(path)
    except (OSError, JsonInputError) as e:
        raise InputError(f"{path}: cannot read: {e}") from e


def _nested(path: Path, data: JsonValue, what: str) -> dict[str, dict[str, JsonValue]]:
    if not isinstance(data, dict) or not data:
        raise InputError(f"{path}: got {shown(data, 80)}; expected a JSON object "
                         f"{{{what}: {{item_id: label}}}}")
    out: dict[str, dict[str, JsonValue]] = {}
    for who, labels in data.items():
        if not who.strip():
            raise InputError(f"{path}: got the {what} {who!r}; expected a non-empty name")
        if not isinstance(labels, dict):
            raise InputError(f"{path}: {who}: got {shown(labels, 80)}; expected an object "
                             "{item_id: label}")
        for item in labels:
            if not item.strip():
                raise InputError(f"{path}: {who}: got the item id {item!r}; expected a "
                                 "non-empty id")
        out[who] = labels
    return out


def _label(value: JsonValue, mapping: Mapping[str, JsonValue], pointwise: bool, where: str,
           nullable: bool) -> JsonValue:
    if value is None and nullable:
        return None
    integer = isinstance(value, int) and not isinstance(value, bool)
    key = str(value) if integer else value
    if isinstance(key, str) and key in mapping:
        return mapping[key]
    if pointwise and integer:
        return value
    known = ", ".join(map(repr, mapping)) + (", an integer" if pointwise else "")
    raise InputError(f"{where}: got {shown(value, 80)}; expected one of {known} "
                     "(add a mapping with --map FROM=TO)")


def import_annotations(humans: Path, *, pointwise: bool = False,
                       extra: Mapping[str, JsonValue] | None = None, judge_file: Path | None = None,
                       judge: str | None = None,
                       texts: Mapping[str, ItemText] | None = None) -> Imported:
    """Items from ``humans``; recorded verdicts from ``judge_file`` (the labels of
    ``judge``; omitted, of the one judge it holds, or of every judge it holds, each
    verdict then naming its judge in ``judge``, so that one log holds them all); each
    item's texts from ``texts`` where it has them."""
    mapping: dict[str, JsonValue] = {**(POINT_MAP if pointwise else PAIR_MAP), **(extra or {})}
    people = _nested(humans, _read(humans), "annotator")
    labels: dict[str, list[JsonObject]] = {}
    for who, given in people.items():
        for item, value in given.items():
            labels.setdefault(item, []).append(
                {"annotator": who,
                 "label": _label(value, mapping, pointwise, f"{humans}: {who}: {item}", False)})
    items: list[JsonObject] = []
    for item, entries in labels.items():
        if len(entries) > MAX_ANNOTATORS:
            # judge items hold at most this many labels: refuse now, not at the audit
            raise InputError(f"{humans}: item {shown(item, 80)}: got {len(entries)} "
                             f"annotators' labels; expected at most {MAX_ANNOTATORS}, as a "
                             "judge item holds")
        text = (texts or {}).get(item)
        record: JsonObject = {"id": item, "prompt": NO_TEXT if text is None else text.prompt}
        if pointwise:
            record["response"] = "" if text is None else text.response
        else:
            record["response_a"], record["response_b"] = (
                ("", "") if text is None else (text.response_a, text.response_b))
        record["labels"] = list(entries)
        items.append(record)
    recorded: list[JsonObject] = []
    judge_only = 0
    if judge_file is not None:
        for named, verdicts in _judge_labels(judge_file, judge):
            for item, value in verdicts.items():
                if item not in labels:
                    judge_only += 1
                    continue
                verdict: JsonObject = {"id": item, "order": "ab", "verdict": _label(
                    value, mapping, pointwise, f"{judge_file}: {named or judge or ''}: {item}",
                    True)}
                recorded.append(verdict if named is None else {**verdict, "judge": named})
    return Imported(tuple(items), tuple(recorded), judge_only)


def _judge_labels(path: Path, judge: str | None
                  ) -> list[tuple[str | None, dict[str, JsonValue]]]:
    """Each judge's labels: ``(None, labels)`` for one judge (named by ``--judge``, or
    the file's only one), ``(name, labels)`` for each of several."""
    data = _read(path)
    if isinstance(data, dict) and data and not any(isinstance(v, dict) for v in data.values()):
        if judge is not None:
            raise InputError(f"--judge: got {judge!r}; {path} holds one judge's labels "
                             "({item_id: label}), not named")
        return [(None, {str(k): v for k, v in data.items()})]
    judges = _nested(path, data, "judge")
    if judge is None:
        if len(judges) > 1:  # all of them, each verdict naming its judge
            return list(judges.items())
        return [(None, next(iter(judges.values())))]
    if judge not in judges:
        raise InputError(f"--judge: got {judge!r}; expected one of {', '.join(judges)} "
                         f"(the judges of {path})")
    return [(None, judges[judge])]


def parse_maps(pairs: tuple[str, ...], pointwise: bool = False) -> dict[str, JsonValue]:
    """``--map FROM=TO`` flags as a mapping (FROM an integer code matches it too); TO
    must be a label the item kind takes: ``a``, ``b``, ``tie``; or ``pass``, ``fail``
    or an integer."""
    out: dict[str, JsonValue] = {}
    for pair in pairs:
        source, sep, target = pair.partition("=")
        expected = "pass, fail or an integer" if pointwise else "a, b or tie"
        if not sep or not source or not target:
            raise InputError(f"--map: got {pair!r}; expected FROM=TO, e.g. model_a=a")
        # ASCII digits only: "²".isdigit() is true, and int("²") a ValueError.
        if pointwise and re.fullmatch(r"-?[0-9]{1,9}", target):
            out[source] = int(target)
        elif target in (POINT_MAP if pointwise else ("a", "b", "tie")):
            out[source] = target
        else:
            raise InputError(f"--map: got {pair!r}; expected TO to be {expected}")
    return out


def ndjson(records: tuple[JsonObject, ...]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)
