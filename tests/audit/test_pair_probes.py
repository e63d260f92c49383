"""Pairwise length and injection probes on hand-built verdict tables and on small
judges whose only behaviour is known."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from metaeval.audit.bars import DEFAULT_BARS
from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.collect import Decision, VerdictTable, ask_judge
from metaeval.audit.controls import run_probes
from metaeval.audit.generate import pairwise_length
from metaeval.audit.pair_probes import pair_flip_probe
from metaeval.judges.base import DEFAULT_SCALE, CallInfo, Choice, JudgeIdentity, JudgeReply, Mode
from metaeval.loaders.judge_items import (
    JudgeItems,
    Order,
    PairInjectionCase,
    PairItem,
    PairLengthProbe,
    Slot,
    Variant,
)


def _probes(n: int) -> tuple[PairLengthProbe, ...]:
    return tuple(PairLengthProbe(f"p{i}", "q", "good", "bad", None, "a", "good" + "!" * 9,
                                 "bad" + "!" * 9, "f:1") for i in range(n))


def _table(probes: tuple[PairLengthProbe, ...], padded: Decision, control: Decision
           ) -> VerdictTable:
    decisions: dict[Slot, tuple[Decision, ...]] = {}
    for p in probes:
        for order in Order:
            decisions[Slot(p.id, Variant.PADDED, order)] = (padded,)
            decisions[Slot(p.id, Variant.CONTROL, order)] = (control,)
    return VerdictTable(decisions)


def test_choosing_the_padded_worse_response_is_found() -> None:
    probes = _probes(3)
    result = pair_flip_probe(probes, _table(probes, "b", "a"), "length")
    assert result.status is ProbeStatus.FOUND
    assert (result.units, result.probe_worse, result.control_worse) == (6, 6, 0)
    assert result.p_value == pytest.approx(2 * 0.5 ** 6)


def test_a_judge_that_always_chooses_the_worse_one_is_clean() -> None:
    # It chooses the worse response whatever is padded: wrong, but not length-biased.
    probes = _probes(5)
    result = pair_flip_probe(probes, _table(probes, "b", "b"), "length")
    assert result.status is ProbeStatus.CLEAN and result.only_probe == 0


def test_the_reverse_pull_is_not_a_bias_and_unscored_units_are_counted() -> None:
    probes = _probes(5)
    assert pair_flip_probe(probes, _table(probes, "a", "b"), "length").status \
        is ProbeStatus.CLEAN
    result = pair_flip_probe(probes, _table(probes, None, "a"), "length")
    assert result.status is ProbeStatus.NOT_RUN and result.unscored == 10
    assert pair_flip_probe((), VerdictTable(), "length").status is ProbeStatus.NOT_RUN


def test_injection_kinds_are_tested_one_by_one() -> None:
    cases = tuple(PairInjectionCase(f"c{k}{i}", "q", "good", "bad", None, "a", "!" * 5,
                                    "." * 5, "f:1", kind=k)
                  for k in ("x", "y") for i in range(4))
    decisions: dict[Slot, tuple[Decision, ...]] = {}
    for c in cases:
        for order in Order:
            decisions[Slot(c.id, Variant.INJECTED, order)] = ("b" if c.kind == "x" else "a",)
            decisions[Slot(c.id, Variant.CONTROL, order)] = ("a",)
    result = pair_flip_probe(cases, VerdictTable(decisions), "injection")
    kinds = dict(result.by_kind)
    assert kinds["x"].status is ProbeStatus.FOUND  # 8 of 8, p=0.0078 < 0.025
    assert kinds["y"].status is ProbeStatus.CLEAN
    assert result.status is ProbeStatus.FOUND


@dataclass(frozen=True)
class LongerJudge:
    """Prefers the longer of two answers, and nothing else: a tie on equal length."""

    scale = DEFAULT_SCALE
    modes = frozenset({Mode.PAIRWISE})

    @property
    def identity(self) -> JudgeIdentity:
        return JudgeIdentity("longer", model="test")

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply:
        raise AssertionError("pairwise only")

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply:
        a, b = len(response_a), len(response_b)
        choice = Choice.A if a > b else Choice.B if b > a else Choice.TIE
        return JudgeReply(choice, choice.value, call=CallInfo())


def test_a_judge_that_only_prefers_the_longer_answer_is_found_and_clean_on_position() -> None:
    pairs = tuple(PairItem(f"p{i}", f"question {i}?", "A careful, complete answer." + "x" * i,
                           "Short." + "y" * (2 * i), None, "a" if i % 2 else "b", "f:1")
                  for i in range(10))
    items = JudgeItems(pairwise=pairs)
    items = items.with_probes(pairwise_length(items))
    probes = run_probes(items, ask_judge(LongerJudge(), items), DEFAULT_SCALE, DEFAULT_BARS)
    assert probes.pair_length.status is ProbeStatus.FOUND, probes.pair_length.headline()
    assert probes.position.status is ProbeStatus.CLEAN, probes.position.headline()
