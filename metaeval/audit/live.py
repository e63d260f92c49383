"""A live judge asked: the one place a judge-audit puts questions to the judge it
audits (the planted controls are asked in ``controls.run_controls``).

Two steps, in the order a reader meets them: ``probe_items``, when the audit is
planned, makes the items the judge is to be asked (the probes generated for the
questions it answers, ``--probes``); ``ask_live``, when it runs, opens the reply
cache, keeps the probes within ``--probe-budget`` (a cached reply costs nothing),
writes them when ``--write-probes`` asks, says what they cost before the first call,
asks every question and closes the cache. What comes back is measured by
``judge_decision.audit_judge``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from metaeval.audit.collect import Progress, VerdictTable, ask_judge
from metaeval.audit.generate import SEED, family, generate, probe_record
from metaeval.audit.probe_budget import ProbePlan, cost_note, within_budget_of
from metaeval.errors import InputError
from metaeval.files import write_ndjson
from metaeval.judges.base import Judge, Mode, Scale
from metaeval.judges.cache import CachedJudge, ReplyCache
from metaeval.judges.fakes import AlwaysPassJudge, BiasedJudge, SteadyJudge
from metaeval.judges.scales import ProbeSource
from metaeval.judges.spec import concurrency_of
from metaeval.loaders.judge_items import GENERATED, JudgeItems

__all__ = ["OFFLINE", "Asked", "ProbeSettings", "ask_live", "probe_items"]

OFFLINE = (AlwaysPassJudge, BiasedJudge, SteadyJudge)
"""The built-in fakes: no call leaves the process, so no cost is announced for them."""


@dataclass(frozen=True, slots=True)
class ProbeSettings:
    """``--probes``, ``--write-probes``, ``--probe-budget`` (None: not given)."""

    source: ProbeSource | None = None
    source_from: str = "--probes"
    write: Path | None = None
    budget: int | None = None
    seed: int = SEED


@dataclass(frozen=True, slots=True)
class Asked:
    """What a live judge was asked and answered: the items as asked (the labelled ones
    and the probes kept), its verdicts, the plan of its probes, and whether probes were
    generated for this run (then a pairwise judge needs its generated probes to gate)."""

    items: JudgeItems
    table: VerdictTable
    plan: ProbePlan
    generated: bool


def probe_items(judge: Judge, people: Scale, items: JudgeItems, probes: ProbeSettings
                ) -> tuple[JudgeItems, ProbeSource]:
    """The items ``judge`` is to be asked, made once when the audit is planned: the
    labelled ones and the probes ``--probes`` names (the item files', generated from
    the labelled items, or both), and where the probes come from. ``--write-probes``
    with no probe to generate is refused here, before anything is asked."""
    source = probes.source or (ProbeSource.FILES if items.probes else ProbeSource.GENERATED)
    if probes.write is not None and source is ProbeSource.FILES:
        raise InputError("--write-probes: no probe was generated (--probes files); "
                         "use --probes generated or both")
    if source is ProbeSource.FILES:
        return items, source
    # Only the questions the judge answers: a pairwise-only judge is not asked to score,
    # nor a pointwise-only one to compare.
    made = tuple(p for p in generate(items, people, probes.seed)
                 if (Mode.PAIRWISE if family(p).startswith("pairwise") else Mode.POINTWISE)
                 in judge.modes)
    kept = () if source is ProbeSource.GENERATED else items.probes
    return items.labelled().with_probes((*kept, *made)), source


def ask_live(judge: Judge, items: JudgeItems, source: ProbeSource, probes: ProbeSettings,
             samples: int, cache: Path | None, progress: Progress | None = None,
             notify: Callable[[str], None] | None = None) -> Asked:
    """Ask ``judge`` every question of ``items`` (``probe_items``', the probes from
    ``source``), ``samples`` times each, through the reply cache at ``cache`` (None: no
    cache), the probes kept within ``probes.budget`` calls. ``notify`` is told what the
    probes will cost before the first call; ``progress``, how many replies have
    arrived."""
    store = ReplyCache(cache) if cache is not None else None
    try:
        asked: Judge = (CachedJudge(judge, store, concurrency_of(judge)) if store is not None
                        else judge)
        items, chosen = within_budget_of(asked, items, source, probes.budget, probes.seed,
                                         samples)
        if probes.write is not None:
            generated = [p for p in items.probes if p.origin == GENERATED]
            write_ndjson(probes.write, tuple(probe_record(p) for p in generated))
            chosen = replace(chosen, written=str(probes.write))
        if notify is not None and not isinstance(judge, OFFLINE):
            notify(cost_note(chosen))  # the fakes cost nothing and call nothing
        table = ask_judge(asked, items, samples, progress)
    finally:
        if store is not None:
            store.close()
    return Asked(items, table, chosen, source is not ProbeSource.FILES)
