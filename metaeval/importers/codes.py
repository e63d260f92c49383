"""Integer-code verdict logs (``0``/``1``/``2`` and the like), each code's meaning
declared by the user: ``--code 0=tie --code 1=first --code 2=second``.

- ``--id-field`` (default ``id``) -> ``id`` (the item's, in the user's own items file)
- ``--code-field`` (default ``verdict``), mapped by ``--code CODE=MEANING`` ->
  ``position`` (``first``/``second``/``tie``/``unscored``) or ``verdict``
  (``a``/``b``/``tie``/``unscored``)
- ``--order-field`` (values ``ab``/``ba``), or ``--order`` for the whole log ->
  ``order``
- ``--sample-field`` (optional) -> ``sample``

Writes recorded verdicts only: the items come from the user's own file. A code
with no declared meaning, meanings of both kinds (positions and item letters),
or a position without an order is an error: never a guess; and so is a
second line for one id, order and sample (``judge-audit`` would refuse it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from metaeval.contract import JsonObject
from metaeval.errors import InputError
from metaeval.importers.common import Bad, Converted, as_object, fail_on, got, jsonl_records

POSITIONAL = ("first", "second", "tie", "unscored")
LETTERS = ("a", "b", "tie", "unscored")


def parse_codes(pairs: tuple[str, ...]) -> dict[str, str]:
    """``CODE=MEANING`` flags to a table; raises InputError on a bad or mixed one."""
    table: dict[str, str] = {}
    for pair in pairs:
        code, sep, meaning = pair.partition("=")
        if not sep or not code or meaning not in set(POSITIONAL) | set(LETTERS):
            raise InputError(f"--code: got {pair!r}; expected CODE=MEANING, MEANING one of "
                             "first, second, tie, unscored (the position shown) or a, b, tie, "
                             "unscored (the item's response)")
        if code in table:
            raise InputError(f"--code: got {code!r} twice; expected one meaning per code")
        table[code] = meaning
    if not table:
        raise InputError("--code: missing; declare every code's meaning, e.g. --code 0=tie "
                         "--code 1=first --code 2=second")
    kinds = {"position" if m in ("first", "second") else "verdict" for m in table.values()
             if m in ("first", "second", "a", "b")}
    if len(kinds) > 1:
        raise InputError(f"--code: got {', '.join(pairs)}; expected positions (first/second) "
                         "or item letters (a/b), not both in one log")
    return table


def convert(path: Path, codes: Mapping[str, str], *, id_field: str = "id",
            code_field: str = "verdict", order_field: str | None = None,
            order: str | None = None, sample_field: str | None = None) -> Converted:
    positional = any(m in ("first", "second") for m in codes.values())
    if positional and order is None and order_field is None:
        raise InputError("--code: positions (first/second) need the order shown: "
                         "--order-field KEY or --order ab|ba")
    recorded: list[JsonObject] = []
    errors: list[str] = []
    first: dict[tuple[str, str, int], str] = {}
    for record in jsonl_records(path):
        try:
            obj = as_object(record.value)
            item_id = obj.get(id_field)
            if isinstance(item_id, bool) or not isinstance(item_id, str | int):
                raise Bad(id_field, f"got {got(item_id)}; expected the item's id")
            value = obj.get(code_field)
            meaning = codes.get(str(value)) if isinstance(value, int | str) and not isinstance(
                value, bool) else None
            if meaning is None:
                raise Bad(code_field, f"got {got(value)}; expected one of the declared codes "
                          + ", ".join(sorted(codes)))
            out: JsonObject = {"id": str(item_id)}
            shown = obj.get(order_field) if order_field is not None else order
            if order_field is not None and shown not in ("ab", "ba"):
                raise Bad(order_field, f"got {got(shown)}; expected 'ab' or 'ba'")
            if shown is not None:
                out["order"] = shown
            if sample_field is not None:
                sample = obj.get(sample_field)
                if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
                    raise Bad(sample_field, f"got {got(sample)}; expected an integer >= 0")
                out["sample"] = sample
            # judge-audit refuses a second verdict for one id, order and sample: so
            # is it here, before anything is written
            sampled = out.get("sample", 0)
            key = (str(item_id), str(shown or "ab"), sampled if isinstance(sampled, int) else 0)
            if key in first:
                raise Bad(id_field, f"got {got(item_id)} again (first at {first[key]}); "
                          "expected one verdict per id, order and sample (declare "
                          "--sample-field when a log holds several)")
            first[key] = record.source
        except Bad as bad:
            errors.append(str(record.error(bad.field, bad.message)))
            continue
        out["position" if positional else "verdict"] = (None if meaning == "unscored"
                                                        else meaning)
        recorded.append(out)
    fail_on(errors, path)
    return Converted((), tuple(recorded))
