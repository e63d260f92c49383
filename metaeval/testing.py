"""A pytest helper: assert that a project's graders meet their meta-eval bars.

``assert_graders(meta_sets)`` inside a project's own tests is what lets a mutant
in a grader be killed by the meta-set: break the grader, its TPR or TNR drops
under the bar, and the test fails. The bars are the project's own, from
``[tool.metaeval.meta_eval]`` (for every check, and ``checks.NAME`` per check),
the same that ``metaeval meta-eval`` and ``metaeval gate`` read, so the three
cannot disagree; arguments override them as the command's flags do. Meta-set
paths are measured as the command measures them (the config's suite checks
added, its labels files joined). It raises ``AssertionError`` naming every
check that misses a bar or is flagged, and never passes a meta-set that has a
bad line or no run in it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from metaeval.audit.check_measures import Flag, MetaEvalResult, Settings, meta_eval
from metaeval.commands.meta_eval import MetaEvalRequest
from metaeval.commands.meta_eval import meta_eval as meta_eval_command
from metaeval.config import Bars, Config, load_config, unknown_check_bars
from metaeval.importing import AllowedModules
from metaeval.loaders.meta_set import MetaSet

__all__ = ["Bars", "assert_graders"]

# Fewer resamples than the command's 1000: the bootstrap only sets the kappa and
# Youden's J intervals, and a test suite runs this on every commit.
TEST_RESAMPLES = 200


def assert_graders(meta_set: MetaSet | str | Path | Sequence[str | Path] | None = None, *,
                   min_tpr: float | None = None, min_tnr: float | None = None,
                   min_kappa: float | None = None, checks: Mapping[str, Bars] | None = None,
                   forbid: Collection[str] = (), seed: int | None = None,
                   resamples: int = TEST_RESAMPLES,
                   allowed_modules: Collection[str] | None = None,
                   project: str | Path | None = None) -> MetaEvalResult:
    """Measure every check of ``meta_set`` (a loaded MetaSet, or paths to load; None:
    the config's ``meta_sets``, as ``metaeval meta-eval`` with no path) and assert that
    each meets its bars: those of ``[tool.metaeval.meta_eval]``, with ``min_*`` over
    them for every check (as ``--min-tpr`` is over the config) and ``checks`` per
    check name over those (a per-check bar wins). Fails on every flag that fails the
    command (tautologies, missed bars, UNTESTED when the config says ``untested =
    "fail"``) and on any flag named in ``forbid`` (e.g. ``{"NO-SIGNAL",
    "CONSTANT"}``). Returns the result for more asserts. ``project``: the directory
    whose ``pyproject.toml`` holds the config (None: the current directory's, as the
    command reads it). ``allowed_modules``: where checks may name graders and judges
    by import path; None: the config's. ``seed``: None is the config's.
    """
    known = {f.value for f in Flag}
    unknown = sorted(set(forbid) - known)
    if unknown:
        raise ValueError(f"forbid: got {unknown!r}; expected flags among {sorted(known)}")
    config = load_config(None if project is None else Path(project))
    if allowed_modules is not None:
        config = replace(config, allowed_modules=AllowedModules(tuple(allowed_modules)))
    bars, check_bars = config.meta_eval.with_flags(Bars(min_tpr, min_tnr, min_kappa))
    config = replace(config, meta_eval=replace(
        config.meta_eval, bars=bars, check_bars={**check_bars, **(checks or {})}))
    seed = config.meta_eval.seed if seed is None else seed
    if isinstance(meta_set, MetaSet):
        result = _measure_loaded(meta_set, config, seed, resamples)
        paths: list[Path] = []
    else:
        paths = (config.paths(config.meta_sets) if meta_set is None
                 else [Path(p) for p in ([meta_set] if isinstance(meta_set, str | Path)
                                         else meta_set)])
        outcome = meta_eval_command(MetaEvalRequest(tuple(paths), seed=seed,
                                                    resamples=resamples), config)
        if outcome.loaded.errors:
            raise AssertionError("bad meta-set input:\n"
                                 + "\n".join(map(str, outcome.loaded.errors)))
        if outcome.result is None:
            raise AssertionError("the meta-set has no run: nothing to measure")
        result = outcome.result
    if not result.measured_any:  # meta-eval exits 3 here: a test must not pass
        raise AssertionError("nothing measured: " + (
            result.unmeasured or f"none of the runs of {', '.join(map(str, paths))} is "
                                 "labelled"))
    problems = []
    for check in result.checks:
        bad = [f for f in check.flags if check.fails(f) or f.value in forbid]
        if bad:
            m = check.measured
            problems.append(
                f"{check.name}: {' '.join(f.value for f in bad)} (TPR {m.tpr.value:.3f}, "
                f"TNR {m.tnr.value:.3f}, kappa {m.kappa.value:.3f})"
                + "".join(f"\n    {note}" for note in check.notes))
    names = {c.name for c in result.checks}
    missing = sorted(set(checks or {}) - names)
    if missing:
        problems.append(f"bars given for checks the meta-set does not have: {missing!r}")
    configured = {p.resolve() for p in config.paths(config.meta_sets)}
    # As meta-eval does on the configured meta-sets: a bar for a check they lack
    # would hold nothing to account.
    if paths and {p.resolve() for p in paths} == configured:
        stray = unknown_check_bars(config, names, ", ".join(map(str, paths)))
        if stray is not None and not missing:  # a ``checks`` name is said above
            problems.append(stray)
    if problems:
        raise AssertionError("graders miss their meta-eval bars:\n  " + "\n  ".join(problems))
    return result


def _measure_loaded(loaded: MetaSet, config: Config, seed: int,
                    resamples: int) -> MetaEvalResult:
    """A MetaSet already loaded, measured as it is (its runs carry their checks)."""
    if loaded.errors:
        raise AssertionError("bad meta-set input:\n" + "\n".join(map(str, loaded.errors)))
    if not loaded.runs:
        raise AssertionError("the meta-set has no run: nothing to measure")
    settings = Settings(config.meta_eval.bars, config.meta_eval.check_bars, seed, resamples,
                        untested=config.meta_eval.untested, cluster=config.meta_eval.cluster)
    return meta_eval(loaded.runs, settings, allowed=config.allowed_modules,
                     judges=config.judges)
