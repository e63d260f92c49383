"""What ``metaeval validate`` prints: every bad line, then how much of each kind loaded."""

from __future__ import annotations

import json

from metaeval.commands.validate import Validated
from metaeval.report.escape import one_line


def validation_text(result: Validated) -> str:
    lines = [one_line(str(error)) for error in result.errors]
    bad = len({(e.path, e.line) for e in result.errors})
    # Runs are named when there are some, or when nothing else loaded.
    loaded = ([_count(len(result.meta.runs), "run")]
              if result.meta.runs or not (result.items or result.probes or result.recorded
                                          or result.label_files)
              else [])
    if result.items or result.probes:
        loaded.append(_count(result.items, "judge item")
                      + (f" (and {_count(result.probes, 'probe')})" if result.probes else ""))
    if result.recorded:
        loaded.append(_count(result.verdicts, "recorded verdict"))
    if result.label_files:
        loaded.append(_count(result.labels, "label") + " by "
                      + _count(result.annotators, "annotator"))
    summary = (f"{', '.join(loaded)} loaded from {_count(len(result.meta.files), 'file')}; "
               f"{_count(bad, 'bad line')}")
    return "\n".join([*lines, summary])


def validation_json(result: Validated) -> str:
    document = {
        "files": list(result.meta.files),
        "loaded": len(result.meta.runs),
        "judge_items": result.items,
        "probes": result.probes,
        "recorded_verdicts": result.verdicts,
        "recorded_files": list(result.recorded),
        "labels": result.labels,
        "annotators": result.annotators,
        "label_files": list(result.label_files),
        "errors": [{"path": e.path, "line": e.line, "field": e.field, "message": e.message}
                   for e in result.errors],
    }
    return json.dumps(document, indent=2, sort_keys=True)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
