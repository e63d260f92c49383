"""Which set an audit or a meta-eval measured: the golden set, the held-out set, or all
the items, chosen by ``--set`` or by default (golden when a split file lies beside the
items, else all), and what the split and the files disagree on.

Every report names the set it measured (``MeasuredSet.said``, ``document``), so a
figure read on the golden set, where the rubric was tuned, is never taken for a
held-out one. The choice is made on ids alone; nothing here reads an item's text.

Two disagreements are said, never dropped silently:

- **not in the split**: a labelled item (or a meta-set run) the split does not name,
  mostly one labelled since the split was drawn. Left out of the golden and the
  held-out sets (it is in neither), measured with ``--set all``, and the pool
  ``metaeval split --redraw`` draws a fresh held-out set from.
- **missing**: an id the chosen set names that no file holds (deleted, or renamed).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import InputError
from metaeval.loaders.ledger import LedgerRecord
from metaeval.loaders.splits import SUFFIX, Split, read_split, split_beside

SHOWN_IDS = 10
"""How many ids of a disagreement a report names before saying how many more."""


class SetChoice(Enum):
    """``--set``: which items are measured."""

    GOLDEN = "golden"
    """The items tuned on: the split's golden ids."""
    HELD_OUT = "held-out"
    """The items read once to decide; a judge-audit read is recorded in the ledger."""
    ALL = "all"
    """Every item in the files, split or not."""


@dataclass(frozen=True, slots=True)
class HeldOutRead:
    """A judge-audit of the held-out set, as the ledger saw it."""

    ledger: str
    """The ledger file the read was appended to."""
    draw: str
    """The held-out set read (``Split.held_out_digest``)."""
    earlier: tuple[LedgerRecord, ...] = ()
    """Earlier reads of this draw by the same judge name with another identity: the
    judge was changed after it saw the held-out figures."""
    reads: int = 0
    """Earlier reads of this draw by exactly this identity (reading again tells nothing
    new, and is not flagged)."""

    @property
    def tuned_after_read(self) -> bool:
        return bool(self.earlier)

    def said(self) -> str:
        if not self.earlier:
            again = (f"; read {self.reads} time(s) before by this same identity"
                     if self.reads else "")
            return f"held-out read recorded in {self.ledger}{again}"
        first = self.earlier[0]
        return (f"tuned after a held-out read: {first.judge.describe()} read this held-out "
                f"set at {first.time} ({first.source}), and this is another identity (or "
                f"another recorded log) of the judge; the figures overstate it. Recorded "
                f"in {self.ledger}; draw a fresh held-out set (metaeval split --redraw) "
                "and audit once on it")

    def document(self) -> JsonObject:
        earlier: list[JsonValue] = [{"time": r.time, "judge_version": r.judge.version,
                                     "log": r.judge.log or None, "at": r.source}
                                    for r in self.earlier]
        return {"ledger": self.ledger, "draw": self.draw,
                "tuned_after_read": self.tuned_after_read, "earlier": earlier,
                "same_identity_reads": self.reads}


@dataclass(frozen=True, slots=True)
class MeasuredSet:
    """The set measured, where the choice came from, and what was left out."""

    name: SetChoice
    chosen_by: str
    """``--set``, or why the default is what it is."""
    split: str = ""
    """The split file; empty when none was found."""
    seed: int | None = None
    draw: int | None = None
    measured: int = 0
    """Items (or runs) of the set found in the files."""
    size: int = 0
    """Ids the split puts in the set (0 for ``all``)."""
    not_in_split: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    read: HeldOutRead | None = None
    """For a judge-audit of the held-out set: the ledger's view of the read."""
    log: str = ""
    """A recorded judge's verdicts on the set, digested (``held_out.verdicts_digest``):
    a judge metaeval knows only by name is also what its log says, so another log
    under the same name is another judge. Empty for a live judge."""

    @property
    def tuned_after_read(self) -> bool:
        return self.read is not None and self.read.tuned_after_read

    def said(self, what: str = "item") -> str:
        """One line for every renderer: which set, from which split, how many."""
        where = (f"split {self.split}, seed {self.seed}, draw {self.draw}" if self.split
                 else "no split file")
        count = (f"{self.measured} of its {self.size} {what}s found" if self.name is not
                 SetChoice.ALL else f"every {what} in the files")
        return f"set: {self.name.value} ({count}; {where}; {self.chosen_by})"

    def notes(self, what: str = "item") -> list[str]:
        """What the split and the files disagree on, and the held-out read."""
        out = []
        if self.not_in_split:
            out.append(f"{len(self.not_in_split)} labelled {what}(s) not in the split, left "
                       f"out (labelled since the split? metaeval split --redraw draws from "
                       f"them; --set all measures them): {_ids(self.not_in_split)}")
        if self.missing:
            out.append(f"{len(self.missing)} {what}(s) of the {self.name.value} set not in "
                       f"the files: {_ids(self.missing)}")
        if self.read is not None:
            out.append(self.read.said())
        return out

    def document(self) -> JsonObject:
        return {"name": self.name.value, "chosen_by": self.chosen_by,
                "split": self.split or None, "seed": self.seed, "draw": self.draw,
                "measured": self.measured, "size": self.size,
                "not_in_split": {"count": len(self.not_in_split),
                                 "ids": list[JsonValue](self.not_in_split)},
                "missing": {"count": len(self.missing), "ids": list[JsonValue](self.missing)},
                "held_out_read": None if self.read is None else self.read.document(),
                "log": self.log or None,
                "tuned_after_read": self.tuned_after_read}


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:SHOWN_IDS])
    return shown + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")


@dataclass(frozen=True, slots=True)
class Chosen:
    """The ids to measure (None: all of them) and how the set is said."""

    keep: frozenset[str] | None
    measured: MeasuredSet
    split: Split | None = None
    path: Path | None = None


@dataclass(frozen=True, slots=True)
class Opened:
    """The set asked for and its split, before the items are counted."""

    choice: SetChoice
    chosen_by: str
    split: Split | None = None
    path: Path | None = None

    @property
    def keep(self) -> frozenset[str] | None:
        """The ids of the set; None for ``all``."""
        if self.split is None or self.choice is SetChoice.ALL:
            return None
        return self.split.golden if self.choice is SetChoice.GOLDEN else self.split.held_out

    def knows(self, item_id: str) -> bool:
        """Whether the split names ``item_id`` (in either set)."""
        return self.split is None or (item_id in self.split.golden
                                      or item_id in self.split.held_out)


def open_set(choice: SetChoice | None, paths: Sequence[Path]) -> Opened:
    """The set of ``--set`` (None: golden when a split lies beside ``paths``, else all)
    and its split. Raises InputError when a set of a split is asked for and there is
    no split, or the split file is bad."""
    path = split_beside(paths)
    if choice is None:
        choice = SetChoice.GOLDEN if path is not None else SetChoice.ALL
        chosen_by = ("the default: a split lies beside the items" if path is not None
                     else "the default: no split beside the items")
    else:
        chosen_by = "--set"
    if path is None:
        if choice is not SetChoice.ALL:
            looked = ", ".join(str(p.with_name(p.stem + SUFFIX)) if not p.is_dir()
                               else f"{p}/*{SUFFIX}" for p in paths)
            raise InputError(f"--set {choice.value}: no split file beside the items (looked "
                             f"for {looked}); draw one with metaeval split ITEMS, or use "
                             "--set all")
        return Opened(choice, chosen_by)
    return Opened(choice, chosen_by, read_split(path), path)


def measure_set(opened: Opened, ids: Collection[str], labelled: Collection[str]) -> Chosen:
    """The set of ``opened`` among the ``ids`` the files hold, of which ``labelled``
    carry a human label (those the split does not name are said)."""
    split, keep = opened.split, opened.keep
    common = (opened.choice, opened.chosen_by, "" if opened.path is None else str(opened.path),
              None if split is None else split.seed, None if split is None else split.draw)
    if split is None or keep is None:
        return Chosen(None, MeasuredSet(*common, measured=len(ids)), split, opened.path)
    present = frozenset(ids)
    kept = keep & present
    outside = sorted(i for i in labelled if not opened.knows(i))
    return Chosen(kept, MeasuredSet(*common, len(kept), len(keep), tuple(outside),
                                    tuple(sorted(keep - present))), split, opened.path)


def choose_set(choice: SetChoice | None, paths: Sequence[Path], ids: Collection[str],
               labelled: Collection[str]) -> Chosen:
    """``measure_set(open_set(choice, paths), ids, labelled)``."""
    return measure_set(open_set(choice, paths), ids, labelled)
