"""What a judge must meet to gate a release, and the probes' significance level.

Apart from the audit so that the command line can show the defaults in its help
without loading the measuring code (scikit-learn takes a second).
"""

from __future__ import annotations

from dataclasses import dataclass

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
