"""Load, ask (or read recorded verdicts), and audit: the library side of
``metaeval judge-audit``. Bad input raises InputError naming every bad line;
it never reaches the measurement as a half-loaded set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from metaeval.audit.collect import Progress, ask_judge, item_ids, recorded_table
from metaeval.audit.judge_audit import (
    DEFAULT_BARS,
    Bars,
    JudgeAudit,
    audit_judge,
    label_scale,
)
from metaeval.errors import InputError, shown
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.judge_items import (
    JudgeItems,
    Recorded,
    item_kinds,
    load_judge_items,
    load_recorded,
)
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity, Scale
from metaeval.judges.cache import CachedJudge, ReplyCache
from metaeval.judges.scales import describe
from metaeval.judges.spec import build_judge, concurrency_of
from metaeval.untrusted_json import LoadError


def _fail(errors: Sequence[LoadError]) -> InputError:
    return InputError("\n".join(str(e) for e in errors))


def load_items(paths: Sequence[Path], labels: tuple[int, int] = (1, 5)) -> JudgeItems:
    """The items of ``paths``. Bad lines are kept in ``errors`` and left out, as
    meta-eval does: the rest is audited and the run ends with exit 2. Only when
    no item loads at all is it an InputError (every bad line named)."""
    items = load_judge_items(paths, labels)
    if not items.count:
        if items.errors:
            raise _fail(items.errors)
        raise InputError(f"no judge items in {', '.join(map(str, paths))}; expected "
                         "*.ndjson files of judge items")
    return items


def _recorded_audit(spec: str, items: JudgeItems, recorded: Path, bars: Bars,
                    declared: Scale | None, scale_from: str, allowed: AllowedModules,
                    labels: tuple[int, int] | None, label_pass_at: int | None) -> JudgeAudit:
    identity, scale = JudgeIdentity(spec, model="recorded"), declared or DEFAULT_SCALE
    built = False
    try:  # a judge we can build lends its identity, so its calibration applies to it
        named = build_judge(spec, allowed=allowed)
    except InputError:
        pass  # a name only: the logs' judge is not one metaeval can build
    else:
        if declared is not None and declared != named.scale:
            raise InputError(f"{scale_from}: got {describe(declared)}; judge {spec!r} answers "
                             f"on {describe(named.scale)} (its own config); declare no scale "
                             "for it")
        identity, scale, built = named.identity, named.scale, True
    records, errors = load_recorded(recorded, scale, item_kinds(items))
    if not records and errors:
        raise _fail(errors)
    known = item_ids(items)
    unknown = [r for r in records if r.id not in known]
    bad = list(errors) + [_unknown_id(r) for r in unknown]
    records = tuple(r for r in records if r.id in known)
    audit = audit_judge(identity, scale, items, recorded_table(records), mode="recorded",
                        bars=bars, labels=label_scale(scale, labels, label_pass_at))
    return replace(audit, errors=audit.errors + tuple(bad), temperature_known=built)


def _unknown_id(record: Recorded) -> LoadError:
    path, _, line = record.source.rpartition(":")
    return LoadError(path, int(line) if line.isdigit() else 0, "id",
                     f"got {shown(record.id)}; expected the id of a loaded judge item")


def run_judge_audit(spec: str, items: JudgeItems, *, recorded: Path | None = None,
                    samples: int | None = None, cache: Path | None = None,
                    bars: Bars = DEFAULT_BARS, progress: Progress | None = None,
                    scale: Scale | None = None, scale_from: str = "--scale",
                    allowed: AllowedModules = BUILTINS_ONLY,
                    labels: tuple[int, int] | None = None,
                    label_pass_at: int | None = None) -> JudgeAudit:
    """Audit ``spec`` on ``items``: asked live (through the reply cache at ``cache``
    unless None), or read from ``recorded`` with no call made. ``scale`` declares
    the recorded judge's scale (``scale_from`` says where it was declared); a
    live judge answers on its own. A judge named by import path must be in
    ``allowed`` (``[tool.metaeval] allowed_modules``). ``labels`` and
    ``label_pass_at``: people's integer label range and pass mark (see
    ``label_scale``)."""
    audit = _audit(spec, items, recorded, samples, cache, bars, progress, scale, scale_from,
                   allowed, labels, label_pass_at)
    return replace(audit, errors=items.errors + audit.errors)


def _audit(spec: str, items: JudgeItems, recorded: Path | None, samples: int | None,
           cache: Path | None, bars: Bars, progress: Progress | None, scale: Scale | None,
           scale_from: str, allowed: AllowedModules, labels: tuple[int, int] | None,
           label_pass_at: int | None) -> JudgeAudit:
    if samples is not None and samples < 1:
        raise InputError(f"--samples: got {samples!r}; expected an integer >= 1")
    if recorded is not None:
        if samples is not None:
            raise InputError("--samples: applies to a live judge only; with --recorded the "
                             "number of samples is what the log holds (its 'sample' field)")
        return _recorded_audit(spec, items, recorded, bars, scale, scale_from, allowed,
                               labels, label_pass_at)
    if scale is not None:
        raise InputError(f"{scale_from}: applies to --recorded only; a live judge answers "
                         "on the scale of its own config")
    judge = build_judge(spec, allowed=allowed)
    if cache is not None:
        store = ReplyCache(cache)
        try:
            table = ask_judge(CachedJudge(judge, store, concurrency_of(judge)), items,
                              samples or 1, progress)
        finally:
            store.close()
    else:
        table = ask_judge(judge, items, samples or 1, progress)
    return audit_judge(judge.identity, judge.scale, items, table, mode="live",
                       modes=judge.modes, bars=bars,
                       labels=label_scale(judge.scale, labels, label_pass_at))
