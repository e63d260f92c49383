"""``metaeval judge-audit``: load the items, ask the judge (or read recorded
verdicts), and audit it. Bad input raises InputError naming every bad line; it
never reaches the measurement as a half-loaded set.

``judge_audit`` takes a ``JudgeAuditRequest`` (the flags) and the project's
config and returns a ``JudgeAuditResult``: the audit and its exit code. It
never prints; ``record_calibration`` adds the entry ``--write`` asks for, after
the audit is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from metaeval.audit.bars import DEFAULT_BARS, Bars
from metaeval.audit.calibration import DEFAULT_PATH as DEFAULT_CALIBRATION
from metaeval.audit.calibration import write_calibration
from metaeval.audit.collect import Progress, ask_judge, item_ids, recorded_table
from metaeval.audit.judge_audit import AuditSource, AuditVerdict, JudgeAudit, audit_judge
from metaeval.config import NO_JUDGES, Config, JudgesSection
from metaeval.errors import ExitCode, InputError
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.judge_items import JudgeItems, item_kinds, load_judge_items, load_recorded
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity, Scale
from metaeval.judges.cache import DEFAULT_PATH as DEFAULT_CACHE
from metaeval.judges.cache import CachedJudge, ReplyCache
from metaeval.judges.scales import configured_scale, declared_scale, describe
from metaeval.judges.spec import build_judge, concurrency_of
from metaeval.meta_set import LoadError


def _fail(errors: Sequence[LoadError]) -> InputError:
    return InputError("\n".join(str(e) for e in errors))


def load_items(paths: Sequence[Path]) -> JudgeItems:
    items = load_judge_items(paths)
    if items.errors:
        raise _fail(items.errors)
    if not items.count:
        raise InputError(f"no judge items in {', '.join(map(str, paths))}; expected "
                         "*.ndjson files of judge items")
    return items


def _recorded_audit(spec: str, items: JudgeItems, recorded: Path, bars: Bars,
                    declared: Scale | None, scale_from: str,
                    allowed: AllowedModules, judges: JudgesSection) -> JudgeAudit:
    identity, scale = JudgeIdentity(spec, model="recorded"), declared or DEFAULT_SCALE
    try:  # a judge we can build lends its identity, so its calibration applies to it
        named = build_judge(spec, allowed=allowed, judges=judges)
    except InputError:
        pass  # a name only: the logs' judge is not one metaeval can build
    else:
        if declared is not None and declared != named.scale:
            raise InputError(f"{scale_from}: got {describe(declared)}; judge {spec!r} answers "
                             f"on {describe(named.scale)} (its own config); declare no scale "
                             "for it")
        identity, scale = named.identity, named.scale
    records, errors = load_recorded(recorded, scale, item_kinds(items))
    if errors:
        raise _fail(errors)
    known = item_ids(items)
    unknown = sorted({r.id for r in records} - known)
    if unknown:
        raise InputError(f"{recorded}: id: got {unknown[0]!r} (and {len(unknown) - 1} "
                         "more); expected the id of a loaded judge item")
    return audit_judge(identity, scale, items, recorded_table(records),
                       source=AuditSource.RECORDED, bars=bars)


def run_judge_audit(spec: str, items: JudgeItems, *, recorded: Path | None = None,
                    samples: int = 1, cache: Path | None = None,
                    bars: Bars = DEFAULT_BARS, progress: Progress | None = None,
                    scale: Scale | None = None, scale_from: str = "--scale",
                    allowed: AllowedModules = BUILTINS_ONLY,
                    judges: JudgesSection = NO_JUDGES) -> JudgeAudit:
    """Audit ``spec`` on ``items``: asked live (through the reply cache at ``cache``
    unless None), or read from ``recorded`` with no call made. ``scale`` declares
    the recorded judge's scale (``scale_from`` says where it was declared); a
    live judge answers on its own. A judge named by import path must be in
    ``allowed`` (``[tool.metaeval] allowed_modules``); a configured name, in ``judges``
    (``[tool.metaeval.judges]``)."""
    if samples < 1:
        raise InputError(f"--samples: got {samples!r}; expected an integer >= 1")
    if recorded is not None:
        return _recorded_audit(spec, items, recorded, bars, scale, scale_from, allowed, judges)
    if scale is not None:
        raise InputError(f"{scale_from}: applies to --recorded only; a live judge answers "
                         "on the scale of its own config")
    judge = build_judge(spec, allowed=allowed, judges=judges)
    if cache is not None:
        store = ReplyCache(cache)
        try:
            table = ask_judge(CachedJudge(judge, store, concurrency_of(judge)), items, samples,
                              progress)
        finally:
            store.close()
    else:
        table = ask_judge(judge, items, samples, progress)
    return audit_judge(judge.identity, judge.scale, items, table, source=AuditSource.LIVE,
                       modes=judge.modes, bars=bars)


@dataclass(frozen=True, slots=True)
class JudgeAuditRequest:
    """What the user asked of ``metaeval judge-audit``; ``None`` means the default."""

    spec: str
    """The judge: a built-in name, an import path, or a name under
    ``[tool.metaeval.judges]``; with ``recorded`` it only names the judge."""
    items: tuple[Path, ...] = ()
    """Judge-item files or folders; empty: ``<meta_sets>/judge/``."""
    recorded: Path | None = None
    samples: int = 1
    scale_text: str | None = None
    """``--scale``: the recorded scores' scale (``LOW-HIGH``)."""
    pass_at: int | None = None
    cache_path: Path | None = None
    """The reply cache; None: ``.metaeval/judge-cache.sqlite`` under the project root."""
    no_cache: bool = False
    bars: Bars = DEFAULT_BARS


VERDICT_CODES = {AuditVerdict.MAY_GATE: ExitCode.OK, AuditVerdict.REPORT_ONLY: ExitCode.FINDINGS,
                 AuditVerdict.VOID: ExitCode.VOID}
"""May gate 0, report only 1, void (a control failed) 3."""


@dataclass(frozen=True, slots=True)
class JudgeAuditResult:
    """One audit and the exit code it earns."""

    audit: JudgeAudit
    root: Path
    """The project root, where the calibration file lives unless named."""

    @property
    def code(self) -> ExitCode:
        return VERDICT_CODES[self.audit.verdict]


def judge_audit(request: JudgeAuditRequest, config: Config,
                progress: Progress | None = None) -> JudgeAuditResult:
    """Audit the judge of ``request`` in the project of ``config``. The flags win over
    the config, whose declared scale is for recorded verdicts only: a live judge
    answers on the scale of its own config."""
    configured = configured_scale(config.judge_audit)
    recorded = request.recorded
    scale, scale_from = (configured if recorded else None), "tool.metaeval.judge_audit.scale"
    scale_text = request.scale_text
    if scale_text is not None or request.pass_at is not None:
        if scale_text is None and configured is not None and recorded:
            scale_text = f"{configured.low}-{configured.high}"
        scale = declared_scale(scale_text, request.pass_at, scale_where="--scale",
                               pass_where="--pass-at")
        scale_from = "--scale"
    paths = list(request.items) or [p / "judge" for p in config.paths(config.meta_sets)]
    cache = None if request.no_cache or recorded else (
        request.cache_path or config.root / DEFAULT_CACHE)
    audit = run_judge_audit(request.spec, load_items(paths), recorded=recorded,
                            samples=request.samples, cache=cache, bars=request.bars,
                            progress=progress, scale=scale, scale_from=scale_from,
                            allowed=config.allowed_modules, judges=config.judges)
    return JudgeAuditResult(audit, config.root)


def record_calibration(result: JudgeAuditResult, path: Path | None, today: date
                       ) -> tuple[Path, bool]:
    """Add the audit's calibration entry to ``path`` (default: the project's
    calibration file) when it may gate; returns the file and whether it was written."""
    target = path or result.root / DEFAULT_CALIBRATION
    return target, write_calibration(target, result.audit, today)
