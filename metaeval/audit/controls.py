"""Every registered probe, on the audited judge's verdicts and on the planted controls.

A detector is proven by its mirror: each probe runs on ``BiasedJudge`` (it must be
FOUND) and on ``SteadyJudge`` (it must be clean) over the same probe items, in the
same invocation; a probe with a control of its own (``ProbeUnit.control``) runs it,
planted and not. ``Controls`` says whether every mirror behaved; when one did not, the
detector is broken and the audit is void (``audit.verdict``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TypeVar

from metaeval.audit.bars import Bars
from metaeval.audit.bias_probes import (
    InjectionResult,
    LengthResult,
    PositionResult,
    ProbeStatus,
)
from metaeval.audit.collect import VerdictTable, ask_judge
from metaeval.audit.pair_probes import PairFlipResult
from metaeval.audit.probes import PROBES, ProbeResult, ProbeRun, Required
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity, Scale
from metaeval.judges.fakes import BiasedJudge, SteadyJudge
from metaeval.loaders.judge_items import FILES, JudgeItems

__all__ = ["ControlCheck", "Controls", "Probes", "by_origin", "run_controls", "run_probes"]

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Probes:
    """Every registered probe's result (``metaeval.audit.probes.PROBES``), by name, in
    the registry's order. The five first probes are also attributes, typed, for the
    figures drawn of them."""

    results: Mapping[str, ProbeResult]

    def statuses(self) -> dict[str, ProbeStatus]:
        return {name: r.status for name, r in self.results.items()}

    def headlines(self) -> dict[str, str]:
        return {name: r.headline() for name, r in self.results.items()}

    def _typed(self, name: str, kind: type[R]) -> R:
        result = self.results[name]
        assert isinstance(result, kind)
        return result

    @property
    def position(self) -> PositionResult:
        return self._typed("position", PositionResult)

    @property
    def length(self) -> LengthResult:
        return self._typed("length", LengthResult)

    @property
    def injection(self) -> InjectionResult:
        return self._typed("injection", InjectionResult)

    @property
    def pair_length(self) -> PairFlipResult:
        return self._typed("pairwise length", PairFlipResult)

    @property
    def pair_injection(self) -> PairFlipResult:
        return self._typed("pairwise injection", PairFlipResult)


@dataclass(frozen=True, slots=True)
class ControlCheck:
    """One control judge on one probe: what it must show and what it showed."""

    judge: str
    probe: str
    expected: ProbeStatus
    got: ProbeStatus
    headline: str

    @property
    def ok(self) -> bool:
        return self.got is self.expected or self.got is ProbeStatus.NOT_RUN


@dataclass(frozen=True, slots=True)
class Controls:
    checks: tuple[ControlCheck, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def ran(self) -> bool:
        """Whether any control ran a probe. None did when no probe had items to run
        on: then no detector was used, so none is proven or broken, and the probes
        not run are reasons of their own (the audit is not void for it)."""
        return any(c.got is not ProbeStatus.NOT_RUN for c in self.checks)

    def said(self) -> str:
        """``ok``, ``FAILED`` or ``none ran``, as a report line says it."""
        if not self.ran:
            return "none ran (no probe had items to run on)"
        return "ok" if self.ok else "FAILED"

    def failures(self) -> list[str]:
        return [f"control failed: {c.judge} judge's {c.probe} probe came out "
                f"{c.got.value}, expected {c.expected.value} ({c.headline}); the detector "
                "is broken" for c in self.checks if not c.ok]


def run_probes(items: JudgeItems, table: VerdictTable, scale: Scale, bars: Bars,
               judge: JudgeIdentity | None = None) -> Probes:
    """Every registered probe on ``table`` (``judge``: the audited judge; None for a
    control)."""
    on = ProbeRun(items, table, scale, bars, judge)
    return Probes({name: unit.run(on) for name, unit in PROBES.items()})


def by_origin(items: JudgeItems) -> list[tuple[str, JudgeItems]]:
    """The items with the probes of each origin (files, generated) in turn."""
    origins = list(dict.fromkeys(p.origin for p in items.probes)) or [FILES]
    return [(origin, items.with_probes(p for p in items.probes if p.origin == origin))
            for origin in origins]


def run_controls(items: JudgeItems, bars: Bars, judge: JudgeIdentity | None = None) -> Controls:
    """Every probe on the planted controls, over the same probe items; the probes of
    each origin are checked on their own (a generated probe's check names its origin).
    A probe with a control of its own (``ProbeUnit.control``) runs it instead, planted
    and not, for ``judge``."""
    probe_items = JudgeItems(pairwise=items.pairwise, length=items.length,
                             injection=items.injection, pair_length=items.pair_length,
                             pair_injection=items.pair_injection)
    checks: list[ControlCheck] = []
    for control, expected in ((BiasedJudge(), ProbeStatus.FOUND),
                              (SteadyJudge(), ProbeStatus.CLEAN)):
        table = ask_judge(control, probe_items)
        if isinstance(control, BiasedJudge) and items.pairwise:
            # Its planted pairwise length bias (the longer of two very unequal responses
            # wins in both orders) hid its position bias on real pairs of unequal length
            # (AlpacaEval's), voiding audits: the position check asks it without it.
            shown = ask_judge(replace(control, pair_length=False),
                              JudgeItems(pairwise=items.pairwise))
            table = replace(table, decisions={**table.decisions, **shown.decisions})
        for n, (origin, subset) in enumerate(by_origin(probe_items)):
            probes = run_probes(subset, table, control.scale, bars)
            headlines = probes.headlines()
            for name, status in probes.statuses().items():
                unit = PROBES[name]
                if unit.control is not None or (not unit.on_probes and n):
                    continue  # it reads the labelled items: checked once, not per origin
                headline, checked = headlines[name], name
                if unit.on_probes and origin != FILES:
                    if status is ProbeStatus.NOT_RUN:
                        continue
                    checked = f"{name} ({origin})"
                elif unit.required is not Required.ALWAYS and status is ProbeStatus.NOT_RUN:
                    continue  # nothing to run it on: said once, by the report
                checks.append(ControlCheck(control.identity.name, checked, expected, status,
                                           headline))
    on = ProbeRun(probe_items, VerdictTable(), DEFAULT_SCALE, bars, judge)
    for name, unit in PROBES.items():
        for planted, expected, control_name in ((True, ProbeStatus.FOUND, "biased"),
                                                (False, ProbeStatus.CLEAN, "steady")):
            if unit.control is None:
                continue
            result = unit.control(on, planted)
            if result.status is ProbeStatus.NOT_RUN and unit.required is not Required.ALWAYS:
                continue
            checks.append(ControlCheck(control_name, name, expected, result.status,
                                       result.headline()))
    return Controls(tuple(checks))
