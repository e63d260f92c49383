"""``metaeval judge-audit`` with several judges (``--judge`` repeated, none with a
log naming its judges, ``--panel`` or ``--gate``): the side-by-side table, then the
exit code; apart from ``app.py`` so that it stays small."""

from __future__ import annotations

import sys
from pathlib import Path

from metaeval.cli.options import ProgressBar, echo
from metaeval.commands.judge_audit_many import JudgesRequest, audit_judges
from metaeval.commands.judge_audit_values import JudgeAuditRequest
from metaeval.config import Config
from metaeval.errors import InputError

__all__ = ["audit_several"]


def audit_several(request: JudgeAuditRequest, judges: tuple[str, ...], panels: tuple[str, ...],
                  gate: str | None, config: Config, fmt: str,
                  single_only: dict[str, bool | Path | None]) -> None:
    """Audit the judges side by side, print the table (or JSON) and exit with its
    code. ``single_only``: the flags that write one judge's files (a calibration
    entry, an HTML page, a summary, generated probes), refused here by name."""
    from metaeval.report.judges_side_by_side import judges_json, judges_text

    given = [flag for flag, value in single_only.items() if value not in (None, False)]
    if given:
        raise InputError(f"{given[0]}: applies to one judge's audit; with several judges "
                         "(--judge repeated or left out, --panel, --gate) audit the one "
                         "you mean alone to use it")
    bar = ProgressBar("asking the judges") if sys.stderr.isatty() else None
    try:
        result = audit_judges(JudgesRequest(request, judges, panels, gate), config, bar,
                              lambda note: echo(note, err=True))
    finally:
        if bar is not None:
            bar.close()
    echo(judges_json(result) if fmt == "json" else judges_text(result))
    for error in result.errors:
        echo(f"error: {error}", err=True)
    sys.exit(result.code)
