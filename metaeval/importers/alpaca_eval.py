"""AlpacaEval annotations: ``results/<model>/<annotator>/annotations.json`` (one
JSON array; ``alpaca_eval_gpt4`` and ``weighted_alpaca_eval_gpt4_turbo`` layouts).

- position in the array -> ``id`` = ``PREFIX-<index>`` (0-based)
- ``instruction``, ``output_1`` (the baseline), ``output_2`` (the model) -> ``prompt``,
  ``response_a``, ``response_b``
- ``preference`` in [1, 2] (already un-swapped; weighted: 2 - P(output_1)) ->
  ``verdict``: below 1.5 ``a``, above ``b``, exactly 1.5 ``tie`` (identical outputs),
  null unscored
- the order shown (not stored; AlpacaEval's ``RandomSwitchTwoColumnsProcessor`` rule,
  seeded by ``instruction`` and ``--seed``) -> ``order`` ``ab`` or ``ba``
- ``raw_completion.message.content`` (``m``/``M``, the shown order), or the string ->
  ``raw``
- ``annotator`` -> ``judge``; ``price_per_example`` -> ``usage.cost`` (the price the
  tool recorded for the call; it records no tokens)

One order per instruction: the position probe cannot run. ``verdict`` is the
item-letter form because ``preference`` is already mapped back to the outputs;
the weight of a weighted preference is not carried (no strength is stated). Not
carried: ``generator_*``, ``dataset``, time. No human
label: ``"label": null``.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue
from metaeval.importers.common import (
    Bad,
    Converted,
    JudgeLogFormat,
    as_object,
    fail_on,
    got,
    json_array,
    judge_named,
    keys_sniff,
    text,
)


def shown_swapped(instruction: str, seed: int) -> bool:
    """Whether AlpacaEval showed output_2 first: its ``RandomSwitchTwoColumnsProcessor``
    (``random_seed_column="instruction"``, the annotator's ``seed``)."""
    return random.Random("is_switched_outputs" + instruction + str(seed)).choices(
        [False, True], k=1)[0]


def _verdict(value: JsonValue) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and 1 <= value <= 2):
        raise Bad("preference", f"got {got(value)}; expected a number from 1 (output_1 "
                  "preferred) to 2 (output_2 preferred), or null")
    return "a" if value < 1.5 else "b" if value > 1.5 else "tie"


def _price(obj: JsonObject) -> JsonObject:
    """``usage.cost`` from ``price_per_example`` when it is a price (a finite number
    >= 0); else nothing: an unknown price is left unknown, never 0."""
    price = obj.get("price_per_example")
    if isinstance(price, bool) or not isinstance(price, int | float) or not (
            math.isfinite(price) and price >= 0):
        return {}
    return {"usage": {"cost": price}}


def _raw(value: JsonValue) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        message = value.get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


def convert(path: Path, *, prefix: str = "alpaca-eval", seed: int = 0) -> Converted:
    items: list[JsonObject] = []
    recorded: list[JsonObject] = []
    errors: list[str] = []
    for index, value in enumerate(json_array(path)):
        item_id = f"{prefix}-{index:03d}"
        try:
            obj = as_object(value)
            instruction = text(obj, "instruction")
            item: JsonObject = {"id": item_id, "prompt": instruction,
                                "response_a": text(obj, "output_1"),
                                "response_b": text(obj, "output_2"), "label": None}
            verdict = _verdict(obj.get("preference"))
        except Bad as bad:
            errors.append(f"{path}: [{index}].{bad.field}: {bad.message}")
            continue
        items.append(item)
        recorded.append({"id": item_id, "order": "ba" if shown_swapped(instruction, seed)
                         else "ab", "verdict": verdict, "raw": _raw(obj.get("raw_completion")),
                         **judge_named(obj.get("annotator")), **_price(obj)})
    fail_on(errors, path)
    return Converted(tuple(items), tuple(recorded))


FORMAT = JudgeLogFormat(
    "alpaca-eval", "AlpacaEval results/<model>/<annotator>/annotations.json: one order per "
    "item.", "alpaca-eval", lambda log, o: convert(log, prefix=o.prefix, seed=o.seed),
    "one order per item: the position probe cannot run on this log",
    keys_sniff("instruction", "output_1", "output_2", "preference", array=True), seeded=True)
