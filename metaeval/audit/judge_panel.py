"""A panel of judges read as one judge: its verdict on each question is the members'
majority (labels, pass/fail) or their mean (scores).

The panel's table is built from its members' tables, slot by slot, and is then
audited exactly as a member's is (``audit_judge``), so every figure of the panel
means what it means for a member. It must never invent a verdict: a slot some
member has no verdict for is not recorded for the panel, and a split vote is
unscored.

The rules, each member's verdict first aggregated over its own samples
(``collect.aggregate``):

- unscored when half or more of the members are unscored on the slot;
- scores (all members scored with a number): their mean;
- otherwise (pair labels, pass/fail, classes; a number beside pass/fail is read as
  pass/fail at the scale's pass mark): the label most members gave; when two labels
  tie for the most (``a``, ``b``, ``tie`` from three members; ``a``, ``b`` from two)
  the panel is unscored: it did not decide.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from metaeval.audit.collect import Calls, Decision, VerdictTable, failure_reasons
from metaeval.judges.base import Scale
from metaeval.loaders.judge_items import Slot

__all__ = ["panel_decision", "panel_table"]


def panel_decision(decisions: Sequence[Decision], scale: Scale) -> Decision:
    """The panel's decision from its members' ``decisions`` on one question (see the
    module's rules)."""
    scored = [d for d in decisions if d is not None]
    if not scored or (len(decisions) - len(scored)) * 2 >= len(decisions):
        return None
    numbers = [d for d in scored if isinstance(d, float)]
    if len(numbers) == len(scored):
        return float(statistics.fmean(numbers))
    if numbers and all(isinstance(d, float | bool) for d in scored):
        # A score beside a pass/fail: both read as pass/fail at the pass mark.
        scored = [d >= scale.pass_at if isinstance(d, float) else d for d in scored]
    counts = Counter(scored).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def panel_table(tables: Sequence[VerdictTable], scale: Scale) -> VerdictTable:
    """One table from the members' ``tables``: a slot every member holds gets the
    panel's decision (one sample); the calls are the members' together. Its cost is
    its members' (``cost.panel_cost``), so the table carries no usage."""
    slots: list[Slot] = [s for s in tables[0].decisions
                         if all(s in t.decisions for t in tables[1:])]
    decisions: dict[Slot, tuple[Decision, ...]] = {}
    for slot in slots:
        decisions[slot] = (panel_decision([t.decided(*slot) for t in tables], scale),)
    reasons = [reason for t in tables for reason, count in t.calls.failures
               for _ in range(count)]
    calls = Calls(sum(t.calls.made for t in tables), sum(t.calls.cached for t in tables),
                  sum(t.calls.failed for t in tables), failure_reasons(reasons))
    return VerdictTable(decisions, {slot: ("",) for slot in slots}, calls)
