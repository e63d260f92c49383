"""The golden and held-out sets applied to a judge audit: the items of the chosen set
kept, and each held-out read checked against the ledger and appended to it.

A held-out set is read once per judge. The ledger beside the split
(``metaeval.loaders.ledger``) records every judge-audit of the held-out set: the
judge's identity, the time, the verdict and kappa.

A read is **tuned after a held-out read** when another identity of the same judge
name (another rubric, template, reply rule, scale or model; for a
judge known only by the name of its recorded log, another log) read the same
held-out draw before this identity first did: the judge was changed after its maker
saw the held-out figures, so they overstate it. The same identity read again is not
flagged (its figures are the ones already seen). A fresh draw (``metaeval split
--redraw``) starts anew.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from metaeval.audit.judge_decision import JudgeAudit
from metaeval.audit.measured_set import Chosen, HeldOutRead, MeasuredSet, SetChoice
from metaeval.loaders.judge_items import JudgeItems, PairItem, PointItem
from metaeval.loaders.ledger import (
    LedgerJudge,
    LedgerRecord,
    append_record,
    ledger_path,
    read_ledger,
)
from metaeval.loaders.recorded_verdicts import Recorded
from metaeval.loaders.splits import Split, item_label


def item_sets(items: JudgeItems) -> tuple[set[str], set[str]]:
    """The ids of the judge items (probes aside: they are not split) and those of them
    a person labelled."""
    every: list[PointItem | PairItem] = [*items.pointwise, *items.pairwise]
    return {i.id for i in every}, {i.id for i in every if item_label(i) is not None}


def keep_items(items: JudgeItems, keep: frozenset[str] | None) -> JudgeItems:
    """``items`` with only the labelled items of ``keep`` (None: all). Unlabelled items
    and probe records stay: the split never holds them, and no agreement is read on
    them."""
    if keep is None:
        return items
    return replace(items,
                   pointwise=tuple(i for i in items.pointwise
                                   if i.id in keep or item_label(i) is None),
                   pairwise=tuple(i for i in items.pairwise
                                  if i.id in keep or item_label(i) is None))


def verdicts_digest(records: Iterable[Recorded], keep: frozenset[str] | None) -> str:
    """The recorded verdicts on the items of ``keep`` (None: all), digested in an order
    of their own: the same verdicts in any file order give the same digest."""
    rows = sorted([r.id, r.order.value, r.sample, r.variant.value, str(r.verdict), r.raw]
                  for r in records if keep is None or r.id in keep)
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:12]


def _kappa(audit: JudgeAudit) -> float | None:
    if audit.pointwise is not None:
        value = audit.pointwise.kappa.value
    elif audit.pairwise is not None and audit.pairwise.orders:
        value = min(o.kappa.value for o in audit.pairwise.orders)
    else:
        return None
    return round(value, 4) if math.isfinite(value) else None


def record_read(chosen: Chosen, audit: JudgeAudit, now: datetime) -> MeasuredSet:
    """For a held-out audit: the ledger read, the read judged, and appended; returns
    the measured set with the read. Any other set is returned as it is. Raises
    InputError for a bad ledger line, OutputError when it cannot be appended."""
    measured = audit.measured or chosen.measured
    if measured.name is not SetChoice.HELD_OUT or chosen.split is None or chosen.path is None:
        return measured
    read = judge_read(chosen.split, chosen.path, audit)
    j = audit.judge
    append_record(Path(read.ledger), LedgerRecord(
        now.isoformat(timespec="seconds"), read.draw, chosen.split.draw,
        LedgerJudge(j.name, j.version, j.model, j.prompt_hash,
                    j.temperature if audit.temperature_known else None, j.endpoint, j.scale,
                    measured.log),
        audit.verdict.value, audit.counts.labelled, _kappa(audit), read.tuned_after_read))
    return replace(measured, read=read)


def judge_read(split: Split, split_file: Path, audit: JudgeAudit) -> HeldOutRead:
    """What the ledger beside ``split_file`` says of ``audit``'s read of the held-out
    set of ``split`` (see the module docstring)."""
    ledger = ledger_path(split_file)
    draw = split.held_out_digest
    name, version = audit.judge.name, audit.judge.version
    measured_log = "" if audit.measured is None else audit.measured.log
    same = [r for r in read_ledger(ledger) if r.draw == draw and r.judge.name == name]
    key = (version, measured_log)
    # Only the reads before this identity's first read count: those after it came
    # later, and this identity's figures were seen before them.
    first = next((k for k, r in enumerate(same) if r.judge.key == key), len(same))
    reads = sum(r.judge.key == key for r in same)
    return HeldOutRead(str(ledger), draw, tuple(same[:first]), reads)
