"""The positional form of a recorded pairwise verdict, and a preference's strength.

A judge log says which response was shown *first* and which *second*, not which
item response won. ``{"id", "order", "position": "first"|"second"|"tie"|null}``
records exactly that, and metaeval maps it to the item's own ``a``/``b`` through
``order``, so a swapped order is never flipped by hand (and a log left unflipped
cannot be fed by mistake: ``verdict`` always names the item's response, ``position``
always the one shown). ``strength`` keeps how strongly a preference was stated
(``A>>B`` strong, ``A>B`` slight). This module only reads one record's fields; it
must never guess a mapping the record does not state.
"""

from __future__ import annotations

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
