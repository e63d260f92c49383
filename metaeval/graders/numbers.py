"""Finding the figures in text and JSON, as a reader would see them.

"$1,234.50" is 1234.50 shown to two places; "order A-1182" holds 1182. Values
are Decimals so that "49.99" compares exactly, never through a float.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from metaeval.contract import JsonValue

# A figure not glued to a word on its left: thousands groups or plain digits,
# then optional decimals. "A1182" is an identifier, not a number.
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?!\d)")
# Digits inside an identifier ("certificate_7504069", "ORD48213"): a source that
# returns one grounds a reply that shows the number. Four digits at least, so a
# flight "HAT030" does not ground "$30".
_GLUED = re.compile(r"\d{4,}")


@dataclass(frozen=True, slots=True)
class Figure:
    """A number as written: its value, the decimal places shown, and the text."""

    value: Decimal
    places: int
    text: str

    @property
    def is_count(self) -> bool:
        """Small whole numbers (1 item, 3 days, 12 months) are too common to ground."""
        return self.places == 0 and self.value <= 12

    @property
    def is_year(self) -> bool:
        return (self.places == 0 and "," not in self.text and len(self.text) == 4
                and 1900 <= self.value <= 2100)

    def shown_by(self, source: Decimal) -> bool:
        """True when ``source``, rounded to the places shown here, is this figure."""
        step = Decimal(1).scaleb(-self.places)  # metaeval: skip quantize reads only the exponent
        return source.quantize(step, rounding=ROUND_HALF_UP) == self.value


def figures(text: str) -> list[Figure]:
    found = []
    for m in _NUMBER.finditer(text):
        whole, frac = m.group(1), m.group(2) or ""
        value = Decimal(whole.replace(",", "") + frac)
        found.append(Figure(value, max(len(frac) - 1, 0), m.group(0)))
    return found


def values_in(node: JsonValue) -> Iterator[Decimal]:
    """Every number in a JSON value: numeric leaves, figures inside strings, and
    runs of four or more digits inside identifiers (what a source can ground)."""
    if isinstance(node, bool) or node is None:
        return
    if isinstance(node, int | float):
        yield Decimal(str(node))
    elif isinstance(node, str):
        yield from (f.value for f in figures(node))
        yield from (Decimal(m.group(0)) for m in _GLUED.finditer(node))
    elif isinstance(node, list):
        for item in node:
            yield from values_in(item)
    else:
        for item in node.values():
            yield from values_in(item)
