"""The field checks every record reader shares: a text field, and no key the record
does not know (with a "did you mean"). Each raises ``BadField`` naming the field and
echoing the bad value; the reader adds the file and line. Public so that the
meta-set, judge-item and label readers take them from one home, not from each
other's privates. Nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from metaeval.contract import JsonObject
from metaeval.errors import BadField, shown_json
from metaeval.keys import did_you_mean
from metaeval.untrusted_json import join_field

__all__ = ["missing_or_bad", "no_unknown", "text_field"]


def missing_or_bad(obj: JsonObject, key: str, where: str, expected: str) -> BadField:
    """The error for ``obj[key]``: missing, or its value echoed, and what was expected."""
    if key not in obj:
        return BadField(where, f"missing; expected {expected}")
    return BadField(where, f"got {shown_json(obj[key])}; expected {expected}")


def text_field(obj: JsonObject, key: str, where: str, *, required: bool = True,
               allowed: Sequence[str] = ()) -> str:
    """``obj[key]`` as text: non-empty when ``required`` ("" when absent and not), one
    of ``allowed`` when given."""
    value = obj.get(key)
    expected = "one of " + ", ".join(map(repr, allowed)) if allowed else "a non-empty string"
    if value is None and not required and key not in obj:
        return ""
    if not isinstance(value, str) or (required and not value) or (allowed and value not in allowed):
        raise missing_or_bad(obj, key, where, expected)
    return value


def no_unknown(obj: JsonObject, known: set[str], where: str,
               hints: Iterable[str] = ()) -> None:
    """Refuse the first key not in ``known``, suggesting the closest of ``known``
    and ``hints`` (keys of related records that a typo may have meant)."""
    unknown = sorted(set(obj) - known)
    if unknown:
        expected = ", ".join(sorted(known))
        hint = did_you_mean(unknown[0], known | set(hints))
        raise BadField(join_field(where, unknown[0]), f"unknown field; expected one of "
                       f"{expected}{hint}")
