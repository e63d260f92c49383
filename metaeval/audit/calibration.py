"""The calibration file: which judges passed an audit, kept under version control.

An entry is written only for a "may gate" audit. It names the judge's full
identity; an entry whose identity differs from the judge now in use does not
apply to it (a new model, prompt, temperature or endpoint is a new judge). This module
must never write an entry for an audit that did not pass, nor any secret.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from metaeval.audit.judge_decision import AuditVerdict, JudgeAudit
from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import InputError, shown
from metaeval.files import write_atomic
from metaeval.judges.base import JudgeIdentity
from metaeval.untrusted_json import JsonInputError, read_json_file

FORMAT_VERSION = 1
DEFAULT_PATH = Path("meta_sets") / "judge" / "calibration.json"


def _read(path: Path) -> list[JsonValue]:
    if not path.exists():
        return []
    try:
        document = read_json_file(path)
    except (OSError, JsonInputError) as e:
        raise InputError(f"{path}: cannot read the calibration file: {e}") from e
    entries = document.get("entries") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise InputError(f"{path}: entries: got {shown(entries)}; expected a list")
    return entries


def _modes(audit: JudgeAudit) -> JsonValue:
    return [m.value for m in sorted(audit.modes, key=lambda m: m.value)]


def entry(audit: JudgeAudit, today: date) -> JsonObject:
    j = audit.judge
    point = audit.pointwise
    kappa_value: JsonValue = None
    interval: JsonValue = None
    if point is not None:
        kappa_value = round(point.kappa.value, 4)
        interval = [round(point.kappa_interval.low, 4), round(point.kappa_interval.high, 4)]
    elif audit.pairwise is not None:
        kappa_value = round(min(o.kappa.value for o in audit.pairwise.orders), 4)
    b = audit.bars
    return {"judge": {"name": j.name, "model": j.model, "prompt_hash": j.prompt_hash,
                      "temperature": j.temperature, "endpoint": j.endpoint,
                      "version": j.version},
            "modes": _modes(audit), "n": audit.items, "kappa": kappa_value,
            "kappa_interval": interval,
            "bars": {"kappa": b.kappa, "tpr": b.tpr, "tnr": b.tnr, "unscored": b.unscored,
                     "alpha": b.alpha},
            "date": today.isoformat()}


def write_calibration(path: Path, audit: JudgeAudit, today: date) -> bool:
    """Append an entry when the audit says "may gate"; False (nothing written) else."""
    if audit.verdict is not AuditVerdict.MAY_GATE:
        return False
    entries = _read(path)
    entries.append(entry(audit, today))
    text = json.dumps({"format_version": FORMAT_VERSION, "entries": entries}, indent=2)
    # Never through a link: a dangling calibration.json link would create a file
    # outside the repository. OutputError when it cannot be written.
    write_atomic(path, text + "\n", follow_links=False)
    return True


def calibration_for(path: Path, identity: JudgeIdentity) -> JsonObject | None:
    """The latest entry for exactly this judge identity, or None: entries for an
    earlier identity of the same name do not apply."""
    for item in reversed(_read(path)):
        judge = item.get("judge") if isinstance(item, dict) else None
        if isinstance(judge, dict) and judge.get("version") == identity.version:
            assert isinstance(item, dict)
            return item
    return None


def calibrated_versions(path: Path) -> set[str]:
    """Every judge identity (version) with an entry in the calibration file."""
    versions = set()
    for item in _read(path):
        judge = item.get("judge") if isinstance(item, dict) else None
        if isinstance(judge, dict) and isinstance(judge.get("version"), str):
            versions.add(str(judge["version"]))
    return versions
