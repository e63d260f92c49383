"""FastChat ``llm_judge`` (MT-Bench) judgment logs: ``gpt-4_pair.jsonl`` and
``gpt-4_single.jsonl``.

Pair (one pairwise item a line, two recorded verdicts):

- line number, ``question_id``, ``turn`` -> ``id`` =
  ``PREFIX-L<line>-q<question_id>-t<turn>`` (the tool appends, so keys repeat)
- ``g1_user_prompt`` ``[User Question]`` / reference / answers A and B -> ``prompt``,
  ``reference``, ``response_a`` (``model_1``), ``response_b`` (``model_2``)
- ``g1_winner`` ``model_1``/``model_2``/``tie``/``error`` -> ``order`` ``ab``,
  ``position`` ``first``/``second``/``tie``/null
- ``g2_winner`` (already mapped back to the models) -> ``order`` ``ba``, ``position``:
  model_2 was shown first
- ``g1_judgment``, ``g2_judgment`` -> ``raw`` (re-read with ``--reply mt-bench``)

Single (one pointwise item a line, one recorded score):

- line number, ``question_id``, ``turn`` -> ``id`` =
  ``PREFIX-L<line>-q<question_id>-t<turn>``
- ``user_prompt`` ``[Question]`` / reference / answer, or the conversation up to the
  last answer (multi-turn) -> ``prompt``, ``reference``, ``response``
- ``score`` 1-10 (``-1``: no rating parsed) -> ``verdict`` (``-1`` is null, unscored);
  audit with ``--scale 1-10``
- ``judgment`` -> ``raw``

Not carried: ``model``/``model_1``/``model_2`` names, ``judge``, ``tstamp``; the
system prompt (not in the log). A pair prompt that is not the single-turn layout
(``pair-v2-multi-turn``) is an error, not a guess. The logs hold no human label:
items have ``"label": null``.
"""

from __future__ import annotations

from pathlib import Path

import regex

from metaeval.contract import JsonObject
from metaeval.importers.common import (
    Bad,
    Converted,
    as_object,
    fail_on,
    got,
    jsonl_records,
    layout,
    text,
)

_PAIR = regex.compile(
    r"\[User Question\]\n(?P<prompt>.*?)\n\n"
    r"(?:\[The Start of Reference Answer\]\n(?P<reference>.*?)\n"
    r"\[The End of Reference Answer\]\n\n)?"
    r"\[The Start of Assistant A's Answer\]\n(?P<a>.*)\n\[The End of Assistant A's Answer\]\n\n"
    r"\[The Start of Assistant B's Answer\]\n(?P<b>.*)\n\[The End of Assistant B's Answer\]",
    regex.DOTALL)
_SINGLE = regex.compile(
    r"\[Question\]\n(?P<prompt>.*?)\n\n"
    r"(?:\[The Start of Reference Answer\]\n(?P<reference>.*?)\n"
    r"\[The End of Reference Answer\]\n\n)?"
    r"\[The Start of Assistant's Answer\]\n(?P<response>.*)\n\[The End of Assistant's Answer\]\Z",
    regex.DOTALL)
_MULTI = regex.compile(
    r"(?:<\|The Start of Reference Answer\|>\n\n(?P<reference>.*?)\n\n"
    r"<\|The End of Reference Answer\|>\n\n\n)?"
    r"<\|The Start of Assistant A's Conversation with User\|>\n\n(?P<prompt>.*)\n\n"
    r"### Assistant A:\n(?P<response>.*)\n\n"
    r"<\|The End of Assistant A's Conversation with User\|>\Z",
    regex.DOTALL)
_WINNER = {"model_1": "a", "model_2": "b", "tie": "tie", "error": None}
"""A game's winner as the item label (``error``: no verdict, unscored)."""
_POSITION = {"a": "first", "b": "second", "tie": "tie", None: None}


def _id(prefix: str, line: int, obj: JsonObject) -> str:
    question, turn = obj.get("question_id"), obj.get("turn", 1)
    if isinstance(question, bool) or not isinstance(question, int | str):
        raise Bad("question_id", f"got {got(question)}; expected an integer")
    if isinstance(turn, bool) or not isinstance(turn, int):
        raise Bad("turn", f"got {got(turn)}; expected an integer")
    return f"{prefix}-L{line}-q{question}-t{turn}"


def _winner(obj: JsonObject, key: str) -> str | None:
    value = obj.get(key)
    if not isinstance(value, str) or value not in _WINNER:
        raise Bad(key, f"got {got(value)}; expected 'model_1', 'model_2', 'tie' or 'error'")
    return _WINNER[value]


def _pair(prefix: str, line: int, obj: JsonObject) -> tuple[JsonObject, list[JsonObject]]:
    item_id = _id(prefix, line, obj)
    game1, game2 = text(obj, "g1_user_prompt"), text(obj, "g2_user_prompt")
    one = layout(_PAIR, game1, "g1_user_prompt", "the single-turn pair layout ([User "
                 "Question], [The Start of Assistant A's Answer] ...); multi-turn pair logs "
                 "are not read")
    two = layout(_PAIR, game2, "g2_user_prompt", "the single-turn pair layout")
    if (two["a"], two["b"], two["prompt"]) != (one["b"], one["a"], one["prompt"]):
        raise Bad("g2_user_prompt", "expected game 1's question with its answers swapped "
                  "(model_2 shown first)")
    item: JsonObject = {"id": item_id, "prompt": one["prompt"], "response_a": one["a"],
                        "response_b": one["b"], "label": None}
    if one["reference"] is not None:
        item["reference"] = one["reference"]
    # Both winners are item labels already (FastChat maps game 2 back): the position
    # shown is model_1 first in game 1 and model_2 first in game 2.
    g1, g2 = _winner(obj, "g1_winner"), _winner(obj, "g2_winner")
    swapped = {"a": "b", "b": "a", "tie": "tie", None: None}
    recorded: list[JsonObject] = [
        {"id": item_id, "order": "ab", "position": _POSITION[g1],
         "raw": text(obj, "g1_judgment")},
        {"id": item_id, "order": "ba", "position": _POSITION[swapped[g2]],
         "raw": text(obj, "g2_judgment")}]
    return item, recorded


def _single(prefix: str, line: int, obj: JsonObject) -> tuple[JsonObject, list[JsonObject]]:
    item_id = _id(prefix, line, obj)
    prompt = text(obj, "user_prompt")
    expected = ("a single-answer layout ([Question] ... [The Start of Assistant's Answer], "
                "or a conversation with User)")
    try:
        found = layout(_SINGLE, prompt, "user_prompt", expected, whole=False)
    except Bad:
        found = layout(_MULTI, prompt, "user_prompt", expected)
    score = obj.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not (
            score == -1 or 0 <= score <= 10):
        raise Bad("score", f"got {got(score)}; expected a rating 1-10, or -1 (none parsed)")
    item: JsonObject = {"id": item_id, "prompt": found["prompt"],
                        "response": found["response"], "label": None}
    if found["reference"] is not None:
        item["reference"] = found["reference"]
    return item, [{"id": item_id, "verdict": None if score == -1 else score,
                   "raw": text(obj, "judgment")}]


def convert(path: Path, *, single: bool, prefix: str = "mt-bench") -> Converted:
    """A ``gpt-4_pair.jsonl`` (``single`` False) or ``gpt-4_single.jsonl`` log."""
    items: list[JsonObject] = []
    recorded: list[JsonObject] = []
    errors: list[str] = []
    for record in jsonl_records(path):
        try:
            obj = as_object(record.value)
            item, verdicts = (_single if single else _pair)(prefix, record.line, obj)
        except Bad as bad:
            errors.append(str(record.error(bad.field, bad.message)))
            continue
        items.append(item)
        recorded.extend(verdicts)
    fail_on(errors, path)
    return Converted(tuple(items), tuple(recorded))
