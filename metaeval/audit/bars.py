"""What a judge must meet to gate a release, and the probes' significance level.

Apart from the audit so that the command line can show the defaults in its help
without loading the measuring code (scikit-learn takes a second).
"""

from __future__ import annotations

from dataclasses import dataclass

from metaeval.judges.base import Scale

ALPHA = 0.05
"""The probes' significance level."""
CHANCE_FLIP = 0.1
"""The share of pairs a judge with no position bias may still judge differently
in the two orders (noise); flips beyond it are order-driven."""


@dataclass(frozen=True, slots=True)
class Bars:
    """What a judge must meet to gate: kappa, TPR and TNR at least these, and at
    most ``unscored`` of its verdicts on labelled items unscored."""

    kappa: float = 0.6
    tpr: float = 0.8
    tnr: float = 0.8
    unscored: float = 0.1
    alpha: float = ALPHA
    chance_flip: float = CHANCE_FLIP


DEFAULT_BARS = Bars()


ALT_EPSILONS = {"experts": 0.2, "skilled": 0.15, "crowd": 0.1}
"""The alternative annotator test's epsilon by who the annotators are, as Calderon,
Reichart and Dror (2025) recommend (``annotators`` in ``[tool.metaeval.judge_audit]``)."""
DEFAULT_ANNOTATORS = "crowd"
"""Unless declared: the smallest epsilon, the strictest test. A panel nobody said
were experts is not given the experts' allowance."""


@dataclass(frozen=True, slots=True)
class AltSettings:
    """The alternative annotator test's epsilon, where it was set, and whether a judge
    must pass it (run) to gate."""

    epsilon: float = ALT_EPSILONS[DEFAULT_ANNOTATORS]
    epsilon_from: str = (f"default: annotators not declared, taken as {DEFAULT_ANNOTATORS} "
                         "(the strictest)")
    required: bool = False


DEFAULT_ALT = AltSettings()


def alt_settings(flag: float | None, configured: float | None, kind: str | None,
                 required: bool = False) -> AltSettings:
    """The epsilon from the flag, else the config's ``alt_epsilon``, else the declared
    ``annotators`` kind, else ``DEFAULT_ANNOTATORS``."""
    if flag is not None:
        return AltSettings(flag, "--alt-epsilon", required)
    if configured is not None:
        return AltSettings(configured, "tool.metaeval.judge_audit.alt_epsilon", required)
    if kind is not None:
        return AltSettings(ALT_EPSILONS[kind], f"annotators = {kind!r}", required)
    return AltSettings(required=required)


@dataclass(frozen=True, slots=True)
class AuditSettings:
    """How an audit measures and decides, apart from the judge and its verdicts.
    ``labels``: the scale of people's integer labels (None: the judge's own when both
    are 1-5, see ``label_scale``). ``generated``: probes were generated for this run,
    so a pairwise judge needs its pairwise length and injection probes run to gate.
    ``alt``: the alternative annotator test's epsilon and whether the judge must pass
    it to gate. ``by``: ``"category"`` breaks the figures down by the items' category
    too (see ``metaeval.audit.breakdown``). ``classes``: the declared classes of
    categorical items."""

    bars: Bars = DEFAULT_BARS
    labels: Scale | None = None
    generated: bool = False
    alt: AltSettings = DEFAULT_ALT
    by: str | None = None
    classes: tuple[str, ...] = ()


DEFAULT_SETTINGS = AuditSettings()
