"""The probe budget: which probes a live audit asks within ``--probe-budget`` calls,
what they cost, and the ``ProbePlan`` an audit reports (which probes ran, where each
came from, what they cost).

One home for the budget: what each probe costs is read from the judge's reply cache
(``collect.probe_costs``), the sample kept is deterministic (seeded by
``generate.seeded_rng``). Nothing here asks a judge or writes a file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from metaeval.audit.collect import probe_costs
from metaeval.audit.generate import SEED, family, seeded_rng
from metaeval.judges.base import Judge
from metaeval.judges.scales import ProbeSource
from metaeval.loaders.judge_items import JudgeItems, Probe

__all__ = ["ProbePlan", "cost_note", "probe_plan", "within_budget", "within_budget_of"]


@dataclass(frozen=True, slots=True)
class ProbePlan:
    """Which probes the audit ran and where each came from, and what they cost."""

    source: ProbeSource
    counts: tuple[tuple[str, str, int], ...]
    """(origin, family, probes): e.g. ("generated", "pairwise length", 100)."""
    seed: int
    questions: int = 0
    """Questions the probes put to the audited judge (a live judge; 0 when recorded)."""
    cached: int = 0
    """Of those, how many the reply cache held: free."""
    budget: int | None = None
    """``--probe-budget``: the most calls the probes may make."""
    dropped: int = 0
    """Probes left out to keep within the budget."""
    written: str | None = None
    """Where ``--write-probes`` wrote the generated probes."""

    @property
    def calls(self) -> int:
        return self.questions - self.cached


def probe_plan(source: ProbeSource, items: JudgeItems, seed: int) -> ProbePlan:
    """The plan of the probes ``items`` hold: how many of each origin and family."""
    counts = Counter((p.origin, family(p)) for p in items.probes)
    return ProbePlan(source, tuple((o, f, n) for (o, f), n in counts.items()), seed)


def within_budget(probes: Sequence[Probe], calls: Mapping[str, int], budget: int,
                  seed: int = SEED) -> tuple[Probe, ...]:
    """The probes kept when at most ``budget`` calls may be made (``calls``: what each
    probe id costs; a cached reply costs nothing). Deterministic: each family's probes
    in a seeded order, the families taken in turn, a probe kept while its calls fit,
    so every family gets its share and a rerun keeps the same probes."""
    queues: dict[str, list[Probe]] = {}
    for probe in sorted(probes, key=lambda p: seeded_rng(seed, "budget", p.id).random()):
        queues.setdefault(family(probe), []).append(probe)
    kept: list[Probe] = []
    left = budget
    while any(queues.values()):
        for name in list(queues):
            if not queues[name]:
                continue
            probe = queues[name].pop(0)
            if calls.get(probe.id, 0) <= left:
                kept.append(probe)
                left -= calls.get(probe.id, 0)
    order = {p.id: n for n, p in enumerate(probes)}
    return tuple(sorted(kept, key=lambda p: order[p.id]))


def within_budget_of(judge: Judge, items: JudgeItems, source: ProbeSource,
                     budget: int | None, seed: int, samples: int
                     ) -> tuple[JudgeItems, ProbePlan]:
    """The probes of ``items`` kept within ``budget`` calls to ``judge`` (all without a
    budget), and their plan with what they cost."""
    costs = probe_costs(judge, items, samples)
    kept = items.probes
    if budget is not None:
        kept = within_budget(items.probes, {k: c.calls for k, c in costs.items()}, budget,
                             seed)
    chosen = items.with_probes(kept)
    plan = probe_plan(source, chosen, seed)
    return chosen, replace(plan, questions=sum(costs[p.id].questions for p in kept),
                           cached=sum(costs[p.id].cached for p in kept),
                           budget=budget, dropped=len(items.probes) - len(kept))


def cost_note(plan: ProbePlan) -> str:
    """What the probes will cost, said before a live judge is asked."""
    note = (f"probes: {plan.questions} question(s) to the judge, {plan.cached} cached, "
            f"{plan.calls} call(s) to make")
    if plan.budget is not None:
        note += (f" (--probe-budget {plan.budget}: {plan.dropped} probe(s) left out, "
                 f"sampled with seed {plan.seed})")
    return note
