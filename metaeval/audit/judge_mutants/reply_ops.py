"""Reply-rule operators: faults in how a judge's reply text becomes a verdict.

Each operator wraps the judge's own ``ReplyRule`` and reads the same raw reply
another way: the first number anywhere, an unreadable reply taken as a pass, a
score off by one, the winner's A and B swapped in one order. Running one re-reads
replies already recorded (or already received): it never calls the judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from metaeval.audit.judge_mutants.unit import Example, Family, JudgeOperator
from metaeval.judges.base import Choice, JudgeReply, Mode, Scale, unscored_reply
from metaeval.judges.reply import Preset, ReplyRule
from metaeval.loaders.judge_items import Order

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)")
_SWAP = {Choice.A: Choice.B, Choice.B: Choice.A, Choice.TIE: Choice.TIE}


@dataclass(frozen=True, slots=True)
class ReplyMutant:
    """A reply rule with one fault: ``read`` replaces how a reply of ``mode`` is read
    (raw text, the order shown, the scale -> the reply); the other mode is read by
    ``rule`` as before."""

    detail: str
    mode: Mode
    rule: ReplyRule
    read: Callable[[str, Order, Scale], JudgeReply]

    def pointwise(self, raw: str, scale: Scale) -> JudgeReply:
        if self.mode is Mode.POINTWISE:
            return self.read(raw, Order.AB, scale)
        return self.rule.pointwise(raw, scale)

    def pairwise(self, raw: str, order: Order) -> JudgeReply:
        if self.mode is Mode.PAIRWISE:
            return self.read(raw, order, Scale())
        return self.rule.pairwise(raw)


def read_first_number(rule: ReplyRule) -> tuple[ReplyMutant, ...]:
    """Read the first number anywhere in the reply as the score: a lenient parser
    that takes "1." of a list or "iPhone 12" for the rating."""

    def read(raw: str, order: Order, scale: Scale) -> JudgeReply:
        found = _NUMBER.search(raw)
        if found is None:
            return unscored_reply("reply has no number", raw)
        number = float(found.group(0))
        if not scale.low <= number <= scale.high:
            return unscored_reply(f"score {number:g} outside {scale.low}..{scale.high}", raw)
        return JudgeReply(number, raw)

    return (ReplyMutant("the first number anywhere in the reply is the score", Mode.POINTWISE,
                        rule, read),)


def pass_unparsable(rule: ReplyRule) -> tuple[ReplyMutant, ...]:
    """An unreadable reply becomes a pass instead of unscored: a refusal, an error
    page or a cut-off reply counts for the response."""

    def read(raw: str, order: Order, scale: Scale) -> JudgeReply:
        reply = rule.pointwise(raw, scale)
        return JudgeReply(float(scale.pass_at), raw) if reply.unscored else reply

    return (ReplyMutant("an unreadable reply is a pass", Mode.POINTWISE, rule, read),)


def shift_score(rule: ReplyRule) -> tuple[ReplyMutant, ...]:
    """Read every score one step lower, or one step higher (kept on the scale): a
    scale read off by one (0-based against 1-based, a shifted table)."""

    def by(step: int) -> Callable[[str, Order, Scale], JudgeReply]:
        def read(raw: str, order: Order, scale: Scale) -> JudgeReply:
            reply = rule.pointwise(raw, scale)
            if not isinstance(reply.value, float):
                return reply
            moved = min(float(scale.high), max(float(scale.low), reply.value + step))
            return JudgeReply(moved, raw)
        return read

    return (ReplyMutant("every score read one step lower", Mode.POINTWISE, rule, by(-1)),
            ReplyMutant("every score read one step higher", Mode.POINTWISE, rule, by(1)))


def swap_winner(rule: ReplyRule) -> tuple[ReplyMutant, ...]:
    """Swap the winner map's A and B in one order only: the reply is read as if the
    pair were shown the other way round (an order flip that was never undone)."""

    def in_order(swapped: Order) -> Callable[[str, Order, Scale], JudgeReply]:
        def read(raw: str, order: Order, scale: Scale) -> JudgeReply:
            reply = rule.pairwise(raw)
            if order is not swapped or not isinstance(reply.value, Choice):
                return reply
            return JudgeReply(_SWAP[reply.value], raw, strength=reply.strength)
        return read

    return tuple(ReplyMutant(f"A and B swapped when the pair is shown {order.value}",
                             Mode.PAIRWISE, rule, in_order(order))
                 for order in (Order.BA, Order.AB))


Transform = Callable[[ReplyRule], tuple[ReplyMutant, ...]]
_SHOWN_RULE = ReplyRule(Preset.MT_BENCH)  # the examples read MT-Bench replies


def _text(reply: JudgeReply) -> str:
    if reply.value is None:
        return "unscored"
    if isinstance(reply.value, Choice):
        return reply.value.value
    if isinstance(reply.value, bool):
        return "pass" if reply.value else "fail"
    return f"{reply.value:g}"


def _show(transform: Transform) -> Callable[[str], tuple[str, str]]:
    """The example's reply read by the mt-bench rule and by its first mutant; a pairwise
    example is read as shown ``ba`` for the swap."""

    def show(given: str) -> tuple[str, str]:
        mutant, scale = transform(_SHOWN_RULE)[0], Scale(1, 5, 4)
        if mutant.mode is Mode.PAIRWISE:
            return (_text(_SHOWN_RULE.pairwise(given)), _text(mutant.pairwise(given, Order.BA)))
        return _text(_SHOWN_RULE.pointwise(given, scale)), _text(mutant.pointwise(given, scale))

    return show


def _unit(transform: Transform, examples: tuple[Example, ...]) -> JudgeOperator:
    doc = (transform.__doc__ or "").strip().split("\n\n")[0]
    return JudgeOperator(transform.__name__, Family.REPLY, " ".join(doc.split()), examples,
                         _show(transform))


UNITS = (
    _unit(read_first_number, (Example("Point 1 is weak. Rating: [[4]]", "4", "1"),
                              Example("Rating: [[4]]", "4", "4"))),
    _unit(pass_unparsable, (Example("I cannot grade this.", "unscored", "4"),)),
    _unit(shift_score, (Example("Rating: [[4]]", "4", "3"),)),
    _unit(swap_winner, (Example("[[A]]", "A", "B"),)),
)
"""The reply-rule operators, in registry order."""
TRANSFORMS: dict[str, Transform] = {
    t.__name__: t for t in (read_first_number, pass_unparsable, shift_score, swap_winner)}
