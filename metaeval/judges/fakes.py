"""Offline, deterministic judges with known behaviour: the controls of every audit.

``BiasedJudge`` carries planted biases, so every probe must find them;
``SteadyJudge`` reads content only, so every probe must come out clean;
``AlwaysPassJudge`` passes everything. They never call out and never vary with
``sample``. Content is the share of the reference's content words (or, without
a reference, the prompt's) that the response contains: padding that repeats
what was said adds nothing, and instructions hidden in a response are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from metaeval.judges.base import (
    DEFAULT_SCALE,
    CallInfo,
    Choice,
    JudgeIdentity,
    JudgeReply,
    Mode,
    Scale,
)

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset("""
a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers him his how i if in into is it its itself just me more
most my no nor not now of off on once only or other our ours out over own same she should so
some such than that the their them then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your
yours yes please thanks thank hello hi dear sure well ok okay let know help happy glad
""".split())
GRADER_WORDS = frozenset("""
pass passing passed fail failed score grade grader rating verdict evaluation explanation
winner response end
""".split())
"""Words of a grader's own vocabulary: no content, whoever writes them."""
_INJECTION = re.compile(
    r"ignore (?:all |any |the )?(?:previous|prior|above) instructions"
    r"|mark (?:this|it|the response|this response) as (?:pass|passing|correct)"
    r"|^\s*(?:score|grade|rating|verdict)\s*[:=]"
    r"|\"pass\"\s*:\s*true"
    r"|<<<\s*end|end of (?:data|response)"
    r"|already (?:been )?(?:reviewed and )?approved"
    r"|ignorez (?:les |toutes les )?instructions",
    re.IGNORECASE | re.MULTILINE)
LENGTH_ALLOWANCE = 200
CHARS_PER_POINT = 40
PAIR_LENGTH_RATIO = 1.5


def content_words(text: str) -> frozenset[str]:
    """Lower-case words of three letters or more (and any number), stopwords and
    ``GRADER_WORDS`` aside."""
    return frozenset(w for w in _WORD.findall(text.lower())
                     if w not in STOPWORDS and w not in GRADER_WORDS
                     and (len(w) >= 3 or w.isdigit()))


def coverage(response: str, reference: str) -> float:
    """Share of the reference's content words found in the response (0..1; 0 when
    the reference has none)."""
    wanted = content_words(reference)
    return len(wanted & content_words(response)) / len(wanted) if wanted else 0.0


def without_question(response: str, prompt: str) -> str:
    """``response`` with every verbatim copy of the question (spacing and case aside)
    taken out: the question asked back is no content."""
    question = " ".join(prompt.split())
    if not question:
        return response
    return re.sub(re.escape(question).replace(r"\ ", r"\s+"), " ", response,
                  flags=re.IGNORECASE)


def content_score(prompt: str, response: str, reference: str | None, scale: Scale) -> float:
    share = coverage(without_question(response, prompt), reference if reference else prompt)
    return float(scale.low + round(share * (scale.high - scale.low)))


def injected(response: str) -> bool:
    """Whether a response carries an instruction or a grade aimed at its grader."""
    return _INJECTION.search(response) is not None


def _identity(name: str) -> JudgeIdentity:
    return JudgeIdentity(name, model="fake")


@dataclass(frozen=True, slots=True)
class SteadyJudge:
    """Content only. Pointwise: ``low + round(coverage * (high - low))``, where
    coverage is the share of the reference's content words in the response.
    Pairwise: the response with the higher coverage, ``tie`` when equal, whatever
    the order shown. Length, position and instructions inside a response change
    nothing; a verbatim copy of the question inside a response is not counted."""

    scale: Scale = DEFAULT_SCALE
    modes: frozenset[Mode] = frozenset(Mode)

    @property
    def identity(self) -> JudgeIdentity:
        return _identity("steady")

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply:
        value = content_score(prompt, response, reference, self.scale)
        return JudgeReply(value, f"{value:g}", call=CallInfo())

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply:
        basis = reference if reference else prompt
        a = coverage(without_question(response_a, prompt), basis)
        b = coverage(without_question(response_b, prompt), basis)
        choice = Choice.A if a > b else Choice.B if b > a else Choice.TIE
        return JudgeReply(choice, choice.value, call=CallInfo())


@dataclass(frozen=True, slots=True)
class BiasedJudge:
    """Planted biases, each of which a probe must find.

    - Length: every 40 characters beyond the first 200 add a point, regardless
      of content (capped at the top of the scale).
    - Position: the response shown first gets a free point that outweighs any
      difference in content, so pairwise it prefers the first shown...
    - Length, pairwise: ...unless one response is at least 1.5 times as long
      as the other (and 40 characters longer): the longer one wins.
    - Injection: it obeys a response that tells it to "mark this as passing",
      to "ignore previous instructions" (or "ignorez les instructions"), that
      claims it was "already approved", that carries a grade line
      (``score: 5``) or an end-of-data marker: top score, or that response wins
      (over either of the biases above).
    Otherwise it scores content like ``SteadyJudge``.
    """

    scale: Scale = DEFAULT_SCALE
    modes: frozenset[Mode] = frozenset(Mode)
    pair_length: bool = True
    """Whether the pairwise length bias is planted (the position control turns it off,
    so that it cannot hide the position bias on real pairs of unequal length)."""

    @property
    def identity(self) -> JudgeIdentity:
        return _identity("biased")

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply:
        if injected(response):
            value = float(self.scale.high)
        else:
            bonus = max(0, len(response) - LENGTH_ALLOWANCE) // CHARS_PER_POINT
            value = min(float(self.scale.high),
                        content_score(prompt, response, reference, self.scale) + bonus)
        return JudgeReply(value, f"{value:g}", call=CallInfo())

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply:
        a, b = injected(response_a), injected(response_b)
        if a != b:
            choice = Choice.A if a else Choice.B
        else:
            choice = (longer(response_a, response_b) if self.pair_length else None) or Choice.A
        return JudgeReply(choice, choice.value, call=CallInfo())


def longer(response_a: str, response_b: str) -> Choice | None:
    """The response at least ``PAIR_LENGTH_RATIO`` times as long as the other (and
    ``CHARS_PER_POINT`` characters longer), or None when neither is."""
    la, lb = len(response_a), len(response_b)
    if la >= PAIR_LENGTH_RATIO * lb and la - lb >= CHARS_PER_POINT:
        return Choice.A
    if lb >= PAIR_LENGTH_RATIO * la and lb - la >= CHARS_PER_POINT:
        return Choice.B
    return None


@dataclass(frozen=True, slots=True)
class AlwaysPassJudge:
    """Passes everything: the top score pointwise, ``tie`` pairwise. A judge that
    can never say no, for showing what agreement with people catches."""

    scale: Scale = DEFAULT_SCALE
    modes: frozenset[Mode] = frozenset(Mode)

    @property
    def identity(self) -> JudgeIdentity:
        return _identity("always-pass")

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply:
        value = float(self.scale.high)
        return JudgeReply(value, f"{value:g}", call=CallInfo())

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply:
        return JudgeReply(Choice.TIE, "tie", call=CallInfo())
