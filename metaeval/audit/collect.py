"""Gather a judge's verdicts on judge items: by asking it, or from recorded logs.

Either way the result is one ``VerdictTable``: for each (item, variant, order),
the decision of every sample, pairwise decisions already mapped back from the
position shown to the item's own label (``a``/``b``/``tie``). Measuring reads
only this table, so a live audit and a recorded one are measured alike. This
module must never drop an unscored reply: it is a ``None`` in the table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import partial

# Re-exported: the table was their home before the measures read ``Decided``.
from metaeval.audit.decided import Decision as Decision
from metaeval.audit.decided import aggregate as aggregate
from metaeval.judges.base import CallInfo, Choice, Judge, JudgeReply, Mode, Scale, unscored_reply
from metaeval.judges.cache import CachedJudge
from metaeval.judges.reply import ReplyRule
from metaeval.judges.spec import concurrency_of
from metaeval.loaders.judge_items import (
    InjectionCase,
    JudgeItems,
    LengthProbe,
    Order,
    PairInjectionCase,
    PairItem,
    PairLengthProbe,
    PointItem,
    Slot,
    Variant,
)
from metaeval.loaders.recorded_forms import Usage
from metaeval.loaders.recorded_verdicts import Recorded


@dataclass(frozen=True, slots=True)
class Calls:
    """What an audit cost: calls made, replies served from the cache, calls failed."""

    made: int = 0
    cached: int = 0
    failed: int = 0
    failures: tuple[tuple[str, int], ...] = ()
    """Why calls failed: the distinct reasons (as the backend gave them, redacted
    there) with how many calls each, most frequent first, at most ``FAILURES``: what
    a run whose calls mostly failed names as its cause."""

    @property
    def asked(self) -> int:
        """Every question put to the judge: made (failed ones included) or cached."""
        return self.made + self.cached


FAILURES = 5
"""At most this many distinct failure reasons are kept; the count covers them all."""
REASON_CHARS = 300
"""A failure reason is cut to this many characters (a server's text can be long)."""


def failure_reasons(reasons: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """The distinct ``reasons`` with their counts, most frequent first (then by
    text, so a rerun gives the same order), at most ``FAILURES`` of them."""
    counts = Counter(r if len(r) <= REASON_CHARS else r[: REASON_CHARS - 3] + "..."
                     for r in reasons)
    return tuple(sorted(counts.items(), key=lambda rc: (-rc[1], rc[0]))[:FAILURES])


@dataclass(frozen=True, slots=True)
class VerdictTable:
    """Every sample's decision, by slot; ``raw`` keeps the judge's text."""

    decisions: dict[Slot, tuple[Decision, ...]] = field(default_factory=dict)
    raw: dict[Slot, tuple[str, ...]] = field(default_factory=dict)
    calls: Calls = Calls()
    strength: dict[Slot, tuple[str | None, ...]] = field(default_factory=dict)
    """Each sample's stated strength of a pairwise preference (``strong``/``slight``),
    None where none was stated; a slot no sample stated one for may be absent."""
    usage: dict[Slot, tuple[Usage | None, ...]] = field(default_factory=dict)
    """Each sample's tokens (and recorded price), None where the log or the backend
    did not say (a cached reply, a fake): what ``metaeval.audit.cost`` prices."""

    def samples(self, item: str, variant: Variant = Variant.ORIGINAL, order: Order = Order.AB
                ) -> tuple[Decision, ...]:
        return self.decisions.get(Slot(item, variant, order), ())

    def decided(self, item: str, variant: Variant = Variant.ORIGINAL,
                order: Order = Order.AB) -> Decision:
        return aggregate(self.samples(item, variant, order))

    def recorded(self, item: str, order: Order) -> bool:
        """Whether the table holds any sample for ``item`` shown in ``order``: a live
        judge is asked in both orders; a log may hold one, and the other is *not
        recorded*, never unscored."""
        return Slot(item, Variant.ORIGINAL, order) in self.decisions


def _pointwise(reply: JudgeReply) -> Decision:
    return None if isinstance(reply.value, Choice) else reply.value


def _pairwise(reply: JudgeReply, *, order: Order) -> Decision:
    """The shown position mapped back to the item label."""
    if not isinstance(reply.value, Choice):
        return None
    if reply.value is Choice.TIE:
        return "tie"
    return order.first if reply.value is Choice.A else order.second


Ask = tuple[Slot, int, Callable[[], JudgeReply], Callable[[JudgeReply], Decision]]


def _score(judge: Judge, prompt: str, response: str, reference: str | None,
           sample: int) -> JudgeReply:
    try:
        return judge.score(prompt, response, reference, sample=sample)
    except Exception as e:  # a user's judge broke on this question: that is its answer
        return unscored_reply(f"judge raised {e!r}", call=CallInfo(failed=True))


def _compare(judge: Judge, pair: PairItem, first: str, second: str, sample: int) -> JudgeReply:
    try:
        return judge.compare(pair.prompt, first, second, reference=pair.reference,
                             sample=sample)
    except Exception as e:  # as in _score
        return unscored_reply(f"judge raised {e!r}", call=CallInfo(failed=True))


def _asks(judge: Judge, items: JudgeItems, samples: int,
          scored: set[str] | None = None) -> list[Ask]:
    """Every question; ``scored``: the pointwise items whose verdicts are asked anyway
    (default: ``items.pointwise``), a probe made from one reuses its verdict."""
    asks: list[Ask] = []

    def score(slot: Slot, prompt: str, response: str, reference: str | None) -> None:
        for k in range(samples):
            asks.append((slot, k, partial(_score, judge, prompt, response, reference, k),
                         _pointwise))

    def compare(slot_of: Callable[[Order], Slot], pair: PairItem, a: str, b: str) -> None:
        for order, first, second in ((Order.AB, a, b), (Order.BA, b, a)):
            for k in range(samples):
                asks.append((slot_of(order), k,
                             partial(_compare, judge, pair, first, second, k),
                             partial(_pairwise, order=order)))

    scored = {p.id for p in items.pointwise} if scored is None else scored
    for p in items.pointwise:
        score(Slot(p.id), p.prompt, p.response, p.reference)
    for lp in items.length:
        if lp.base not in scored:  # else the labelled item's own verdict is the before
            score(Slot(lp.id), lp.prompt, lp.response, lp.reference)
        score(Slot(lp.id, Variant.PADDED), lp.prompt, lp.padded, lp.reference)
    for c in items.injection:
        if c.base not in scored:
            score(Slot(c.id), c.prompt, c.response, c.reference)
        score(Slot(c.id, Variant.INJECTED), c.prompt, c.response + c.payload, c.reference)
        score(Slot(c.id, Variant.CONTROL), c.prompt, c.response + c.control, c.reference)
    for pair in items.pairwise:
        compare(partial(Slot, pair.id, Variant.ORIGINAL), pair, pair.response_a,
                pair.response_b)
    for pl in items.pair_length:
        shown = as_pair(pl)
        compare(partial(Slot, pl.id, Variant.PADDED), shown, *pl.shown(pl.loser))
        compare(partial(Slot, pl.id, Variant.CONTROL), shown, *pl.shown(pl.label))
    for pc in items.pair_injection:
        shown = as_pair(pc)
        compare(partial(Slot, pc.id, Variant.INJECTED), shown, *pc.shown(pc.payload))
        compare(partial(Slot, pc.id, Variant.CONTROL), shown, *pc.shown(pc.control))
    return asks


def as_pair(probe: PairLengthProbe | PairInjectionCase) -> PairItem:
    """The labelled pair a pairwise probe asks about (its prompt and reference)."""
    return PairItem(probe.id, probe.prompt, probe.response_a, probe.response_b,
                    probe.reference, probe.label, probe.source)


def _cached(ask: Ask) -> bool:
    """Whether the ask's reply is in the judge's reply cache (so it costs no call)."""
    call = ask[2]
    if not isinstance(call, partial) or not isinstance(call.args[0], CachedJudge):
        return False
    judge: CachedJudge = call.args[0]
    if call.func is _score:
        _, prompt, response, reference, k = call.args
        return judge.holds_score(prompt, response, reference, sample=k)
    _, pair, first, second, k = call.args
    return judge.holds_compare(pair.prompt, first, second, reference=pair.reference, sample=k)


@dataclass(frozen=True, slots=True)
class Cost:
    """The questions something poses a judge, and how many its cache already holds."""

    questions: int = 0
    cached: int = 0

    @property
    def calls(self) -> int:
        """Calls it would make: the questions the cache does not hold."""
        return self.questions - self.cached


def probe_costs(judge: Judge, items: JudgeItems, samples: int = 1) -> dict[str, Cost]:
    """What each probe of ``items`` costs ``judge``, by probe id: its own questions (a
    probe made from a labelled item shares that item's verdict), and how many the
    cache holds."""
    scored = {p.id for p in items.pointwise}
    costs = {}
    for probe in items.probes:
        asks = _asks(judge, JudgeItems().with_probes([probe]), samples, scored)
        costs[probe.id] = Cost(len(asks), sum(_cached(a) for a in asks))
    return costs


Progress = Callable[[int, int], None]
"""Told (done, total) as replies arrive; for a progress bar."""


def ask_judge(judge: Judge, items: JudgeItems, samples: int = 1,
              progress: Progress | None = None) -> VerdictTable:
    """Ask ``judge`` every question the items pose, ``samples`` times each, at most
    the judge's concurrency at once; count calls made, cached and failed."""
    asks = _asks(judge, items, samples)
    replies = []
    # One call at a time needs no pool: a thread hand-off per question was most of
    # a recorded audit's time at 100,000 pairs (the planted controls ask fakes).
    workers = concurrency_of(judge)
    with ThreadPoolExecutor(max_workers=workers) if workers > 1 else nullcontext() as pool:
        answers = (pool.map(lambda ask: ask[2](), asks) if pool is not None
                   else (ask[2]() for ask in asks))
        for reply in answers:
            replies.append(reply)
            if progress is not None:
                progress(len(replies), len(asks))
    decisions: dict[Slot, list[Decision]] = {}
    raw: dict[Slot, list[str]] = {}
    strength: dict[Slot, list[str | None]] = {}
    usage: dict[Slot, list[Usage | None]] = {}
    made = cached = failed = 0
    why: list[str] = []
    for (slot, _, _, read), reply in zip(asks, replies, strict=True):
        decisions.setdefault(slot, []).append(read(reply))
        raw.setdefault(slot, []).append(reply.raw)
        strength.setdefault(slot, []).append(reply.strength)
        usage.setdefault(slot, []).append(_usage(reply))
        cached += reply.call.cached
        made += reply.call.called and not reply.call.cached
        failed += reply.call.failed
        if reply.call.failed:
            why.append(reply.reason or "no reason given")
    return VerdictTable({k: tuple(v) for k, v in decisions.items()},
                        {k: tuple(v) for k, v in raw.items()},
                        Calls(made, cached, failed, failure_reasons(why)),
                        {k: tuple(v) for k, v in strength.items()},
                        {k: tuple(v) for k, v in usage.items()})


def _usage(reply: JudgeReply) -> Usage | None:
    """The tokens a call the backend counted cost; None for a cached reply (its cost
    was paid once, by the run that stored it) or a backend that did not say."""
    call = reply.call
    if call.cached or call.prompt_tokens is None or call.completion_tokens is None:
        return None
    return Usage(call.prompt_tokens, call.completion_tokens)


def reread(records: Sequence[Recorded], rule: ReplyRule, scale: Scale,
           kinds: Mapping[str, Mode]) -> tuple[Recorded, ...]:
    """``records`` with each verdict read again from its ``raw`` text by ``rule``
    (``--reply``), as a live reply would be read: a pairwise reply names the response
    shown first or second, mapped through the record's ``order``; one the rule cannot
    read is unscored. A record of an item not loaded is left as it is."""
    out = []
    for record in records:
        kind = kinds.get(record.id)
        if kind is Mode.PAIRWISE:
            reply = rule.pairwise(record.raw)
            out.append(replace(record, verdict=_pairwise(reply, order=record.order),
                               strength=reply.strength if reply.value in (Choice.A, Choice.B)
                               else None))
        elif kind is Mode.POINTWISE:
            value = rule.pointwise(record.raw, scale).value
            out.append(replace(record, verdict=None if isinstance(value, Choice) else value,
                               strength=None))
        else:
            out.append(record)
    return tuple(out)


def recorded_table(records: Sequence[Recorded]) -> VerdictTable:
    """The table from recorded verdicts, samples in index order; no calls."""
    ordered = sorted(records, key=lambda r: (r.id, r.variant.value, r.order.value, r.sample))
    decisions: dict[Slot, list[Decision]] = {}
    raw: dict[Slot, list[str]] = {}
    strength: dict[Slot, list[str | None]] = {}
    usage: dict[Slot, list[Usage | None]] = {}
    for r in ordered:
        decisions.setdefault(r.slot, []).append(r.verdict)
        raw.setdefault(r.slot, []).append(r.raw)
        strength.setdefault(r.slot, []).append(r.strength)
        usage.setdefault(r.slot, []).append(r.usage)
    return VerdictTable({k: tuple(v) for k, v in decisions.items()},
                        {k: tuple(v) for k, v in raw.items()},
                        strength={k: tuple(v) for k, v in strength.items()},
                        usage={k: tuple(v) for k, v in usage.items()})


def item_ids(items: JudgeItems) -> set[str]:
    groups: tuple[Sequence[PointItem | PairItem | LengthProbe | InjectionCase
                           | PairLengthProbe | PairInjectionCase], ...] = (
        items.pointwise, items.pairwise, items.length, items.injection, items.pair_length,
        items.pair_injection)
    return {i.id for group in groups for i in group}
