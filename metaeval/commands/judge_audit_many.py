"""``metaeval judge-audit`` over several judges at once: each judge audited as a
single audit would audit it, panels of them audited beside their members, and the
cost of each from its usage.

One plan (the items loaded and the labels joined once), then one audit per judge
(``judge_audit.run_measured`` with the judge's name), so a judge's figures here are
those of its own audit. A recorded log may hold several judges (a ``judge`` field
on each record): with no ``--judge``, every judge it names is audited. A panel
(``--panel a,b,c``) is audited on its members' verdicts combined by
``audit.judge_panel``. Nothing here prints.

The exit code: with ``--gate NAME``, that judge's (or panel's) verdict's code; the
others are reported, not gated. Without it, the worst verdict among all audited
(void 3, report only 1, may gate 0): a pipeline that runs several judges and names
none to gate by passes only when every one of them may gate. Bad input lines, as
for one judge, make it 2.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from metaeval.audit.collect import Progress
from metaeval.audit.cost import JudgeCost, Prices, judge_cost, panel_cost, read_prices
from metaeval.audit.held_out import record_read
from metaeval.audit.judge_decision import AuditSource, AuditVerdict, JudgeAudit, audit_judge
from metaeval.audit.judge_panel import panel_table
from metaeval.commands.judge_audit import Measured, run_measured
from metaeval.commands.judge_audit_plan import plan_unresolved, resolve_judge
from metaeval.commands.judge_audit_values import (
    JudgeAuditPlan,
    JudgeAuditRequest,
    verdict_code,
)
from metaeval.config import Config
from metaeval.errors import ExitCode, InputError, shown
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity
from metaeval.loaders.recorded_judges import judges_in
from metaeval.loaders.recorded_verdicts import item_kinds, load_recorded
from metaeval.untrusted_json import LoadError

__all__ = ["JudgeRow", "JudgesRequest", "JudgesResult", "audit_judges", "panel_members"]


@dataclass(frozen=True, slots=True)
class JudgesRequest:
    """Several judges in one ``judge-audit``: ``base`` holds every other flag (its
    ``spec`` is not read)."""

    base: JudgeAuditRequest
    judges: tuple[str, ...] = ()
    """``--judge`` names, in the order given; empty: every judge the recorded log names."""
    panels: tuple[str, ...] = ()
    """``--panel`` values, each ``a,b,c``."""
    gate: str | None = None
    """``--gate``: the judge or panel whose verdict is the exit code."""


@dataclass(frozen=True, slots=True)
class JudgeRow:
    """One judge (or panel) audited: its audit, as a single audit would give it, and
    its cost."""

    name: str
    audit: JudgeAudit
    cost: JudgeCost
    members: tuple[str, ...] = ()
    """A panel's members; () for a judge."""


SEVERITY = {AuditVerdict.MAY_GATE: 0, AuditVerdict.INCONCLUSIVE: 1,
            AuditVerdict.REPORT_ONLY: 2, AuditVerdict.VOID: 4}
"""How bad a verdict is for the worst-of exit code: a judge that clearly misses a bar
is worse than one its labels cannot decide yet; a verdict not named here (one added
later) ranks between report only and void."""


@dataclass(frozen=True, slots=True)
class JudgesResult:
    """Every judge and panel audited, in order: the judges, then the panels."""

    rows: tuple[JudgeRow, ...]
    gate: str | None = None
    errors: tuple[LoadError, ...] = ()
    """Bad input lines, each once (every judge's audit names them)."""

    @property
    def deciding(self) -> JudgeRow:
        """The row the exit code follows: ``--gate``'s, else the worst verdict's
        (the first of the worst)."""
        if self.gate is not None:
            return next(r for r in self.rows if r.name == self.gate)
        return max(self.rows, key=lambda r: SEVERITY.get(r.audit.verdict, 3))

    @property
    def code(self) -> ExitCode:
        if self.errors:
            return ExitCode.BAD_INPUT
        return verdict_code(self.deciding.audit)


def panel_members(text: str, where: str = "--panel") -> tuple[str, ...]:
    """``a,b,c`` as its members: two or more names, each once."""
    members = tuple(m.strip() for m in text.split(","))
    if len(members) < 2 or any(not m for m in members) or len(set(members)) != len(members):
        raise InputError(f"{where}: got {shown(text)}; expected two or more judge names, "
                         "each once, separated by commas (e.g. gpt-4o,gemini_pro,llama-31)")
    return members


def _logged_judges(plan: JudgeAuditPlan) -> tuple[str, ...]:
    """The judges a recorded log names (none when it names none)."""
    if not plan.recorded:
        return ()
    records, _ = load_recorded(plan.recorded, plan.scale or DEFAULT_SCALE,
                               item_kinds(plan.items), plan.classes)
    return judges_in(records)


def _names(request: JudgesRequest, plan: JudgeAuditPlan
           ) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The judges to audit (the named ones, then panel members not named) and the
    panels' members; every name once."""
    panels = tuple(panel_members(p) for p in request.panels)
    names = list(request.judges)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"--judge: got {shown(repeated[0])} twice; expected each judge once")
    logged = _logged_judges(plan)
    # Side by side, a name is the log's own: a one-judge log read under two names would
    # be one judge's verdicts shown as two judges.
    unknown = [n for members in ((names,), panels) for group in members for n in group
               if logged and n not in logged]
    if unknown:
        raise InputError(f"--judge: got {shown(unknown[0])}; the recorded log holds the "
                         f"verdicts of {len(logged)} judge(s): "
                         f"{', '.join(map(shown, logged))}; expected one of them")
    if plan.recorded and not logged and len(names) + len(panels) > 1:
        raise InputError("--judge: several judges with a recorded log that names none of "
                         "them; expected a log whose records name their judge ('judge', as "
                         "judge-import writes for a file of several), else each would be "
                         "audited on the same verdicts")
    if not names:
        names = list(logged)
        if not names and not panels:
            raise InputError("--judge: missing; expected the judge to audit (repeat it for "
                             "several), or a recorded log whose records name their judge "
                             "('judge')")
    for members in panels:
        names.extend(m for m in members if m not in names)
    return tuple(names), panels


def _panel(members: tuple[str, ...], measured: dict[str, Measured], prices: Prices
           ) -> JudgeRow:
    """The panel of ``members`` audited on their verdicts combined; its cost is its
    members' together."""
    parts = [measured[m] for m in members]
    scales = {p.audit.scale for p in parts}
    if len(scales) > 1:
        raise InputError(f"--panel: got {shown(','.join(members))}; its members answer on "
                         f"different scales ({', '.join(sorted(map(str, scales)))}); expected "
                         "members whose scores mean the same")
    first = parts[0]
    scale = first.audit.scale
    versions = "+".join(p.audit.judge.version for p in parts)
    identity = JudgeIdentity(f"panel({','.join(members)})", model="panel",
                             prompt_hash=hashlib.sha256(versions.encode()).hexdigest()[:12])
    live = any(p.audit.source is AuditSource.LIVE for p in parts)
    modes = frozenset.intersection(*(p.audit.modes for p in parts)) if live else None
    audit = audit_judge(identity, scale, first.items, panel_table([p.table for p in parts],
                                                                  scale),
                        source=AuditSource.LIVE if live else AuditSource.RECORDED,
                        modes=modes, settings=first.settings)
    audit = replace(audit, temperature_known=False, probe_plan=first.audit.probe_plan)
    return JudgeRow(identity.name, audit, panel_cost([_cost_of(p, prices) for p in parts]),
                    members)


def _cost_of(measured: Measured, prices: Prices) -> JudgeCost:
    return judge_cost(measured.table, measured.audit.judge, prices)


def audit_judges(request: JudgesRequest, config: Config, progress: Progress | None = None,
                 notify: Callable[[str], None] | None = None) -> JudgesResult:
    """Audit every judge and panel of ``request`` in the project of ``config``."""
    prices = read_prices(config.judge_prices.table, config.judge_prices.pyproject)
    plan = plan_unresolved(request.base, config)
    names, panels = _names(request, plan)
    rows: list[JudgeRow] = []
    measured: dict[str, Measured] = {}
    for name in names:
        measured[name] = run_measured(resolve_judge(replace(plan, spec=name)), progress,
                                      notify)
        rows.append(JudgeRow(name, measured[name].audit, _cost_of(measured[name], prices)))
    rows.extend(_panel(members, measured, prices) for members in panels)
    if plan.chosen is not None:  # each held-out read is checked against the ledger, and kept
        chosen, now = plan.chosen, datetime.now(UTC)
        rows = [replace(r, audit=replace(r.audit, measured=record_read(
            chosen, replace(r.audit, measured=r.audit.measured or chosen.measured), now)))
            for r in rows]
    gate = request.gate
    if gate is not None and gate not in {r.name for r in rows}:
        # a panel may be named as --panel wrote it
        gate = next((r.name for r in rows if r.members and ",".join(r.members) == gate), gate)
    if gate is not None and gate not in {r.name for r in rows}:
        raise InputError(f"--gate: got {shown(gate)}; expected one of the judges audited: "
                         f"{', '.join(shown(r.name) for r in rows)}")
    seen: dict[str, LoadError] = {}
    for row in rows:
        for error in row.audit.errors:
            seen.setdefault(str(error), error)
    return JudgesResult(tuple(rows), gate, tuple(seen.values()))
