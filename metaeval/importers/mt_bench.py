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

``judge`` ``[model, template]`` -> ``judge``: the model (``gpt-4``; its template
varies with the question's category within one run, so it is one judge).

Not carried: ``model``/``model_1``/``model_2`` names, ``tstamp``; the
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
    JudgeLogFormat,
    as_object,
    fail_on,
    got,
    jsonl_records,
    judge_named,
    keys_sniff,
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
# The single layouts are read by finding their fixed markers (``str.find``, linear):
# a regular expression searched from every "[Question]" with two open-ended parts
# took about 1 s a crafted line, and its time-out hid the real error.
_QUESTION = "[Question]\n"
_REFERENCE = ("[The Start of Reference Answer]\n", "\n[The End of Reference Answer]\n\n")
_ANSWER = ("[The Start of Assistant's Answer]\n", "\n[The End of Assistant's Answer]")
_CONVERSATION = ("<|The Start of Assistant A's Conversation with User|>\n\n",
                 "\n\n<|The End of Assistant A's Conversation with User|>")
_MULTI_REFERENCE = ("<|The Start of Reference Answer|>\n\n",
                    "\n\n<|The End of Reference Answer|>\n\n\n")
_TURN = "\n\n### Assistant A:\n"
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


def _judge(obj: JsonObject) -> JsonObject:
    """The judge's model from FastChat's ``judge`` ``[model, template]``."""
    value = obj.get("judge")
    return judge_named(value[0] if isinstance(value, list) and value else None)


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
         "raw": text(obj, "g1_judgment"), **_judge(obj)},
        {"id": item_id, "order": "ba", "position": _POSITION[swapped[g2]],
         "raw": text(obj, "g2_judgment"), **_judge(obj)}]
    return item, recorded


def _single_turn(value: str) -> tuple[str, str | None, str] | None:
    """``[Question]`` prompt, the reference if any, ``[The Start of Assistant's
    Answer]`` response ending the text; None when it is not this layout."""
    start = value.find(_QUESTION)
    if start < 0 or not value.endswith(_ANSWER[1]):
        return None
    body = value[start + len(_QUESTION):len(value) - len(_ANSWER[1])]
    answer = body.find("\n\n" + _ANSWER[0])
    reference = body.find("\n\n" + _REFERENCE[0])
    if reference >= 0 and (answer < 0 or reference < answer):
        begins = reference + 2 + len(_REFERENCE[0])
        ends = body.find(_REFERENCE[1] + _ANSWER[0], begins)
        if ends >= 0:
            return (body[:reference], body[begins:ends],
                    body[ends + len(_REFERENCE[1]) + len(_ANSWER[0]):])
    if answer < 0:
        return None
    return body[:answer], None, body[answer + 2 + len(_ANSWER[0]):]


def _multi_turn(value: str) -> tuple[str, str | None, str] | None:
    """The conversation with User up to its last ``### Assistant A:`` (the answer
    graded), after a reference if any; None when it is not this layout."""
    reference = None
    if value.startswith(_MULTI_REFERENCE[0]):
        ends = value.find(_MULTI_REFERENCE[1] + _CONVERSATION[0])
        if ends < 0:
            return None
        reference = value[len(_MULTI_REFERENCE[0]):ends]
        value = value[ends + len(_MULTI_REFERENCE[1]):]
    if not value.startswith(_CONVERSATION[0]) or not value.endswith(_CONVERSATION[1]):
        return None
    body = value[len(_CONVERSATION[0]):len(value) - len(_CONVERSATION[1])]
    turn = body.rfind(_TURN)
    if turn < 0:
        return None
    return body[:turn], reference, body[turn + len(_TURN):]


def _single(prefix: str, line: int, obj: JsonObject) -> tuple[JsonObject, list[JsonObject]]:
    item_id = _id(prefix, line, obj)
    prompt = text(obj, "user_prompt")
    found = _single_turn(prompt) or _multi_turn(prompt)
    if found is None:
        raise Bad("user_prompt", "not a single-answer layout ([Question] ... [The Start of "
                  "Assistant's Answer], or a conversation with User)")
    score = obj.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not (
            score == -1 or 0 <= score <= 10):
        raise Bad("score", f"got {got(score)}; expected a rating 1-10, or -1 (none parsed)")
    item: JsonObject = {"id": item_id, "prompt": found[0], "response": found[2],
                        "label": None}
    if found[1] is not None:
        item["reference"] = found[1]
    return item, [{"id": item_id, "verdict": None if score == -1 else score,
                   "raw": text(obj, "judgment"), **_judge(obj)}]


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


PAIR = JudgeLogFormat(
    "mt-bench-pair", "FastChat llm_judge gpt-4_pair.jsonl: both games of each pair.",
    "mt-bench", lambda log, o: convert(log, single=False, prefix=o.prefix),
    "the positions are mapped; re-read the replies with --reply mt-bench if you wish",
    keys_sniff("g1_winner", "g2_winner", "g1_user_prompt", "g2_user_prompt"))
SINGLE = JudgeLogFormat(
    "mt-bench-single", "FastChat llm_judge gpt-4_single.jsonl: one 1-10 rating per answer.",
    "mt-bench", lambda log, o: convert(log, single=True, prefix=o.prefix),
    "ratings are 1-10: audit with --scale 1-10 (and --pass-at N)",
    keys_sniff("user_prompt", "judgment", "score", absent=("games",)))
