"""Fuzz the strict judge reply parser: whatever a judge says, the parser returns a
reply (never raises); a value it returns is on the scale (a finite number in
LOW..HIGH, or pass/fail), or a pair choice; a well-formed reply reads as the
value written; a reply broken in one field is unscored or still means that
value, never another."""

from __future__ import annotations

import json
import math

from hypothesis import example, given
from hypothesis import strategies as st

from metaeval.judges.base import Choice, JudgeReply, Scale
from metaeval.judges.parse import parse_pairwise, parse_pointwise
from tests.fuzz.strategies import Break, Raw, apply, breaks, dump, texts

ONE_TO_FIVE = Scale(1, 5, 4)


@st.composite
def scales(draw: st.DrawFn) -> Scale:
    low = draw(st.integers(-10, 10))
    high = draw(st.integers(low + 1, low + 20))
    return Scale(low, high, draw(st.integers(low, high)))


def assert_on_scale(reply: JudgeReply, scale: Scale) -> None:
    assert isinstance(reply, JudgeReply)
    if reply.value is None:
        assert reply.reason
        reply.reason.encode("utf-8", "surrogatepass")
        return
    assert isinstance(reply.value, bool | float)
    if isinstance(reply.value, float):
        assert math.isfinite(reply.value) and scale.low <= reply.value <= scale.high


@st.composite
def scored(draw: st.DrawFn) -> tuple[Scale, float]:
    scale = draw(scales())
    if draw(st.booleans()):
        return scale, float(draw(st.integers(scale.low, scale.high)))
    return scale, draw(st.floats(scale.low, scale.high).map(lambda f: round(f, 3)))


def _number_text(number: float) -> str:
    return str(int(number)) if number.is_integer() else repr(number)


@given(scored(), st.sampled_from(["", " ", "\n", "\t "]), st.booleans())
def test_a_bare_number_on_the_scale_reads_as_that_number(case: tuple[Scale, float],
                                                         space: str, as_json: bool) -> None:
    scale, number = case
    text = _number_text(number)
    raw = (f'{{"explanation": "because", "score": {text}}}' if as_json else text)
    reply = parse_pointwise(space + raw + space, scale)
    assert reply.value == number and isinstance(reply.value, float)


def _reply(explanation: str, decision: str, value: object) -> dict[str, object]:
    return {"explanation": explanation, decision: value}


def _schema(record: dict[str, object], path: tuple[str | int, ...]) -> dict[str, bool] | None:
    return {k: True for k in record} if path == () else None


@st.composite
def broken_pointwise(draw: st.DrawFn) -> tuple[Scale, dict[str, object], Break]:
    scale = draw(scales())
    decision = draw(st.sampled_from(["score", "pass"]))
    value = (draw(st.integers(scale.low, scale.high)) if decision == "score"
             else draw(st.booleans()))
    record = _reply(draw(texts), decision, value)
    return scale, record, draw(breaks(record, _schema))


@given(broken_pointwise())
@example((ONE_TO_FIVE, _reply("x", "score", 3), Break("replace", ("score",), 99)))
@example((Scale(0, 1, 0), _reply("", "score", 0), Break("replace", ("score",), Raw("0e0"))))
@example((ONE_TO_FIVE, _reply("x", "score", 3), Break("replace", ("score",), Raw("1e309"))))
@example((ONE_TO_FIVE, _reply("x", "score", 3), Break("replace", ("score",), 10**400)))
@example((ONE_TO_FIVE, _reply("x", "score", 3), Break("replace", ("score",), -(10**400))))
@example((ONE_TO_FIVE, _reply("x", "score", 3), Break("replace", ("score",), Raw("NaN"))))
@example((ONE_TO_FIVE, _reply("x", "score", 3), Break("replace", ("score",), "\u0664")))
@example((ONE_TO_FIVE, _reply("x", "score", 3), Break("replace", ("explanation",), "\ud800")))
@example((ONE_TO_FIVE, _reply("x", "score", 3),
          Break("replace", ("explanation",), Raw("[" * 1000 + "]" * 1000))))
def test_a_pointwise_reply_broken_in_one_field_is_unscored_or_the_same_value(
        case: tuple[Scale, dict[str, object], Break]) -> None:
    scale, record, brk = case
    for ascii_only in (True, False):
        reply = parse_pointwise(dump(apply(record, brk), ascii_only=ascii_only), scale)
        assert_on_scale(reply, scale)
        if reply.value is None:
            continue
        # Still read: the decision is the value the broken reply holds.
        decision = "score" if "score" in record else "pass"
        written = brk.new if brk.path == (decision,) and brk.kind == "replace" else (
            record[decision])
        if isinstance(written, Raw):
            # Raw JSON text that is still a number (``0e0``, ``1E0``) is read as one.
            written = json.loads(written.text)
        assert isinstance(written, int | float) and brk.kind in ("replace", "unknown")
        assert reply.value == (written if isinstance(written, bool) else float(written))


@given(scales(), st.text() | texts | st.sampled_from([
    "I would rate this 3 out of 10", "Score: 4", "\u0664", "\uff14", "3\u0664", "1e309",
    "1" * 400, "-0", "+5", ".5", "5.", "nan", "inf", "[" * 1000, "{" * 5000, "\ud800",
    '{"explanation": "x", "score": 3, "score": 4}']))
def test_any_pointwise_text_is_a_reply_on_the_scale_or_unscored(scale: Scale, raw: str) -> None:
    reply = parse_pointwise(raw, scale)
    assert_on_scale(reply, scale)
    assert reply.raw == raw
    if reply.value is not None and not raw.strip().startswith("{"):
        # A bare number: ASCII digits only, nothing around them but white space.
        assert all(c in "+-.0123456789" for c in raw.strip())


PAIR = {"a": Choice.A, "b": Choice.B, "tie": Choice.TIE}


@given(st.sampled_from(["A", "a", "B", "b", "tie", "TIE", "Tie"]), st.booleans(),
       st.sampled_from(["", " ", "\n"]))
def test_a_pairwise_choice_reads_as_that_choice(choice: str, as_json: bool, space: str) -> None:
    raw = f'{{"explanation": "e", "winner": "{choice}"}}' if as_json else choice
    assert parse_pairwise(space + raw + space).value is PAIR[choice.lower()]


@given(st.text() | texts | st.sampled_from(["\uff21", "A.", "A or B", "tie!", "\ud800",
                                             '{"winner": "A", "explanation": "x"}']))
def test_any_pairwise_text_is_a_choice_or_unscored(raw: str) -> None:
    reply = parse_pairwise(raw)
    assert isinstance(reply, JudgeReply)
    if reply.value is None:
        assert reply.reason
    else:
        assert isinstance(reply.value, Choice)
        stripped = raw.strip()
        assert stripped.lower() in PAIR or stripped.startswith("{")
