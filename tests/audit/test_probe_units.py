"""The probes as registered units (issue 46): the registry drives the audit and every
report, a unit's JSON key lives only in its unit, and a name cannot be taken twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from metaeval.audit import probes
from metaeval.audit.probes import PROBES, ProbeUnit
from metaeval.report.judge_audit_render import KEYS

PACKAGE = Path(__file__).resolve().parents[2] / "metaeval"


def test_every_unit_has_a_json_key_in_registry_order() -> None:
    keys = [u.key for u in PROBES.values()]
    assert keys[:5] == ["position", "length", "injection", "pairwise_length",
                        "pairwise_injection"]
    assert [k for k in KEYS if k in keys] == keys
    assert len(set(keys)) == len(keys)


def test_a_pairwise_probe_key_is_named_only_in_its_unit() -> None:
    # The JSON key as a string: the renderers and the audit take it from the unit.
    named = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                   if '"pairwise_injection"' in p.read_text(encoding="utf-8"))
    assert named == ["audit/probes/pairwise.py"]


def test_a_name_or_key_registered_twice_is_refused() -> None:
    position = PROBES["position"]
    with pytest.raises(ValueError, match="registered twice"):
        probes._register(position)
    same_key = ProbeUnit("another", position.key, position.mode, position.run,
                         position.document, position.lines)
    with pytest.raises(ValueError, match="registered twice"):
        probes._register(same_key)
    assert "another" not in PROBES
