"""The probes a judge audit runs, one registered unit each (see ``unit.ProbeUnit``).

``PROBES`` is the registry, in report order: the audit runs every unit on the
audited judge and on the planted controls, decides by each unit's status, and
every renderer shows each unit's rows. Adding a probe is one module beside these
and one entry below (its docs and tests apart); nothing else names a probe.
"""

from __future__ import annotations

from metaeval.audit.probes import injection, length, pairwise, position, self_preference
from metaeval.audit.probes.unit import (
    NOT_RUN,
    ProbeResult,
    ProbeRun,
    ProbeUnit,
    ProbeView,
    Required,
)

__all__ = ["NOT_RUN", "PROBES", "ProbeResult", "ProbeRun", "ProbeUnit", "ProbeView", "Required",
           "unit"]

PROBES: dict[str, ProbeUnit] = {}


def _register(unit: ProbeUnit) -> None:
    if unit.name in PROBES or any(u.key == unit.key for u in PROBES.values()):
        raise ValueError(f"probe {unit.name!r} ({unit.key!r}) is registered twice")
    PROBES[unit.name] = unit


for _unit in (position.UNIT, length.UNIT, injection.UNIT, pairwise.LENGTH, pairwise.INJECTION,
              self_preference.UNIT):
    _register(_unit)


def unit(name: str) -> ProbeUnit:
    """The registered probe called ``name``."""
    return PROBES[name]
