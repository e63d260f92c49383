"""The texts of items imported from an annotation file: the prompt and the responses
annotators judged, from a second file joined by item id (``judge-import annotations
--texts``), so that the items can be labelled on the page and shown to a live judge.

The file is a JSON object ``{item_id: record}`` or a JSON list of records with an
``id`` (or ``text_id``). From each record:

- ``prompt`` -> ``prompt``;
- ``response_a``, ``response_b`` -> the pair's responses; ``response`` -> a
  pointwise item's;
- ``conversation_a``, ``conversation_b`` (lists of ``{role, content}`` messages):
  the user turns make the ``prompt``, each side's assistant turns its response.

``--text-field KEY=FIELD`` names another field for a key.

A conversation may be JSON, or the Python-literal text of one (as the MT-Bench
human judgments and the AltTest authors' ``prompts.json`` store it): read with
``ast.literal_eval``, which builds literals and calls nothing, bounded in size
and checked to be a list of messages with string content. A record missing a
text the item kind needs is an error naming the item and the field; an item the
file does not hold keeps the note that it has no text.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from metaeval.contract import JsonValue
from metaeval.errors import InputError, shown
from metaeval.untrusted_json import JsonInputError, read_json_file

FIELDS = ("prompt", "response_a", "response_b", "response", "conversation_a",
          "conversation_b")
MAX_LITERAL = 1 << 20
"""Characters of a Python-literal conversation read: a real one is a few KB."""


@dataclass(frozen=True, slots=True)
class ItemText:
    """What annotators saw of one item."""

    prompt: str
    response_a: str = ""
    response_b: str = ""
    response: str = ""


def text_fields(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--text-field KEY=FIELD`` flags: which field of a record holds each text."""
    names = {key: key for key in FIELDS}
    for pair in pairs:
        key, sep, field = pair.partition("=")
        if not sep or key not in FIELDS or not field:
            raise InputError(f"--text-field: got {pair!r}; expected KEY=FIELD with KEY one of "
                             f"{', '.join(FIELDS)}")
        names[key] = field
    return names


def _messages(value: JsonValue, where: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        if len(value) > MAX_LITERAL:
            raise InputError(f"{where}: got {len(value)} characters; expected a conversation "
                             f"of at most {MAX_LITERAL}")
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError) as e:
            raise InputError(f"{where}: got {shown(value)}; expected a list of {{role, "
                             f"content}} messages, as JSON or a Python literal ({e})") from e
    if not isinstance(value, list) or not value:
        raise InputError(f"{where}: got {shown(value)}; expected a non-empty list of "
                         "{role, content} messages")
    messages = []
    for n, message in enumerate(value):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) or (
                not isinstance(message.get("content"), str)):
            raise InputError(f"{where}[{n}]: got {shown(message)}; expected {{'role': str, "
                             "'content': str}}")
        messages.append((str(message["role"]), str(message["content"])))
    return messages


def _turns(messages: list[tuple[str, str]], role: str) -> str:
    said = [content for who, content in messages if who == role]
    if len(said) == 1:
        return said[0]
    return "\n\n".join(f"(turn {n}) {content}" for n, content in enumerate(said, start=1))


def _text(record: Mapping[str, JsonValue], names: Mapping[str, str], key: str, where: str
          ) -> str | None:
    value = record.get(names[key])
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{where}: {names[key]}: got {shown(value)}; expected a string")
    return value


def _item_text(record: Mapping[str, JsonValue], names: Mapping[str, str], pointwise: bool,
               where: str) -> ItemText:
    texts = {key: _text(record, names, key, where)
             for key in ("prompt", "response_a", "response_b", "response")}
    conversation = record.get(names["conversation_a"])
    if conversation is not None and not pointwise and texts["response_a"] is None:
        side_a = _messages(conversation, f"{where}: {names['conversation_a']}")
        side_b = _messages(record.get(names["conversation_b"]),
                           f"{where}: {names['conversation_b']}")
        texts["prompt"] = texts["prompt"] or _turns(side_a, "user")
        texts["response_a"], texts["response_b"] = (_turns(side_a, "assistant"),
                                                     _turns(side_b, "assistant"))
    needed = ("prompt", "response") if pointwise else ("prompt", "response_a", "response_b")
    missing = [key for key in needed if not texts[key]]
    if missing:
        raise InputError(f"{where}: no {names[missing[0]]!r}; expected the item's "
                         f"{missing[0]} (or --text-field {missing[0]}=FIELD naming it)")
    return ItemText(texts["prompt"] or "", texts["response_a"] or "",
                    texts["response_b"] or "", texts["response"] or "")


def read_texts(path: Path, names: Mapping[str, str], pointwise: bool
               ) -> dict[str, ItemText]:
    """item id -> its texts, from ``path`` (see the module docstring)."""
    try:
        data = read_json_file(path)
    except (OSError, JsonInputError) as e:
        raise InputError(f"--texts {path}: cannot read: {e}") from e
    records: list[tuple[str, Mapping[str, JsonValue]]] = []
    if isinstance(data, dict):
        for item, value in data.items():
            if not isinstance(value, dict):
                raise InputError(f"{path}: {item}: got {shown(value)}; expected an object "
                                 "with the item's texts")
            records.append((item, value))
    elif isinstance(data, list):
        for n, value in enumerate(data):
            found = value.get("id", value.get("text_id")) if isinstance(value, dict) else None
            if not isinstance(found, str) or not isinstance(value, dict):
                raise InputError(f"{path}: [{n}]: got {shown(value)}; expected an object with "
                                 "an 'id' and the item's texts")
            records.append((found, value))
    else:
        raise InputError(f"{path}: got {shown(data)}; expected {{item_id: {{prompt, ...}}}} "
                         "or a list of records with an 'id'")
    texts: dict[str, ItemText] = {}
    for item, record in records:
        if item in texts:
            raise InputError(f"{path}: {item}: the item is given twice; expected each once")
        texts[item] = _item_text(record, names, pointwise, f"{path}: {item}")
    return texts
