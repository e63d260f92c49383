"""Probes generated from labelled items, so labelled items are all a team needs.

- Length, pointwise: every labelled response padded in each style of
  ``probe_texts.STYLES``, at each level of ``POINT_LEVELS`` (a share of the
  response's length, counted on at least ``MIN_BASE`` characters so a one-line
  answer still gets a sentence or more).
- Length, pairwise: every labelled pair (``a`` or ``b`` better) with the worse
  response padded until it is ``1 + PAIR_LEVEL`` times the longer of the two (the
  probe) and, as the control, the better one padded the same way.
- Injection: each payload kind appended to every response people failed, and to
  the worse response of every pair, with the kind's benign control.

Generation is deterministic: each probe's choices come from a generator seeded
with ``seed`` and the item's id, so a probe does not change when other items are
added or left out. Nothing here asks a judge; ``probe_records`` writes the probes
in the probe file format so a person can read what the judge will be asked.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from metaeval.audit.judge_agreement import human_outcome
from metaeval.audit.probe_texts import (
    PAIR_STYLES,
    PAYLOADS,
    RECAP_HEAD,
    STYLES,
    control_of,
    padding_sentences,
)
from metaeval.contract import JsonObject, Outcome
from metaeval.judges.base import Scale
from metaeval.loaders.judge_items import (
    GENERATED,
    PROBE_FORMAT,
    InjectionCase,
    JudgeItems,
    LengthProbe,
    PairInjectionCase,
    PairLengthProbe,
    Probe,
)

SEED = 17
"""The default seed: the same items always give the same probes."""
POINT_LEVELS = (0.25, 0.5, 1.0)
PAIR_LEVEL = 0.5
MIN_BASE = 200
SOURCE = "generated"


def seeded_rng(seed: int, *parts: str) -> random.Random:
    """A generator seeded by ``seed`` and ``parts`` (an item's id, a purpose): the same
    choices for the same item whatever else is generated."""
    return random.Random(":".join((str(seed), *parts)))


def padding(style: str, prompt: str, response: str, extra: int, rng: random.Random) -> str:
    """Text of at least ``extra`` characters in ``style``, starting with a separator,
    made of whole sentences (drawn in a seeded order, repeated when they run out)."""
    sentences = padding_sentences(style, prompt, response)
    if style != "recap":
        rng.shuffle(sentences)
    head = (rng.choice(RECAP_HEAD) + "\n") if style == "recap" else ""
    out = "\n\n" + head
    i = 0
    while len(out) < extra or i == 0:
        sep = "\n" if style == "recap" else " "
        out += (sep if i else "") + sentences[i % len(sentences)]
        i += 1
    return out


def pointwise_length(items: JudgeItems, seed: int = SEED,
                     styles: Sequence[str] = STYLES,
                     levels: Sequence[float] = POINT_LEVELS) -> list[LengthProbe]:
    probes = []
    for item in items.pointwise:
        for style in styles:
            for level in levels:
                extra = round(level * max(len(item.response), MIN_BASE))
                rng = seeded_rng(seed, "length", item.id, style, f"{level:g}")
                padded = item.response + padding(style, item.prompt, item.response, extra, rng)
                probes.append(LengthProbe(f"{item.id}~len-{style}-{level:g}", item.prompt,
                                          item.response, padded, item.reference, SOURCE,
                                          style, level, item.id, GENERATED))
    return probes


def pairwise_length(items: JudgeItems, seed: int = SEED, level: float = PAIR_LEVEL
                    ) -> list[PairLengthProbe]:
    probes = []
    for pair in items.pairwise:
        if pair.label not in ("a", "b"):
            continue  # a tie has no worse response to pad
        rng = seeded_rng(seed, "pair-length", pair.id)
        style = rng.choice(PAIR_STYLES)
        target = round((1 + level) * max(len(pair.response_a), len(pair.response_b), 1))
        padded = {side: text + padding(style, pair.prompt, text, target - len(text), rng)
                  for side, text in (("a", pair.response_a), ("b", pair.response_b))}
        probes.append(PairLengthProbe(f"{pair.id}~pairlen-{style}", pair.prompt,
                                      pair.response_a, pair.response_b, pair.reference,
                                      pair.label, padded["a"], padded["b"], SOURCE, style,
                                      level, pair.id, GENERATED))
    return probes


def injection(items: JudgeItems, labels: Scale) -> list[InjectionCase]:
    """Every payload kind on every response people failed (``labels``: their scale)."""
    return [InjectionCase(f"{item.id}~inj-{p.kind}", item.prompt, item.response, p.text,
                          control_of(p), item.reference, SOURCE, p.kind, item.id, GENERATED)
            for item in items.pointwise
            if item.consensus and human_outcome(item, labels) is Outcome.FAIL
            for p in PAYLOADS]


def pairwise_injection(items: JudgeItems) -> list[PairInjectionCase]:
    """Every payload kind on the worse response of every pair people ranked."""
    return [PairInjectionCase(f"{pair.id}~pairinj-{p.kind}", pair.prompt, pair.response_a,
                              pair.response_b, pair.reference, pair.label, p.text,
                              control_of(p), SOURCE, p.kind, pair.id, GENERATED)
            for pair in items.pairwise if pair.label in ("a", "b") for p in PAYLOADS]


def generate(items: JudgeItems, labels: Scale, seed: int = SEED) -> tuple[Probe, ...]:
    """Every generated probe of ``items``' labelled items, in a stable order."""
    return (*pointwise_length(items, seed), *injection(items, labels),
            *pairwise_length(items, seed), *pairwise_injection(items))


def probe_record(probe: Probe) -> JsonObject:
    """One probe in the probe file format (``probe_format`` 1)."""
    record: JsonObject = {"probe_format": PROBE_FORMAT, "id": probe.id, "prompt": probe.prompt}
    if probe.reference is not None:
        record["reference"] = probe.reference
    if isinstance(probe, LengthProbe):
        record.update(response=probe.response, padded=probe.padded, style=probe.style)
        if probe.level is not None:
            record["level"] = probe.level
    elif isinstance(probe, InjectionCase):
        record.update(response=probe.response, payload=probe.payload, control=probe.control,
                      kind=probe.kind, label="fail")
    elif isinstance(probe, PairLengthProbe):
        record.update(response_a=probe.response_a, response_b=probe.response_b,
                      label=probe.label, padded_a=probe.padded_a, padded_b=probe.padded_b,
                      style=probe.style)
        if probe.level is not None:
            record["level"] = probe.level
    else:
        record.update(response_a=probe.response_a, response_b=probe.response_b,
                      label=probe.label, payload=probe.payload, control=probe.control,
                      kind=probe.kind)
    if probe.base is not None:
        record["base"] = probe.base
    return record


def family(probe: Probe) -> str:
    """The probe's family: ``length``, ``injection``, ``pairwise length`` or
    ``pairwise injection``."""
    return {LengthProbe: "length", InjectionCase: "injection",
            PairLengthProbe: "pairwise length", PairInjectionCase: "pairwise injection"
            }[type(probe)]
