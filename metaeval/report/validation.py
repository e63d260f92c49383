"""What ``metaeval validate`` prints: every bad line, then how much loaded."""

from __future__ import annotations

import json

from metaeval.meta_set import MetaSet
from metaeval.report.escape import one_line


def validation_text(result: MetaSet) -> str:
    lines = [one_line(str(error)) for error in result.errors]
    bad = len({(e.path, e.line) for e in result.errors})
    summary = (f"{_count(len(result.runs), 'run')} loaded from "
               f"{_count(len(result.files), 'file')}; {_count(bad, 'bad line')}")
    return "\n".join([*lines, summary])


def validation_json(result: MetaSet) -> str:
    document = {
        "files": list(result.files),
        "loaded": len(result.runs),
        "errors": [{"path": e.path, "line": e.line, "field": e.field, "message": e.message}
                   for e in result.errors],
    }
    return json.dumps(document, indent=2, sort_keys=True)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
