"""A judge's cost from a live judge's calls: the tokens the backend counted, none for
a reply served from the cache, priced by the price table; and a log's own price."""

from __future__ import annotations

from pathlib import Path

import pytest

from metaeval.audit.collect import ask_judge, recorded_table
from metaeval.audit.cost import judge_cost, panel_cost, read_prices
from metaeval.errors import InputError
from metaeval.judges.base import CallInfo, Choice, JudgeIdentity, JudgeReply, Mode, Scale
from metaeval.loaders.judge_items import JudgeItems, PairItem
from metaeval.loaders.recorded_verdicts import load_recorded


class Metered:
    """A pairwise judge whose every call counts 300 input and 20 output tokens; the
    second item's reply comes from a cache (no tokens)."""

    identity = JudgeIdentity("metered", model="m-1")
    scale = Scale()
    modes = frozenset({Mode.PAIRWISE})

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply:
        raise AssertionError("a pairwise judge is not asked to score")

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply:
        cached = prompt == "q2"
        return JudgeReply(Choice.A, "A", call=CallInfo(0.1, None if cached else 300,
                                                       None if cached else 20, cached=cached))


def _pairs(n: int) -> JudgeItems:
    return JudgeItems(pairwise=tuple(PairItem(f"p{i}", f"q{i}", "x", "y", None, "a",
                                              f"items.ndjson:{i}")
                                     for i in range(1, n + 1)))


def test_live_calls_are_priced_from_the_tokens_the_backend_counted() -> None:
    table = ask_judge(Metered(), _pairs(3))  # both orders: 6 calls, 2 of them cached
    prices = read_prices({"m-1": {"input": 1.0, "output": 5.0}})
    cost = judge_cost(table, Metered.identity, prices)
    assert (cost.verdicts, cost.with_usage, cost.items) == (6, 4, 2)
    # two calls an item (ab and ba): 600 input and 40 output tokens
    assert (cost.input_per_item, cost.output_per_item) == (600, 40)
    assert cost.per_item == pytest.approx((600 * 1.0 + 40 * 5.0) / 1_000_000)
    assert cost.price_from == "tool.metaeval.judge_prices.m-1"  # found by its model
    assert cost.note == "usage on 4 of 6 verdicts"
    unpriced = judge_cost(table, Metered.identity, read_prices(None))
    assert unpriced.per_item is None and "no price for 'metered'" in unpriced.note


def test_a_panel_s_cost_is_unknown_when_a_member_s_is() -> None:
    table = ask_judge(Metered(), _pairs(1))
    prices = read_prices({"metered": {"input": 1.0, "output": 0.0}})
    known = judge_cost(table, Metered.identity, prices)
    assert known.per_item is not None
    assert panel_cost([known, known]).per_item == pytest.approx(2 * known.per_item)
    unknown = judge_cost(table, Metered.identity, read_prices(None))
    together = panel_cost([known, unknown])
    assert together.per_item is None and together.note == "a member's cost is unknown"


@pytest.mark.parametrize(("table", "said"), [
    ({"m": {"input": 1}}, "tool.metaeval.judge_prices.m.output: missing"),
    ({"m": {"input": 1, "output": 2, "cached": 1}}, "m.cached: unknown key"),
    ({"m": 3}, "tool.metaeval.judge_prices.m: got 3; expected { input = N, output = N }"),
    ({"m": {"input": float("nan"), "output": 1}}, "m.input: got nan; expected a finite"),
    ([1], "got [1]; expected a table of prices"),
])
def test_a_bad_price_is_refused_naming_its_key(table: object, said: str) -> None:
    with pytest.raises(InputError, match=None) as raised:
        read_prices(table)
    assert said in str(raised.value)


def test_a_price_recorded_without_tokens_is_the_cost(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"id": "p1", "verdict": "a", "usage": {"cost": 0.01}}\n'
                   '{"id": "p2", "verdict": "a", "usage": {"cost": 0.03}}\n'
                   '{"id": "p3", "verdict": "a", "usage": {"input_tokens": 5}}\n')
    records, errors = load_recorded(log)
    assert [str(e) for e in errors] == [
        f"{log}:3: usage.output_tokens: got nothing; expected an integer >= 0 (the tokens the "
        "backend counted)"]
    cost = judge_cost(recorded_table(records), JudgeIdentity("j"), read_prices(None))
    assert cost.per_item == pytest.approx(0.02) and cost.price_from == "the log"
    assert cost.input_per_item is None
