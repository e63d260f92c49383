"""Template mutants call the judge: each mutant renders its own prompt and asks the
judge's backend through ``PromptCache``, keyed by the digest of the exact prompt
sent (two mutants that send the same text share one call; a rerun makes none),
and never beyond ``--max-calls``. ``estimate`` counts the calls a run would make
before any is made, so the cost is shown first and a run over budget refused.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from metaeval.audit.judge_mutants.outcome import JudgeMutant
from metaeval.audit.judge_mutants.template_ops import TRANSFORMS, Prompting
from metaeval.audit.judge_mutants.unit import Family, MutantDiff
from metaeval.judges.adapters import Backend, Completion, PromptedJudge
from metaeval.judges.base import CallInfo, JudgeIdentity, JudgeReply, Mode, Scale, unscored_reply
from metaeval.judges.cache import ReplyCache

OVER_BUDGET = "not asked: --max-calls reached"


def _read(completion: Completion, read: Callable[[str], JudgeReply]) -> JudgeReply:
    if completion.failure:
        return unscored_reply(completion.failure, completion.text, completion.call)
    reply = read(completion.text)
    return JudgeReply(reply.value, reply.raw, reply.reason, completion.call, reply.strength)


@dataclass(frozen=True, slots=True)
class MutantJudge:
    """``base`` (its backend already the prompt cache) with the prompt of ``mode``
    rendered by ``prompting`` instead of its own template; ``mode`` None is the judge
    itself."""

    base: PromptedJudge
    mode: Mode | None = None
    prompting: Prompting | None = None
    suffix: str = ""

    @property
    def identity(self) -> JudgeIdentity:
        own = self.base.identity
        return replace(own, name=own.name + self.suffix) if self.suffix else own

    @property
    def scale(self) -> Scale:
        return self.base.scale

    @property
    def modes(self) -> frozenset[Mode]:
        return self.base.modes

    @property
    def concurrency(self) -> int:
        return self.base.concurrency

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply:
        if self.mode is not Mode.POINTWISE or self.prompting is None:
            return self.base.score(prompt, response, reference, criterion=criterion,
                                   sample=sample)
        text = self.prompting.text({"prompt": prompt, "response": response,
                                    "reference": reference or "", "criterion": criterion})
        return _read(self.base.backend(text, sample),
                     lambda raw: self.base.reply.pointwise(raw, self.base.scale))

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply:
        if self.mode is not Mode.PAIRWISE or self.prompting is None:
            return self.base.compare(prompt, response_a, response_b, reference=reference,
                                     sample=sample)
        text = self.prompting.text({"prompt": prompt, "response_a": response_a,
                                    "response_b": response_b})
        return _read(self.base.backend(text, sample), self.base.reply.pairwise)


def template_mutants(judge: PromptedJudge, chosen: frozenset[str]
                     ) -> list[tuple[JudgeMutant, MutantJudge]]:
    """Every template mutant of ``judge``'s own templates (a mode left to metaeval's
    template has none), among the ``chosen`` operators."""
    found = []
    for mode, template in ((Mode.POINTWISE, judge.templates.pointwise),
                           (Mode.PAIRWISE, judge.templates.pairwise)):
        if template is None or mode not in judge.modes:
            continue
        for name, transform in TRANSFORMS.items():
            if name not in chosen:
                continue
            for n, made in enumerate(transform(template, mode)):
                after = made.prompting.template
                if made.prompting.truncate is not None:
                    after += f"\n(responses shown: first {made.prompting.truncate} characters)"
                if made.prompting.fixed_order:
                    after += "\n(pair shown in one fixed order)"
                mutant = JudgeMutant(f"{name}.{mode.value}.{n + 1}", name, Family.TEMPLATE,
                                     made.detail, MutantDiff(f"template ({mode.value})",
                                                             template, after, made.line))
                found.append((mutant, MutantJudge(judge, mode, made.prompting,
                                                  f"~{mutant.id}")))
    return found


@dataclass
class PromptCache:
    """A backend in front of ``backend``: a reply is kept by the digest of the judge's
    address and the exact prompt and sample sent (in memory, and in ``store`` when
    there is one); at most ``max_calls`` calls are made, the rest are answered
    unscored without a call. ``dry`` counts the prompts instead of asking."""

    backend: Backend
    judge: str
    store: ReplyCache | None = None
    max_calls: int = 0
    dry: bool = False
    made: int = 0
    prompts: dict[str, int] = field(default_factory=dict)
    """Dry: each distinct prompt's digest and its length in characters."""
    _memory: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pending: dict[str, threading.Lock] = field(default_factory=dict)

    def key(self, prompt: str, sample: int) -> str:
        text = json.dumps(["prompt-digest", self.judge, prompt, sample])
        return hashlib.sha256(text.encode()).hexdigest()

    def held(self, key: str) -> str | None:
        if key in self._memory:
            return self._memory[key]
        hit = self.store.get(key) if self.store is not None else None
        return None if hit is None else hit.raw

    def __call__(self, prompt: str, sample: int) -> Completion:
        key = self.key(prompt, sample)
        with self._lock:
            # One lock per prompt: two questions that render the same text at once
            # (two items alike, two mutants alike) make one call, as the estimate counts.
            own = self._pending.setdefault(key, threading.Lock())
        with own:
            return self._answer(key, prompt, sample)

    def _answer(self, key: str, prompt: str, sample: int) -> Completion:
        with self._lock:
            held = self.held(key)
            if held is not None:
                return Completion(held, CallInfo(cached=True, called=False))
            if self.dry:
                self.prompts[key] = len(prompt)
                return Completion("", CallInfo(called=False), "dry run: not asked")
            if self.made >= self.max_calls:
                return Completion("", CallInfo(called=False, failed=True), OVER_BUDGET)
            self.made += 1
        completion = self.backend(prompt, sample)
        if not completion.failure:
            with self._lock:
                self._memory[key] = completion.text
                if self.store is not None:
                    self.store.put(key, self.judge, JudgeReply(None, completion.text))
        return completion


def judge_address(judge: PromptedJudge) -> str:
    """What, besides the prompt, decides a reply: name, model, endpoint, temperature."""
    return json.dumps([judge.name, judge.model, judge.endpoint, judge.temperature])
