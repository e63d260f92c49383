"""What a probe is: one registered unit that measures one bias on a judge's verdicts
and says what it found.

A ``ProbeUnit`` names the probe, the judge use it guards (``mode``), how it runs
on a verdict table, whether the audit must run it to gate, and its report rows
(the JSON document and the table lines); ``metaeval.audit.probes.PROBES`` holds
them in report order, as ``OPERATORS`` holds the mutation operators. The audit
(``controls``, ``verdict``) and every renderer iterate the registry: a probe is added by
one module here, its docs and its tests. Nothing here asks a judge or writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from metaeval.audit.bars import Bars
from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.collect import VerdictTable
from metaeval.audit.strength import Strengths
from metaeval.contract import JsonObject
from metaeval.judges.base import JudgeIdentity, Mode, Scale
from metaeval.loaders.judge_items import JudgeItems

__all__ = ["NOT_RUN", "ProbeResult", "ProbeRun", "ProbeUnit", "ProbeView", "Required"]

NOT_RUN = "not run (no probe items with verdicts)"
"""A probe's table line when it had nothing to test."""


class ProbeResult(Protocol):
    """What every probe's result says: FOUND, clean or not run, and in one line why."""

    @property
    def status(self) -> ProbeStatus: ...

    def headline(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ProbeRun:
    """What a probe runs on: the measured items, the verdicts, the judge's scale and
    identity, the bars (alpha, the chance flip rate)."""

    items: JudgeItems
    table: VerdictTable
    scale: Scale
    bars: Bars
    judge: JudgeIdentity | None = None
    """The audited judge; None for the planted controls."""


@dataclass(frozen=True, slots=True)
class ProbeView:
    """What a probe's report rows need from the audit besides its own result."""

    strength: Strengths | None = None
    """How strongly pairwise preferences were stated, when a log or reply says."""
    plan_source: str | None = None
    """Where the probes came from (``files``, ``generated``, ``both``); None: no plan."""
    pairwise_measured: bool = False
    """Whether agreement on labelled pairs was measured."""
    live: bool = True
    """The judge was asked (not read from a log)."""


class Required(Enum):
    """When a judge audited for the probe's use must have it run to gate."""

    ALWAYS = "always"
    """Not run is a reason the judge may not gate."""
    GENERATED = "generated"
    """Only when probes were generated for the run (a log's items seldom hold them)."""
    NEVER = "never"
    """Never: it runs when the items allow (a FOUND is still a reason); not run, it is
    left out of the controls and the summary."""


@dataclass(frozen=True, slots=True)
class ProbeUnit:
    """One probe, registered once."""

    name: str
    """How reasons, controls and the summary name it: ``pairwise length``."""
    key: str
    """Its key in the JSON document: ``pairwise_length``."""
    mode: Mode
    """The judge use it guards: a judge audited for this use needs it run to gate."""
    run: Callable[[ProbeRun], ProbeResult]
    """The probe on a verdict table; NOT_RUN when it has nothing to test."""
    document: Callable[[ProbeResult, ProbeView], JsonObject]
    lines: Callable[[ProbeResult, ProbeView], list[str]]
    """Its lines in the table report, unescaped (the renderer makes each one line)."""
    required: Required = Required.ALWAYS
    """When not running it keeps a judge from gating."""
    on_probes: bool = True
    """Whether it reads probe records (checked on the controls per probe origin);
    False for a probe on the labelled items themselves (position)."""
    why_not_run: Callable[[ProbeResult], str] | None = None
    """Its own reason when NOT_RUN; None: no probe items with verdicts."""
    control: Callable[[ProbeRun, bool], ProbeResult] | None = None
    """Its own mirrored control, when the planted fakes cannot carry its bias: the
    probe on ``ProbeRun``'s items with the bias planted (True: must be FOUND) or not
    (False: must be clean). None: it runs on the biased and steady fakes' verdicts."""
