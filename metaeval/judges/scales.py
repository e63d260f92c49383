"""Declared scales: ``LOW-HIGH`` text (``judge-audit --scale 1-10``, or ``scale`` in
``[tool.metaeval.judge_audit]``) and a pass mark, read into a ``Scale``.

A recorded judge's verdicts are checked against its scale as a live reply is, so
the scale must be declared before a log on another scale can be read. Every
problem is an InputError naming where the value came from; nothing is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from metaeval.config import JUDGE_AUDIT_KEYS, JudgeAuditSection
from metaeval.errors import InputError
from metaeval.judges.base import DEFAULT_SCALE, Scale
from metaeval.keys import cut, reject_unknown

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


BAR_KEYS = {"kappa_bar": (-1.0, 1.0), "tpr_bar": (0.0, 1.0), "tnr_bar": (0.0, 1.0),
            "unscored_bar": (0.0, 1.0), "alpha": (0.0, 1.0)}
"""The bars ``[tool.metaeval.judge_audit]`` may set, and the range of each."""


class ProbeSource(Enum):
    """Where an audit's length and injection probes come from (``--probes``)."""

    FILES = "files"
    """The probe records of the item files (hand-written, or written by --write-probes)."""
    GENERATED = "generated"
    """Made from the labelled items by ``metaeval.audit.generate``."""
    BOTH = "both"
    """Both, each origin's probes checked on the controls on their own."""


@dataclass(frozen=True, slots=True)
class JudgeAuditSettings:
    """What ``[tool.metaeval.judge_audit]`` sets; None is unset (the flag or the
    built-in default decides)."""

    scale: Scale | None = None
    """The recorded judge's scale (``scale``, ``pass_at``)."""
    label_scale: tuple[int, int] | None = None
    label_pass_at: int | None = None
    bars: Mapping[str, float] = field(default_factory=dict)
    """By key of ``BAR_KEYS``, only those set."""
    probes: ProbeSource | None = None
    """Which probes run."""
    annotators: str | None = None
    """Who the annotators are (one of ``ANNOTATOR_KINDS``): the alternative annotator
    test's default epsilon."""
    alt_epsilon: float | None = None
    require_alt_test: bool = False
    label_classes: tuple[str, ...] = ()
    """The declared classes of categorical labels."""


PROBE_SOURCES = tuple(source.value for source in ProbeSource)
ANNOTATOR_KINDS = ("experts", "skilled", "crowd")


def configured_audit(judge_audit: JudgeAuditSection) -> JudgeAuditSettings:
    """``[tool.metaeval.judge_audit]`` checked: an unknown key, a scale that is not
    LOW-HIGH, a pass mark outside its scale, a bar outside its range are each an
    InputError naming the key; a typo is never a silent default."""
    where = f"{judge_audit.pyproject}: tool.metaeval.judge_audit"
    section = {} if judge_audit.table is None else judge_audit.table
    if not isinstance(section, dict):
        raise InputError(f"{where}: got {cut(repr(section), 80)}; expected a table")
    reject_unknown(section, JUDGE_AUDIT_KEYS, where)
    scale = None
    if "scale" in section or "pass_at" in section:
        scale = declared_scale(section.get("scale"), section.get("pass_at"),
                               scale_where=f"{where}.scale", pass_where=f"{where}.pass_at")
    labels, label_pass_at = None, None
    if "label_scale" in section or "label_pass_at" in section:
        declared = declared_scale(section.get("label_scale"), section.get("label_pass_at"),
                                  scale_where=f"{where}.label_scale",
                                  pass_where=f"{where}.label_pass_at")
        if "label_scale" in section:
            labels = (declared.low, declared.high)
        if "label_pass_at" in section:
            label_pass_at = declared.pass_at
    bars: dict[str, float] = {}
    for key, (low, high) in BAR_KEYS.items():
        if key not in section:
            continue
        value = section[key]
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not low <= value <= high):
            raise InputError(f"{where}.{key}: got {cut(repr(value), 80)}; expected a number "
                             f"in [{low:g}, {high:g}]")
        bars[key] = float(value)
    probes = section.get("probes")
    if probes is not None and probes not in PROBE_SOURCES:
        raise InputError(f"{where}.probes: got {cut(repr(probes), 80)}; expected one of "
                         f"{', '.join(map(repr, PROBE_SOURCES))}")
    kind = section.get("annotators")
    if kind is not None and kind not in ANNOTATOR_KINDS:
        raise InputError(f"{where}.annotators: got {cut(repr(kind), 80)}; expected one of "
                         f"{', '.join(map(repr, ANNOTATOR_KINDS))}")
    epsilon = section.get("alt_epsilon")
    if epsilon is not None:
        epsilon = alt_epsilon(epsilon, f"{where}.alt_epsilon")
    required = section.get("require_alt_test", False)
    if not isinstance(required, bool):
        raise InputError(f"{where}.require_alt_test: got {cut(repr(required), 80)}; expected "
                         "true or false")
    classes = (declared_classes(section["label_classes"], f"{where}.label_classes")
               if "label_classes" in section else ())
    return JudgeAuditSettings(scale, labels, label_pass_at, bars,
                              None if probes is None else ProbeSource(probes),
                              kind if isinstance(kind, str) else None, epsilon, required,
                              classes)


def declared_classes(value: object, where: str) -> tuple[str, ...]:
    """Categorical label classes: a list of strings (config) or ``a,b,c`` (flag); at
    least two, each once, none of them ``pass``/``fail`` (a pass/fail label) or
    an integer (a score)."""
    names = value.split(",") if isinstance(value, str) else value
    expected = ("expected at least two distinct class names, none 'pass', 'fail' or an "
                "integer (e.g. hate,violence,none)")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InputError(f"{where}: got {cut(repr(value), 80)}; {expected}")
    found = tuple(n.strip() for n in names)
    if (len(found) < 2 or len(set(found)) != len(found) or any(
            not n or n in ("pass", "fail") or n.lstrip("-").isdigit() for n in found)):
        raise InputError(f"{where}: got {cut(repr(value), 80)}; {expected}")
    return found


def alt_epsilon(value: object, where: str) -> float:
    """The alternative annotator test's epsilon: a number in [0, 1)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
        raise InputError(f"{where}: got {cut(repr(value), 80)}; expected a number in [0, 1) "
                         "(the judge's allowed disadvantage; 0.2 experts, 0.15 skilled, "
                         "0.1 crowd)")
    return float(value)


def configured_scale(judge_audit: JudgeAuditSection) -> Scale | None:
    """``scale`` and ``pass_at`` of ``[tool.metaeval.judge_audit]``: the scale of a
    recorded judge's verdicts, or None when neither is set."""
    return configured_audit(judge_audit).scale


def describe(scale: Scale) -> str:
    return f"{scale.low}-{scale.high}" + (
        "" if scale.pass_at == default_pass_at(scale.low, scale.high)
        else f" (pass at {scale.pass_at})")
