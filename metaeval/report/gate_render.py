"""What ``metaeval gate`` prints: every bar, its value, and what it decided."""

from __future__ import annotations

import json
from collections.abc import Sequence

from tabulate import tabulate

from metaeval.gate_bars import BarResult, BarStatus
from metaeval.report.escape import one_line


def _value(r: BarResult) -> str:
    return "-" if r.value is None else f"{r.value:.4g}"


def gate_table(decided: Sequence[BarResult]) -> str:
    rows = [[one_line(r.bar.metric), _value(r), one_line(r.bar.describe()),
             r.status.value.upper() if r.status.fails else r.status.value,
             one_line(r.detail)] for r in decided]
    table = tabulate(rows, headers=["metric", "value", "bar", "status", "detail"])
    failing = [r for r in decided if r.status.fails]
    if failing:
        lines = [f"  - {one_line(r.bar.metric)}: {_value(r)} not {one_line(r.bar.describe())}"
                 if r.status is BarStatus.FAIL and r.value is not None
                 else f"  - {one_line(r.bar.metric)}: {one_line(r.detail)}"
                 for r in failing]
        return "\n".join([table, "", f"FAIL: {len(failing)} of {len(decided)} bars", *lines])
    return "\n".join([table, "", f"OK: {len(decided)} bars"])


def gate_json(decided: Sequence[BarResult]) -> str:
    return json.dumps({
        "ok": not any(r.status.fails for r in decided),
        "bars": [{"metric": r.bar.metric, "min": r.bar.min, "max": r.bar.max,
                  "value": r.value, "status": r.status.value, "detail": r.detail}
                 for r in decided],
    }, indent=2, sort_keys=True)
