"""What ``metaeval import`` prints: every bad record, then how many runs were written."""

from __future__ import annotations

import json

from metaeval.commands.import_runs import Imported
from metaeval.contract import JsonObject
from metaeval.report.escape import one_line

__all__ = ["import_json", "import_text", "run_jsonl", "runs_jsonl"]


def run_jsonl(line: JsonObject) -> str:
    """One meta-set line as JSON Lines text; non-ASCII kept as written."""
    return json.dumps(line, ensure_ascii=False, sort_keys=False) + "\n"


def runs_jsonl(result: Imported) -> str:
    """The meta-set lines, one JSON object a line."""
    return "".join(run_jsonl(line) for line in result.lines)


def import_text(result: Imported, output: str | None) -> str:
    """``output``: where the lines went, None when there was nothing to write."""
    lines = [one_line(str(error)) for error in result.errors]
    bad = len({(e.path, e.line, e.field.partition(".")[0] if not e.line else "")
               for e in result.errors})
    runs = result.runs
    where = f"written to {one_line(output)}" if output else "nothing written"
    lines.append(f"{runs} run{'' if runs == 1 else 's'} from {len(result.files)} "
                 f"file{'' if len(result.files) == 1 else 's'}, {where}; "
                 f"{bad} bad record{'' if bad == 1 else 's'}")
    return "\n".join(lines)


def import_json(result: Imported, output: str | None) -> str:
    document: JsonObject = {
        "output": output,
        "files": list(result.files),
        "runs": result.runs,
        "errors": [{"path": e.path, "line": e.line, "field": e.field, "message": e.message}
                   for e in result.errors],
    }
    return json.dumps(document, indent=2, sort_keys=True)
