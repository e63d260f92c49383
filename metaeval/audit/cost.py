"""What a judge costs per item: the tokens its verdicts used, from the recorded
usage or the live calls' usage, priced by ``[tool.metaeval.judge_prices]``.

A cost is never made up: with no usage recorded the cost is unknown (said, never
0), and with tokens but no price for the judge it is the tokens alone. A cached
reply carries no usage (its cost was paid by the run that stored it), so a rerun
from the cache reports what the calls it made cost, with how many verdicts that
covers. This module reads no file: the price table comes from the config.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from metaeval.audit.collect import VerdictTable
from metaeval.errors import InputError
from metaeval.judges.base import JudgeIdentity

__all__ = ["NO_PRICES", "JudgeCost", "Price", "Prices", "judge_cost", "panel_cost", "read_prices"]

PER = 1_000_000
"""Prices are per million tokens, as model vendors list them."""


@dataclass(frozen=True, slots=True)
class Price:
    """One model's price per million input and output tokens."""

    input: float
    output: float


@dataclass(frozen=True, slots=True)
class Prices:
    """``[tool.metaeval.judge_prices]``: a price by judge name or model."""

    table: Mapping[str, Price]
    where: str = "tool.metaeval.judge_prices"

    def of(self, identity: JudgeIdentity) -> tuple[Price, str] | None:
        """The judge's price, by its name first, then its model; with where it is."""
        for key in (identity.name, identity.model):
            if key and key in self.table:
                return self.table[key], f"{self.where}.{key}"
        return None


NO_PRICES = Prices(MappingProxyType({}))


def _rate(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
            value) or value < 0:
        raise InputError(f"{where}: got {value!r}; expected a finite number >= 0, the "
                         "price per million tokens")
    return float(value)


def read_prices(table: object, pyproject: object = None) -> Prices:
    """The price table as written (``{name: {input = N, output = N}}``), each value
    checked; None or absent is no price at all."""
    where = f"{pyproject}: tool.metaeval.judge_prices" if pyproject else \
        "tool.metaeval.judge_prices"
    if table is None:
        return Prices(MappingProxyType({}), where)
    if not isinstance(table, dict):
        raise InputError(f"{where}: got {table!r}; expected a table of prices by judge name "
                         'or model, e.g. "gpt-4o" = { input = 2.5, output = 10.0 }')
    prices: dict[str, Price] = {}
    for name, entry in table.items():
        at = f"{where}.{name}"
        if not isinstance(entry, dict):
            raise InputError(f"{at}: got {entry!r}; expected {{ input = N, output = N }}, "
                             "prices per million input and output tokens")
        unknown = sorted(set(entry) - {"input", "output"})
        if unknown:
            raise InputError(f"{at}.{unknown[0]}: unknown key; expected input and output")
        for key in ("input", "output"):
            if key not in entry:
                raise InputError(f"{at}.{key}: missing; expected the price per million "
                                 f"{key} tokens")
        prices[str(name)] = Price(_rate(entry["input"], f"{at}.input"),
                                  _rate(entry["output"], f"{at}.output"))
    return Prices(MappingProxyType(prices), where)


@dataclass(frozen=True, slots=True)
class JudgeCost:
    """A judge's tokens and cost per item. ``items`` counts the items the verdicts
    with usage were given on (every sample, order and probe text of an item is that
    item's cost); ``None`` figures are unknown, and ``note`` says why."""

    verdicts: int
    with_usage: int
    items: int
    input_per_item: float | None
    output_per_item: float | None
    per_item: float | None
    price_from: str
    """Where the price came from: a ``judge_prices`` key, ``the log`` (a recorded
    price per call), or "" when there is none."""
    note: str

    def per_point(self, agreement: float | None) -> float | None:
        """Cost per item divided by agreement in percentage points (0..100): what one
        point of agreement with people costs per item; None when either is unknown or
        the agreement is 0."""
        if self.per_item is None or agreement is None or agreement <= 0:
            return None
        return self.per_item / (agreement * 100)


def judge_cost(table: VerdictTable, identity: JudgeIdentity, prices: Prices) -> JudgeCost:
    """The cost of the verdicts in ``table`` (see ``JudgeCost``)."""
    verdicts = sum(len(v) for v in table.decisions.values())
    spent = [(slot.item, u) for slot, usages in table.usage.items() for u in usages
             if u is not None]
    if not spent:
        return JudgeCost(verdicts, 0, 0, None, None, None, "", "no usage recorded")
    items = len({item for item, _ in spent})
    counted = [(u.input_tokens, u.output_tokens) for _, u in spent]
    ins = [i for i, _ in counted if i is not None]
    outs = [o for _, o in counted if o is not None]
    # Tokens per item only when every call with usage counted them (a log may record a
    # price alone); a part would read as fewer tokens.
    tokens_in = sum(ins) / items if len(ins) == len(spent) else None
    tokens_out = sum(outs) / items if len(outs) == len(spent) else None
    partial = (f"usage on {len(spent)} of {verdicts} verdicts"
               if len(spent) < verdicts else "")
    costs = [u.cost for _, u in spent]
    if all(c is not None for c in costs):
        per_item = sum(c for c in costs if c is not None) / items
        return JudgeCost(verdicts, len(spent), items, tokens_in, tokens_out, per_item,
                         "the log", partial)
    found = prices.of(identity)
    if tokens_in is None or tokens_out is None:
        return JudgeCost(verdicts, len(spent), items, None, None, None, "",
                         "; ".join(n for n in (partial, "a price on some calls, no tokens")
                                   if n))
    if found is None:
        why = (f"no price for {identity.name!r} in [{prices.where.rpartition(': ')[2]}]")
        return JudgeCost(verdicts, len(spent), items, tokens_in, tokens_out, None, "",
                         "; ".join(n for n in (partial, why) if n))
    price, where = found
    per_item = (tokens_in * price.input + tokens_out * price.output) / PER
    return JudgeCost(verdicts, len(spent), items, tokens_in, tokens_out, per_item, where,
                     partial)


def panel_cost(members: Sequence[JudgeCost]) -> JudgeCost:
    """A panel's cost per item: its members' together (every member is asked every
    question); unknown when any member's is, since a partial sum would read as a
    cheaper panel."""
    unknown = [m for m in members if m.per_item is None]
    tokens_in = [m.input_per_item for m in members]
    tokens_out = [m.output_per_item for m in members]
    note = "" if not unknown else (
        "no usage recorded" if all(m.with_usage == 0 for m in members)
        else "a member's cost is unknown")
    return JudgeCost(
        sum(m.verdicts for m in members), sum(m.with_usage for m in members),
        max((m.items for m in members), default=0),
        None if any(t is None for t in tokens_in) else sum(t for t in tokens_in if t),
        None if any(t is None for t in tokens_out) else sum(t for t in tokens_out if t),
        None if unknown else sum(m.per_item for m in members if m.per_item is not None),
        "" if unknown else "its members", note)
