"""Declared scales: ``LOW-HIGH`` text (``judge-audit --scale 1-10``, or ``scale`` in
``[tool.metaeval.judge_audit]``) and a pass mark, read into a ``Scale``.

A recorded judge's verdicts are checked against its scale as a live reply is, so
the scale must be declared before a log on another scale can be read. Every
problem is an InputError naming where the value came from; nothing is guessed.
"""

from __future__ import annotations

import re

from metaeval.config import JUDGE_AUDIT_KEYS, JudgeAuditSection
from metaeval.errors import InputError
from metaeval.judges.base import DEFAULT_SCALE, Scale
from metaeval.keys import cut

# ASCII digits only (as in the reply parser), and few enough to stay a small int.
_RANGE = re.compile(r"\s*(-?[0-9]{1,9})\s*-\s*(-?[0-9]{1,9})\s*")


def default_pass_at(low: int, high: int) -> int:
    """Where a pass begins unless declared: the top quarter (4 on 1-5, 8 on 1-10)."""
    return high - (high - low) // 4


def declared_scale(scale: object, pass_at: object, *, scale_where: str,
                   pass_where: str) -> Scale:
    """``scale`` (``"LOW-HIGH"``, or None for 1-5) and ``pass_at`` (an integer in
    LOW..HIGH, or None for the default) as a Scale; raises InputError."""
    low, high = DEFAULT_SCALE.low, DEFAULT_SCALE.high
    if scale is not None:
        match = _RANGE.fullmatch(scale) if isinstance(scale, str) else None
        if match is None or int(match[1]) >= int(match[2]):
            shown = repr(scale) if len(repr(scale)) <= 60 else repr(scale)[:57] + "..."
            raise InputError(f"{scale_where}: got {shown}; expected LOW-HIGH, two integers "
                             "with LOW < HIGH, e.g. '1-10'")
        low, high = int(match[1]), int(match[2])
    if pass_at is None:
        return Scale(low, high, default_pass_at(low, high))
    if isinstance(pass_at, bool) or not isinstance(pass_at, int) or not low <= pass_at <= high:
        raise InputError(f"{pass_where}: got {pass_at!r}; expected an integer in {low}..{high}")
    return Scale(low, high, pass_at)


def configured_scale(judge_audit: JudgeAuditSection) -> Scale | None:
    """``scale`` and ``pass_at`` of ``[tool.metaeval.judge_audit]``: the scale of a
    recorded judge's verdicts, or None when neither is set. Its own unknown-key
    check, so a typo here is never a silent 1-5."""
    where = f"{judge_audit.pyproject}: tool.metaeval.judge_audit"
    section = {} if judge_audit.table is None else judge_audit.table
    if not isinstance(section, dict):
        raise InputError(f"{where}: got {cut(repr(section), 80)}; expected a table")
    for key in section:
        if key not in JUDGE_AUDIT_KEYS:
            raise InputError(f"{where}.{key}: unknown key; expected one of "
                             f"{', '.join(JUDGE_AUDIT_KEYS)}")
    if not section:
        return None
    return declared_scale(section.get("scale"), section.get("pass_at"),
                          scale_where=f"{where}.scale", pass_where=f"{where}.pass_at")


def describe(scale: Scale) -> str:
    return f"{scale.low}-{scale.high}" + (
        "" if scale.pass_at == default_pass_at(scale.low, scale.high)
        else f" (pass at {scale.pass_at})")
