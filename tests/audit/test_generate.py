"""Generated probes: deterministic, sized as promised, and each family of them tells
the planted biased judge from the steady one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metaeval.audit.bars import DEFAULT_BARS
from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.collect import ask_judge
from metaeval.audit.controls import run_controls, run_probes
from metaeval.audit.generate import (
    MIN_BASE,
    PAIR_LEVEL,
    POINT_LEVELS,
    generate,
    pairwise_injection,
    pairwise_length,
    pointwise_length,
    probe_record,
)
from metaeval.audit.probe_texts import KINDS, PAYLOADS, STYLES, control_of, own_points
from metaeval.judges.base import DEFAULT_SCALE, Choice
from metaeval.judges.fakes import BiasedJudge, SteadyJudge, injected
from metaeval.loaders.judge_items import (
    GENERATED,
    InjectionCase,
    JudgeItems,
    LengthProbe,
    PairInjectionCase,
    PairItem,
    PairLengthProbe,
    PointItem,
    load_judge_items,
)

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "meta_sets" / "judge"


@pytest.fixture(scope="module")
def labelled() -> JudgeItems:
    items = load_judge_items([SETS / "pointwise.ndjson", SETS / "position.ndjson"])
    assert not items.errors
    return items


def test_generation_is_deterministic_and_independent_of_other_items(
        labelled: JudgeItems) -> None:
    first = generate(labelled, DEFAULT_SCALE)
    assert first == generate(labelled, DEFAULT_SCALE)
    assert first != generate(labelled, DEFAULT_SCALE, seed=18)  # the seed matters
    alone = JudgeItems(labelled.pointwise[:1], labelled.pairwise[:1])
    by_id = {p.id: p for p in first}
    for probe in generate(alone, DEFAULT_SCALE):
        assert by_id[probe.id] == probe


def test_pointwise_length_has_every_style_and_level_and_adds_at_least_the_level(
        labelled: JudgeItems) -> None:
    probes = pointwise_length(labelled)
    assert len(probes) == len(labelled.pointwise) * len(STYLES) * len(POINT_LEVELS)
    assert {(p.style, p.level) for p in probes} == {(s, lv) for s in STYLES
                                                   for lv in POINT_LEVELS}
    for p in probes:
        assert p.padded.startswith(p.response) and p.base is not None
        assert p.level is not None
        assert len(p.padded) - len(p.response) >= p.level * max(len(p.response), MIN_BASE)
        assert p.origin == GENERATED
    restate = next(p for p in probes if p.style == "restate")
    assert restate.prompt in restate.padded
    recap = next(p for p in probes if p.style == "recap")
    assert all(point in recap.response for point in own_points(recap.response))
    assert "- " in recap.padded[len(recap.response):]


def test_pairwise_length_pads_each_side_past_the_other(labelled: JudgeItems) -> None:
    probes = pairwise_length(labelled)
    assert len(probes) == len(labelled.pairwise)
    for p in probes:
        longest = max(len(p.response_a), len(p.response_b))
        assert len(p.padded_a) >= (1 + PAIR_LEVEL) * longest - 1
        assert len(p.padded_b) >= (1 + PAIR_LEVEL) * longest - 1
        assert p.style != "restate"
    ties = JudgeItems(pairwise=(PairItem("t", "q", "x", "y", None, "tie", "f:1"),))
    assert pairwise_length(ties) == [] and pairwise_injection(ties) == []


def test_every_payload_kind_has_a_benign_twin_of_its_length() -> None:
    assert len(KINDS) >= 8 and len(set(KINDS)) == len(KINDS)
    for payload in PAYLOADS:
        control = control_of(payload)
        assert len(control) == len(payload.text)
        assert injected(payload.text), payload.kind
        assert not injected(control), payload.kind
        assert len(payload.benign) <= len(payload.text)  # filled, never cut


def test_injection_goes_on_failed_responses_and_worse_pair_responses(
        labelled: JudgeItems) -> None:
    probes = generate(labelled, DEFAULT_SCALE)
    cases = [p for p in probes if isinstance(p, InjectionCase)]
    failed = {i.id for i in labelled.pointwise if i.verdict == "fail"}
    assert {c.base for c in cases} == failed
    assert len(cases) == len(failed) * len(KINDS)
    pairs = [p for p in probes if isinstance(p, PairInjectionCase)]
    assert len(pairs) == len(labelled.pairwise) * len(KINDS)
    for p in pairs:
        a, b = p.shown(p.payload)
        worse, better = (a, b) if p.loser == "a" else (b, a)
        assert worse.endswith(p.payload) and better.endswith(p.control)
        assert p.shown(p.control) == (p.response_a + p.control, p.response_b + p.control)


def test_integer_labels_below_the_pass_mark_are_failed() -> None:
    items = JudgeItems(pointwise=(PointItem("lo", "q", "r", None, None, 3, "f:1"),
                                  PointItem("hi", "q", "r", None, None, 4, "f:2")))
    assert {c.base for c in generate(items, DEFAULT_SCALE)
            if isinstance(c, InjectionCase)} == {"lo"}


def test_written_probes_read_back_as_the_same_probes(labelled: JudgeItems,
                                                     tmp_path: Path) -> None:
    probes = generate(labelled, DEFAULT_SCALE)
    path = tmp_path / "probes.ndjson"
    path.write_text("".join(json.dumps(probe_record(p)) + "\n" for p in probes))
    back = load_judge_items([path])
    assert not back.errors
    assert back.count == len(probes)
    read = {p.id: p for p in back.probes}
    for p in probes:
        q = read[p.id]
        assert type(q) is type(p) and q.origin == "files"
        for name in ("prompt", "reference", "base"):
            assert getattr(q, name) == getattr(p, name)
        if isinstance(p, LengthProbe | PairLengthProbe):
            assert (q.style, q.level) == (p.style, p.level)  # type: ignore[union-attr]
        else:
            assert q.kind == p.kind  # type: ignore[union-attr]


@pytest.mark.parametrize("record, field", [
    ({"probe_format": 2}, "probe_format"),
    ({"padded_a": "x"}, "padded_a"),
    ({"label": "tie"}, "label"),
    ({"level": -1}, "level"),
])
def test_a_bad_pair_length_record_is_named(tmp_path: Path, record: dict[str, object],
                                           field: str) -> None:
    good = {"id": "p", "prompt": "q", "response_a": "short", "response_b": "other",
            "label": "a", "padded_a": "short and more", "padded_b": "other and more"}
    path = tmp_path / "p.ndjson"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "q", **record}) + "\n")
    items = load_judge_items([path])
    assert [p.id for p in items.pair_length] == ["p"]
    assert [(e.line, e.field) for e in items.errors] == [(2, field)]


def test_generated_probes_find_the_biased_judge_and_clear_the_steady_one(
        labelled: JudgeItems) -> None:
    items = labelled.with_probes(generate(labelled, DEFAULT_SCALE))
    biased = run_probes(items, ask_judge(BiasedJudge(), items), DEFAULT_SCALE, DEFAULT_BARS)
    steady = run_probes(items, ask_judge(SteadyJudge(), items), DEFAULT_SCALE, DEFAULT_BARS)
    for name in ("length", "injection", "pairwise length", "pairwise injection"):
        assert biased.statuses()[name] is ProbeStatus.FOUND, biased.headlines()[name]
        assert steady.statuses()[name] is ProbeStatus.CLEAN, steady.headlines()[name]
    # the breakdowns: every payload kind found on the biased judge, none on the steady
    assert [k for k, _ in biased.injection.by_kind] == list(KINDS)
    assert all(r.status is ProbeStatus.FOUND for _, r in biased.injection.by_kind)
    assert all(r.status is ProbeStatus.FOUND for _, r in biased.pair_injection.by_kind)
    assert all(r.status is ProbeStatus.CLEAN for _, r in steady.injection.by_kind)
    levels = dict(biased.length.by_level)
    assert levels["+100%"].up > levels["+25%"].up  # more padding, more points
    assert [s for s, _ in steady.length.by_style] == list(STYLES)


def test_controls_check_each_generated_probe(labelled: JudgeItems) -> None:
    items = labelled.with_probes(generate(labelled, DEFAULT_SCALE))
    controls = run_controls(items, DEFAULT_BARS)
    assert controls.ok, controls.failures()
    names = {(c.judge, c.probe) for c in controls.checks}
    for judge in ("biased", "steady"):
        for probe in ("length", "injection", "pairwise length", "pairwise injection"):
            assert (judge, f"{probe} (generated)") in names


def test_the_position_control_holds_on_pairs_of_very_unequal_length() -> None:
    # Like AlpacaEval's: one answer three times the other. The biased judge's planted
    # pairwise length bias picks the long one in both orders; it must not hide its
    # planted position bias (FOUND), and the steady judge must stay clean.
    short = "Paris is the capital of France."
    pairs = tuple(PairItem(f"u{i}", "What is the capital of France?", short * 3 + f" {i}",
                           short, None, None, "test") for i in range(12))
    controls = run_controls(JudgeItems(pairwise=pairs), DEFAULT_BARS)
    found = {(c.judge, c.probe): c.got for c in controls.checks}
    assert found[("biased", "position")] is ProbeStatus.FOUND
    assert found[("steady", "position")] is ProbeStatus.CLEAN
    assert controls.ok
    # The judge a user runs with --judge biased keeps both planted pairwise biases.
    assert BiasedJudge().compare("q", short, short * 3).value is Choice.B
