"""Arena-Hard-Auto judgment logs: ``model_judgment/<judge>/<model>.jsonl`` (v0.1,
both the 2024 keys and the 2025 "reformat v0.1" keys).

- ``question_id`` (2024) or ``uid`` (2025) -> ``id`` = ``PREFIX-<question_id>``
- ``games[0].user_prompt`` ``<|User Prompt|>`` / answers A and B -> ``prompt``,
  ``response_a`` (the baseline: A in game 1), ``response_b`` (``model``)
- ``games[0].score`` ``A>>B`` ... ``B>>A`` -> ``order`` ``ab``, ``position`` (A first, B
  second, ``A=B`` tie), ``strength`` (``>>`` strong, ``>`` slight)
- ``games[1].score`` -> ``order`` ``ba`` (the model shown first), ``position``,
  ``strength``
- ``score`` null, or a label none of the five (``A<B``) -> ``position`` null: unscored,
  as Arena-Hard drops it
- ``games[i].judgment`` -> ``raw`` (re-read with ``--reply arena``)
- ``judge`` -> ``judge`` (so that several judges' logs can be audited side by side)

Game 2's prompt must show game 1's answers swapped, or the line is an error. Not
carried: ``model``, ``category``, ``baseline`` names; the system prompt
(in the judge config, not the log). v2.0 logs (``judgment`` an object, ``prompt``
messages) are an error naming the field. No human label: ``"label": null``.
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
    unique,
)
from metaeval.judges.base import Choice
from metaeval.judges.reply import ARENA_LABELS

_GAME = regex.compile(
    r"<\|User Prompt\|>\n(?P<prompt>.*?)\n\n"
    r"<\|The Start of Assistant A's Answer\|>\n(?P<a>.*)\n<\|The End of Assistant A's Answer\|>"
    r"\n\n<\|The Start of Assistant B's Answer\|>\n(?P<b>.*)\n"
    r"<\|The End of Assistant B's Answer\|>", regex.DOTALL)
_POSITION = {Choice.A: "first", Choice.B: "second", Choice.TIE: "tie"}


def _verdict(game: JsonObject, field: str) -> tuple[str | None, str | None]:
    """The position and strength a game's ``score`` says; an unknown label or null
    is no verdict (unscored), as upstream scoring drops it."""
    score = game.get("score")
    if score is not None and not isinstance(score, str):
        raise Bad(f"{field}.score", f"got {got(score)}; expected a label such as 'A>>B', or null")
    if score not in ARENA_LABELS:
        return None, None
    choice, strength = ARENA_LABELS[score]
    return _POSITION[choice], strength


def _line(prefix: str, obj: JsonObject) -> tuple[JsonObject, list[JsonObject]]:
    key = "uid" if "uid" in obj else "question_id"
    item_id = f"{prefix}-{text(obj, key)}"
    games = obj.get("games")
    if not isinstance(games, list) or len(games) != 2:
        raise Bad("games", f"got {got(games)}; expected two games (both orders)")
    one_g, two_g = as_object(games[0], "games[0]"), as_object(games[1], "games[1]")
    for field, game in (("games[0]", one_g), ("games[1]", two_g)):
        if not isinstance(game.get("user_prompt"), str):
            raise Bad(f"{field}.user_prompt", f"got {got(game.get('user_prompt'))}; expected "
                      "the judge's prompt text (v2.0 logs, with 'prompt' messages, are not read)")
    expected = "the Arena-Hard layout (<|User Prompt|>, <|The Start of Assistant A's Answer|> ...)"
    one = layout(_GAME, text(one_g, "user_prompt"), "games[0].user_prompt", expected)
    two = layout(_GAME, text(two_g, "user_prompt"), "games[1].user_prompt", expected)
    if (two["a"], two["b"], two["prompt"]) != (one["b"], one["a"], one["prompt"]):
        raise Bad("games[1].user_prompt", "expected game 1's prompt with its answers swapped")
    item: JsonObject = {"id": item_id, "prompt": one["prompt"], "response_a": one["a"],
                        "response_b": one["b"], "label": None}
    recorded: list[JsonObject] = []
    for field, game, order in (("games[0]", one_g, "ab"), ("games[1]", two_g, "ba")):
        position, strength = _verdict(game, field)
        record: JsonObject = {"id": item_id, "order": order, "position": position,
                              "raw": text(game, "judgment"), **judge_named(obj.get("judge"))}
        if strength is not None:
            record["strength"] = strength
        recorded.append(record)
    return item, recorded


def convert(path: Path, *, prefix: str = "arena-hard") -> Converted:
    items: list[JsonObject] = []
    recorded: list[JsonObject] = []
    errors: list[str] = []
    where: list[str] = []
    for record in jsonl_records(path):
        try:
            item, verdicts = _line(prefix, as_object(record.value))
        except Bad as bad:
            errors.append(str(record.error(bad.field, bad.message)))
            continue
        items.append(item)
        where.append(record.source)
        recorded.extend(verdicts)
    errors += unique([str(i["id"]) for i in items], where)
    fail_on(errors, path)
    return Converted(tuple(items), tuple(recorded))


FORMAT = JudgeLogFormat(
    "arena-hard", "Arena-Hard-Auto model_judgment/<judge>/<model>.jsonl: both games, A>>B "
    "scores.", "arena-hard", lambda log, o: convert(log, prefix=o.prefix),
    "response_a is the baseline (A in game 1); re-read with --reply arena if you wish",
    keys_sniff("games", "model"))
