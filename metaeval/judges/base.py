"""What a judge is and what it answers: the ``Judge`` protocol and ``JudgeReply``.

A judge answers one question about text: pointwise (score one response) or
pairwise (which of two is better). Its identity (name, model, prompt hash,
temperature, endpoint) is its version: change any of them and it is another judge, so
earlier calibrations and cached replies no longer apply. This module must never
turn a reply it could not read into a value: that is ``UNSCORED`` with a reason.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, TypeAlias, runtime_checkable


class Choice(Enum):
    """A pairwise answer, naming the response by the position it was *shown* in."""

    A = "A"
    """The response shown first is better."""
    B = "B"
    """The response shown second is better."""
    TIE = "tie"
    """Neither is better."""


class Mode(Enum):
    """Which question a judge is asked."""

    POINTWISE = "pointwise"
    """Score one response (a number in a range, or pass/fail)."""
    PAIRWISE = "pairwise"
    """Say which of two responses is better."""


Value: TypeAlias = float | bool | Choice
"""A judge's decision: a score, a pass (True) / fail (False), or a pairwise choice."""


@dataclass(frozen=True, slots=True)
class CallInfo:
    """How a reply was obtained; tokens are None when the backend did not say."""

    latency_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False
    """Served from the response cache: no call was made."""
    called: bool = True
    """A call was attempted (False for replies decided without asking the judge)."""
    failed: bool = False
    """The call itself failed (timeout, HTTP error, bad exit); the reply is unscored."""


@dataclass(frozen=True, slots=True)
class JudgeReply:
    """One judge answer: a value, or unscored (``value is None``) with the reason.

    ``raw`` is the text the judge returned, kept even when it could not be read.
    """

    value: Value | None
    raw: str = ""
    reason: str = ""
    call: CallInfo = CallInfo()
    strength: str | None = None
    """How strongly a pairwise preference was stated (``strong``: ``A>>B``, ``slight``:
    ``A>B``), when the reply rule reads one (the ``arena`` preset); else None."""

    @property
    def unscored(self) -> bool:
        return self.value is None


def unscored_reply(reason: str, raw: str = "", call: CallInfo | None = None) -> JudgeReply:
    return JudgeReply(None, raw, reason, call or CallInfo())


@dataclass(frozen=True, slots=True)
class JudgeIdentity:
    """Who a judge is; any change makes it a different judge (its ``version``)."""

    name: str
    model: str = ""
    prompt_hash: str = ""
    temperature: float = 0.0
    endpoint: str = ""
    """Where it is asked: an HTTP judge's normalised base URL, a command judge's
    command line, a callable's import path; "" for a judge with nowhere else."""
    scale: str = ""
    """A recorded judge's declared scale and pass mark (``0-1 pass>=1``) when it is
    not the default 1-5 pass>=4: what its recorded scores mean is part of what it
    decides. "" for a judge that carries its own scale in its config."""

    @property
    def version(self) -> str:
        parts: list[str | float] = [self.name, self.model, self.prompt_hash, self.temperature]
        # Only when set, so a judge with no endpoint keeps the version (and the
        # calibration entries) it had before endpoints were part of the identity.
        if self.endpoint:
            parts.append(self.endpoint)
        if self.scale:  # likewise: a recorded judge on the default scale keeps its version
            parts.append(f"scale {self.scale}")
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:12]

    def describe(self) -> str:
        model = f" model={self.model}" if self.model else ""
        endpoint = f" endpoint={self.endpoint}" if self.endpoint else ""
        prompt = f" prompt={self.prompt_hash}" if self.prompt_hash else ""
        scale = f" scale={self.scale.replace(' ', ',')}" if self.scale else ""
        return f"{self.name}{model}{endpoint}{prompt}{scale} temperature={self.temperature:g}"


@dataclass(frozen=True, slots=True)
class Scale:
    """The pointwise score range a judge answers in, and where a pass begins."""

    low: int = 1
    high: int = 5
    pass_at: int = 4

    def passes(self, value: Value) -> bool | None:
        """Pass/fail of a pointwise value; None for a pairwise choice."""
        if isinstance(value, Choice):
            return None
        if isinstance(value, bool):
            return value
        return value >= self.pass_at


DEFAULT_SCALE = Scale()


@runtime_checkable
class Judge(Protocol):
    """Answers questions about text. A judge may support pointwise, pairwise or both;
    one it does not support returns an unscored reply saying so, without a call.

    ``sample`` distinguishes repeated asks of the same question (self-consistency);
    a deterministic judge may ignore it, and it keys the response cache.
    """

    @property
    def identity(self) -> JudgeIdentity:
        """Name, model, prompt hash and temperature: the judge's version."""
        ...

    @property
    def scale(self) -> Scale:
        """The pointwise range it answers in, and where a pass begins."""
        ...

    @property
    def modes(self) -> frozenset[Mode]:
        """Which questions it answers: pointwise, pairwise, or both."""
        ...

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply: ...

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply: ...
