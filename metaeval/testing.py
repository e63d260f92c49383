"""A pytest helper: assert that a project's graders meet their meta-eval bars.

``assert_graders(meta_sets, min_tpr=0.9, min_tnr=0.8)`` inside a project's
own tests is what lets a mutant in a grader be killed by the meta-set: break
the grader, its TPR or TNR drops under the bar, and the test fails. It raises
``AssertionError`` naming every check that misses a bar or is flagged, and
never passes a meta-set that has a bad line or no run in it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from metaeval.audit.meta_eval import Flag, MetaEvalResult, Settings, meta_eval
from metaeval.config import Bars, load_config
from metaeval.importing import AllowedModules
from metaeval.meta_set import MetaSet, load_meta_sets

__all__ = ["Bars", "assert_graders"]

# Fewer resamples than the command's 1000: the bootstrap only sets the kappa and
# Youden's J intervals, and a test suite runs this on every commit.
TEST_RESAMPLES = 200


def assert_graders(meta_set: MetaSet | str | Path | Sequence[str | Path], *,
                   min_tpr: float | None = None, min_tnr: float | None = None,
                   min_kappa: float | None = None, checks: Mapping[str, Bars] | None = None,
                   forbid: Collection[str] = (), seed: int = 0,
                   resamples: int = TEST_RESAMPLES,
                   allowed_modules: Collection[str] | None = None) -> MetaEvalResult:
    """Measure every check of ``meta_set`` (a loaded MetaSet, or paths to load) and
    assert that each meets the bars: ``min_*`` for every check, ``checks`` per
    check name (a per-check bar wins). Fails on every flag that fails the
    command (tautologies, missed bars) and on any flag named in ``forbid``
    (e.g. ``{"NO-SIGNAL", "CONSTANT"}``). Returns the result for more asserts.
    ``allowed_modules``: where checks may name graders and judges by import path;
    None reads ``[tool.metaeval] allowed_modules`` of the project around the
    current directory, as the command does.
    """
    config = load_config()
    allowed = (config.allowed_modules if allowed_modules is None
               else AllowedModules(tuple(allowed_modules)))
    loaded = meta_set if isinstance(meta_set, MetaSet) else load_meta_sets(
        [Path(p) for p in ([meta_set] if isinstance(meta_set, str | Path) else meta_set)],
        allowed, config.judges)
    if loaded.errors:
        raise AssertionError("bad meta-set input:\n" + "\n".join(map(str, loaded.errors)))
    if not loaded.runs:
        raise AssertionError("the meta-set has no run: nothing to measure")
    known = {f.value for f in Flag}
    unknown = sorted(set(forbid) - known)
    if unknown:
        raise ValueError(f"forbid: got {unknown!r}; expected flags among {sorted(known)}")
    settings = Settings(Bars(min_tpr, min_tnr, min_kappa), dict(checks or {}), seed, resamples)
    result = meta_eval(loaded.runs, settings, allowed=allowed, judges=config.judges)
    problems = []
    for check in result.checks:
        bad = [f for f in check.flags if check.fails(f) or f.value in forbid]
        if bad:
            m = check.measured
            problems.append(
                f"{check.name}: {' '.join(f.value for f in bad)} (TPR {m.tpr.value:.3f}, "
                f"TNR {m.tnr.value:.3f}, kappa {m.kappa.value:.3f})"
                + "".join(f"\n    {note}" for note in check.notes))
    missing = sorted(set(checks or {}) - {c.name for c in result.checks})
    if missing:
        problems.append(f"bars given for checks the meta-set does not have: {missing!r}")
    if problems:
        raise AssertionError("graders miss their meta-eval bars:\n  " + "\n  ".join(problems))
    return result
