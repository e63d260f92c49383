"""``metaeval gate``: hold result files to the bars of ``[tool.metaeval.gate]``.

Reads the result files (meta-eval, judge-audit, mutate; ``--format json``) and
the calibration file, and decides each bar; a judge metric is enforced only for
a judge whose identity has a calibration entry, and every judge-audit result is
held to its verdict (``judge_verdicts``). Never prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from metaeval.audit.calibration import DEFAULT_PATH, calibrated_versions
from metaeval.config import Config
from metaeval.errors import ExitCode, InputError
from metaeval.gate import BarResult, decide, judge_verdicts, load_results


def gate(results: Sequence[Path], calibration_path: Path | None,
         config: Config) -> tuple[BarResult, ...]:
    """Every bar of ``config`` decided over ``results``, and every judge-audit result
    held to its verdict; raises InputError when a file cannot be read, or when there
    is nothing to decide (no bar in the config and no judge-audit result)."""
    loaded = load_results(list(results))
    if not config.gate and not loaded.judge_audits:
        raise InputError("no bars: add [tool.metaeval.gate] to pyproject.toml, e.g. "
                         "\"meta-eval:evaluator.kappa\" = 0.8")
    calibrated = calibrated_versions(calibration_path or config.root / DEFAULT_PATH)
    return (*decide(config.gate, loaded, calibrated),
            *judge_verdicts(loaded, config.gate_options))


def gate_code(decided: Sequence[BarResult]) -> ExitCode:
    """1 when any bar fails, else 0."""
    return ExitCode.FINDINGS if any(r.status.fails for r in decided) else ExitCode.OK
