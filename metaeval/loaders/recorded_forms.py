"""The positional form of a recorded pairwise verdict, and a preference's strength.

A judge log says which response was shown *first* and which *second*, not which
item response won. ``{"id", "order", "position": "first"|"second"|"tie"|null}``
records exactly that, and metaeval maps it to the item's own ``a``/``b`` through
``order``, so a swapped order is never flipped by hand (and a log left unflipped
cannot be fed by mistake: ``verdict`` always names the item's response, ``position``
always the one shown). ``strength`` keeps how strongly a preference was stated
(``A>>B`` strong, ``A>B`` slight); ``judge`` names the judge in a log of several, and
``usage`` what the call cost. This module only reads one record's fields; it must
never guess a mapping the record does not state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from metaeval.contract import JsonObject
from metaeval.errors import BadField, shown_json
from metaeval.judges.base import Mode

POSITIONS = ("first", "second", "tie")
"""What a positional verdict may say: the response shown first, second, or neither."""
STRENGTHS = ("strong", "slight")
"""How strongly a pairwise preference was stated: ``A>>B`` is strong, ``A>B`` slight."""


def positional(raw: JsonObject, first: str, second: str, kind: Mode | None) -> str | None:
    """The item label ``position`` names: ``first``/``second`` mapped through the
    order shown (``first``, ``second``: the item labels shown in those places), ``tie``
    kept, null unscored. A record with ``position`` must say ``order`` and must not
    also carry ``verdict``: two conventions in one record is a mapping not made."""
    if "verdict" in raw:
        raise BadField("position", "given with 'verdict'; expected one of them: 'verdict' names "
                       "the item's response (a/b), 'position' the one shown (first/second)")
    if "order" not in raw:
        raise BadField("order", "missing; a 'position' needs the order shown: 'ab' (response_a "
                       "first) or 'ba' (response_b first)")
    if kind is Mode.POINTWISE:
        raise BadField("position", "given for a pointwise item; expected 'verdict' (a score or "
                       "pass/fail): a position is a pairwise verdict")
    value = raw["position"]
    if value is None:
        return None
    if not isinstance(value, str) or value not in POSITIONS:
        raise BadField("position", f"got {shown_json(value)}; expected 'first', 'second', 'tie' or "
                       "null (unscored)")
    return {"first": first, "second": second, "tie": "tie"}[value]


def strength_of(raw: JsonObject, verdict: object) -> str | None:
    """``strength`` (``strong``/``slight``) of a record whose verdict prefers one
    response; absent or null when the log states none. A strength on a tie or an
    unscored verdict is an error: there is no preference to be strong about."""
    value = raw.get("strength")
    if value is None:
        return None
    if not isinstance(value, str) or value not in STRENGTHS:
        raise BadField("strength", f"got {shown_json(value)}; expected 'strong', 'slight' or null")
    if verdict not in ("a", "b"):
        raise BadField("strength",
                       f"got {shown_json(value)} with verdict {shown_json(verdict)}; a strength "
                       "applies to a pairwise preference (a or b), not a tie, score or null")
    return value


JUDGE_NAME_CHARS = 200
"""The longest judge name a record may carry (a name, never a document)."""


def judge_name(raw: JsonObject) -> str | None:
    """``judge``: which judge gave the verdict, in a log that holds several (absent: a
    one-judge log). A non-empty string, so a log's judges are told apart by name."""
    if "judge" not in raw:
        return None
    value = raw["judge"]
    if not isinstance(value, str) or not value.strip() or len(value) > JUDGE_NAME_CHARS:
        raise BadField("judge", f"got {shown_json(value)}; expected the judge's name, a "
                       f"non-empty string of at most {JUDGE_NAME_CHARS} characters")
    return value


@dataclass(frozen=True, slots=True)
class Usage:
    """What one recorded call cost: its input and output tokens, as the backend
    counted them, and the price the log itself recorded for it, when it did."""

    input_tokens: int | None
    """None (with ``output_tokens``) when the log records a price but no tokens."""
    output_tokens: int | None
    cost: float | None = None
    """The call's price as the log states it (say, AlpacaEval's ``price_per_example``);
    None: priced from the tokens and the price table."""


USAGE_KEYS = ("input_tokens", "output_tokens", "cost")


def usage_of(raw: JsonObject) -> Usage | None:
    """``usage``: ``{"input_tokens": int, "output_tokens": int, "cost"?: number}``, or
    ``{"cost": number}`` alone (a log that records a price and no tokens), or null /
    absent (not recorded). Counts are integers >= 0; a cost a finite number >= 0."""
    value = raw.get("usage")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadField("usage", f"got {shown_json(value)}; expected an object "
                       '{"input_tokens": N, "output_tokens": N} or null (not recorded)')
    for key in value:
        if key not in USAGE_KEYS:
            raise BadField(f"usage.{key}", f"unknown field; expected {', '.join(USAGE_KEYS)}")
    cost = value.get("cost")
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)
                             or not math.isfinite(cost) or cost < 0):
        raise BadField("usage.cost", f"got {shown_json(cost)}; expected a finite number >= 0 "
                       "(the call's price as the log recorded it) or null")
    if cost is not None and "input_tokens" not in value and "output_tokens" not in value:
        return Usage(None, None, float(cost))
    counts = []
    for key in ("input_tokens", "output_tokens"):
        count = value.get(key)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise BadField(f"usage.{key}", f"got {shown_json(count)}; expected an integer >= 0 "
                           "(the tokens the backend counted)")
        counts.append(count)
    return Usage(counts[0], counts[1], None if cost is None else float(cost))
