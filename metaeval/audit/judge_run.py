"""Load, ask (or read recorded verdicts), and audit: the library side of
``metaeval judge-audit``. Bad input raises InputError naming every bad line;
it never reaches the measurement as a half-loaded set.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from metaeval.audit.collect import Progress, ask_judge, item_ids, recorded_table
from metaeval.audit.judge_audit import DEFAULT_BARS, AuditSource, Bars, JudgeAudit, audit_judge
from metaeval.config import NO_JUDGES, JudgesSection
from metaeval.errors import InputError
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.judge_items import JudgeItems, item_kinds, load_judge_items, load_recorded
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity, Scale
from metaeval.judges.cache import CachedJudge, ReplyCache
from metaeval.judges.scales import describe
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
