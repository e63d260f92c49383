"""``metaeval gate``: hold result files to the bars of ``[tool.metaeval.gate]`` and a
meta-eval result to those of ``[tool.metaeval.meta_eval]``.

Reads the result files (meta-eval, judge-audit, mutate; ``--format json``) and
the calibration file, and decides each bar; a judge metric is enforced only for
a judge whose identity has a calibration entry, every judge-audit result is
held to its verdict (``judge_verdicts``), and one tuned after a held-out read
fails (``held_out_reads``). Never prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from metaeval.audit.calibration import DEFAULT_PATH, calibrated_versions
from metaeval.config import CHECK_BAR_FIELDS, Config
from metaeval.errors import ExitCode, InputError
from metaeval.gate_bars import (
    Bar,
    BarResult,
    Results,
    check_names,
    decide,
    held_out_reads,
    judge_verdicts,
    load_results,
)


def meta_eval_bars(config: Config, results: Results) -> tuple[Bar, ...]:
    """The bars of ``[tool.metaeval.meta_eval]`` (for every check, and per check) over
    the checks of the meta-eval result, each naming the table that sets it; none
    without a meta-eval result. A per-check bar for a check the result lacks is kept,
    and fails as missing, as ``meta-eval`` refuses such a bar on its meta-sets."""
    if results.meta_eval is None:
        return ()
    names = sorted({*check_names(results), *config.meta_eval.check_bars})
    bars = []
    for name in names:
        for field, key in CHECK_BAR_FIELDS:
            value, origin = config.meta_eval.bar_of(name, key)
            if value is not None:
                bars.append(Bar(f"meta-eval:{name}.{field}", min=value, origin=origin))
    return tuple(bars)


def gate(results: Sequence[Path], calibration_path: Path | None,
         config: Config) -> tuple[BarResult, ...]:
    """Every bar of ``config`` decided over ``results`` (``[tool.metaeval.gate]``'s, and
    ``[tool.metaeval.meta_eval]``'s over a meta-eval result), and every judge-audit
    result held to its verdict; raises InputError when a file cannot be read, or when
    there is nothing to decide (no bar in the config and no judge-audit result)."""
    loaded = load_results(list(results))
    bars = (*meta_eval_bars(config, loaded), *config.gate)
    if not bars and not loaded.judge_audits:
        raise InputError("no bars: add [tool.metaeval.gate] to pyproject.toml, e.g. "
                         "\"meta-eval:evaluator.kappa\" = 0.8, or bars for the checks "
                         "to [tool.metaeval.meta_eval] (min_tpr, min_tnr, min_kappa)")
    if calibration_path is not None and not calibration_path.exists():
        # The default file may be absent (no judge calibrated yet); one named may not.
        raise InputError(f"--calibration: {calibration_path}: no such file; expected the "
                         "calibration file judge-audit --write keeps")
    calibrated = calibrated_versions(calibration_path or config.root / DEFAULT_PATH)
    return (*decide(bars, loaded, calibrated),
            *judge_verdicts(loaded, config.gate_options), *held_out_reads(loaded))


def gate_code(decided: Sequence[BarResult]) -> ExitCode:
    """1 when any bar fails, else 0."""
    return ExitCode.FINDINGS if any(r.status.fails for r in decided) else ExitCode.OK
