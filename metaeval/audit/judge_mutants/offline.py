"""Reply-rule and decision mutants run on replies already had: a recorded log's
``raw`` texts, or the replies a live judge just gave. No call is made.

``offline_mutants`` makes every such mutant of a judge; ``audit_mutant`` audits one
verdict table as the judge was audited (same items, bars, label scale and
controls) and ``decide`` says whether the labels caught it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from metaeval.audit.collect import Decision, VerdictTable, recorded_table
from metaeval.audit.controls import Controls
from metaeval.audit.judge_decision import AuditSettings, AuditSource, JudgeAudit, audit_judge
from metaeval.audit.judge_mutants.decision_ops import TRANSFORMS as DECISIONS
from metaeval.audit.judge_mutants.outcome import JudgeMutant
from metaeval.audit.judge_mutants.reply_ops import TRANSFORMS as REPLIES
from metaeval.audit.judge_mutants.reply_ops import ReplyMutant
from metaeval.audit.judge_mutants.unit import Family, MutantDiff
from metaeval.judges.base import Choice, JudgeIdentity, Mode, Scale
from metaeval.judges.reply import ReplyRule
from metaeval.judges.scales import describe
from metaeval.loaders.judge_items import JudgeItems, Order
from metaeval.loaders.recorded_verdicts import Recorded


@dataclass(frozen=True, slots=True)
class Subject:
    """The judge being mutated and how it was audited: its identity and scale, the
    items, the audit's settings (people's label scale pinned, so a mutant's pass mark
    never moves the labels), where its verdicts came from, the controls already run
    and the modes it was audited for."""

    identity: JudgeIdentity
    scale: Scale
    items: JudgeItems
    settings: AuditSettings
    source: AuditSource
    controls: Controls
    modes: frozenset[Mode]


@dataclass(frozen=True, slots=True)
class Made:
    """One mutant ready to audit: its table of verdicts and the scale it reads them on."""

    mutant: JudgeMutant
    table: VerdictTable
    scale: Scale


def audit_mutant(subject: Subject, mutant: JudgeMutant, table: VerdictTable, scale: Scale
                 ) -> JudgeAudit:
    """The mutant audited exactly as the judge was."""
    identity = replace(subject.identity, name=f"{subject.identity.name}~{mutant.id}")
    return audit_judge(identity, scale, subject.items, table, source=subject.source,
                       modes=subject.modes, controls=subject.controls,
                       settings=subject.settings)


def records_of(table: VerdictTable) -> tuple[Recorded, ...]:
    """A live audit's replies as recorded verdicts (each sample's decision and text),
    so its reply and decision mutants re-read them as a log's would be."""
    return tuple(Recorded(slot.item, slot.order, k, decision, raw, slot.variant, "live")
                 for slot, decisions in table.decisions.items()
                 for k, (decision, raw) in enumerate(zip(decisions, table.raw.get(slot, ()),
                                                         strict=False)))


def _label(choice: Choice, order: Order) -> str:
    if choice is Choice.TIE:
        return "tie"
    return order.first if choice is Choice.A else order.second


def reread(records: Sequence[Recorded], mutant: ReplyMutant, scale: Scale,
           kinds: Mapping[str, Mode]) -> VerdictTable:
    """The verdicts ``mutant`` reads in the records' ``raw`` texts."""
    out = []
    for record in records:
        kind = kinds.get(record.id)
        verdict: Decision = record.verdict
        if kind is Mode.PAIRWISE:
            reply = mutant.pairwise(record.raw, record.order)
            verdict = _label(reply.value, record.order) if isinstance(reply.value,
                                                                      Choice) else None
        elif kind is Mode.POINTWISE:
            value = mutant.pointwise(record.raw, scale).value
            verdict = None if isinstance(value, Choice) else value
        out.append(replace(record, verdict=verdict))
    return recorded_table(out)


def _numbered(name: str, count: int, n: int, mode: Mode | None = None) -> str:
    middle = f".{mode.value}" if mode is not None else ""
    return f"{name}{middle}.{n + 1}" if count > 1 or mode is not None else name


def offline_mutants(table: VerdictTable, records: Sequence[Recorded], rule: ReplyRule | None,
                    scale: Scale, kinds: Mapping[str, Mode], chosen: frozenset[str]
                    ) -> list[Made]:
    """Every reply-rule mutant (when there is a ``rule`` and the records keep their
    ``raw`` text) and every decision mutant of the judge whose verdicts are
    ``table``, among the ``chosen`` operators."""
    made: list[Made] = []
    modes = set(kinds.values())
    if rule is not None:
        for name, transform in REPLIES.items():
            if name not in chosen:
                continue
            mutants = [m for m in transform(rule) if m.mode in modes]
            for n, m in enumerate(mutants):
                mutant = JudgeMutant(_numbered(name, len(mutants), n), name, Family.REPLY,
                                     m.detail, MutantDiff("reply rule", rule.describe(),
                                                          f"{rule.describe()}; {m.detail}"))
                made.append(Made(mutant, reread(records, m, scale, kinds), scale))
    samples = max((len(s) for s in table.decisions.values()), default=1)
    for name, decision in DECISIONS.items():
        if name not in chosen:
            continue
        if name == "lower_pass_mark" and Mode.POINTWISE not in modes:
            continue  # a pass mark decides scores only
        decided = decision(scale, samples)
        for n, d in enumerate(decided):
            before = f"{describe(scale)}; samples {samples}, median or majority"
            mutant = JudgeMutant(_numbered(name, len(decided), n), name, Family.DECISION,
                                 d.detail, MutantDiff("decision", before, f"{before}; {d.detail}"))
            made.append(Made(mutant, d.table(table), d.scale))
    return made
