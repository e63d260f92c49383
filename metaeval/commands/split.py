"""``metaeval split``: draw the golden and held-out sets of labelled judge items or
meta-set runs once (``metaeval.loaders.splits``), and write the split file.

Every file named is read whole and must load: a bad line is refused, never left
out of the split. Items with no human label, and probe records, are not split
(they are counted and said). A split file that exists is never replaced: a split
is drawn once. Reads the items, writes the split file; prints nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.config import Config
from metaeval.errors import InputError
from metaeval.files import write_atomic
from metaeval.loaders.judge_items import ITEM_SUFFIX, PairItem, PointItem, load_judge_items
from metaeval.loaders.meta_set import load_meta_sets
from metaeval.loaders.splits import NONE, SUFFIX, Split, Unit, draw, split_text

NO_CONSENSUS = "(no consensus)"


@dataclass(frozen=True, slots=True)
class SplitDone:
    """What was split and where the split went."""

    split: Split
    path: Path
    strata: int
    unlabelled: int
    """Items or runs with no human label: not split."""


def _item_label(item: PairItem | PointItem) -> str | None:
    """The stratum's label: the consensus; ``(no consensus)`` when annotators labelled
    the item without agreeing (still labelled: the alternative annotator test reads
    each of their labels); None when no person labelled it."""
    if isinstance(item, PairItem):
        if item.consensus:
            return item.label
    else:
        for value in (item.verdict, item.score, item.label_class):
            if value is not None:
                return str(value)
    return NO_CONSENSUS if item.annotations else None


def _units(paths: Sequence[Path], config: Config) -> tuple[list[Unit], int]:
    items = [p for p in paths if p.suffix == ITEM_SUFFIX]
    runs = [p for p in paths if p.suffix != ITEM_SUFFIX]
    units: list[Unit] = []
    unlabelled = 0
    errors: list[str] = []
    if items:
        loaded = load_judge_items(items)
        errors += map(str, loaded.errors)
        chosen: list[PairItem | PointItem] = [*loaded.pointwise, *loaded.pairwise]
        for item in chosen:
            label = _item_label(item)
            if label is None:
                unlabelled += 1
                continue
            units.append(Unit(item.id, item.category or NONE, label))
    if runs:
        meta = load_meta_sets(runs, config.allowed_modules, config.judges)
        errors += map(str, meta.errors)
        for run in meta.runs:
            if run.label.verdict is None:
                unlabelled += 1
                continue
            units.append(Unit(run.id, run.category or NONE, run.label.verdict.value))
    if errors:
        raise InputError("\n".join([*errors, f"{len(errors)} bad line(s): a split leaves "
                                    "nothing out; fix them (metaeval validate names the same)"]))
    return units, unlabelled


def split_path(paths: Sequence[Path], output: Path | None) -> Path:
    """``-o``, else ``<items>.split.json`` beside the one file given."""
    if output is not None:
        return output
    if len(paths) != 1 or paths[0].is_dir():
        raise InputError("-o: expected the split file to write when more than one file is "
                         "split")
    return paths[0].with_name(paths[0].stem + SUFFIX)


def split(paths: Sequence[Path], config: Config, *, held_out: float, seed: int,
          output: Path | None = None) -> SplitDone:
    """Draw and write the split of ``paths`` (see the module docstring)."""
    if not paths:
        raise InputError("expected the judge items (.ndjson) or meta-set runs (.jsonl) to split")
    for path in paths:
        if not path.is_file():
            raise InputError(f"{path}: no such file; expected judge items (.ndjson) or "
                             "meta-set runs (.jsonl)")
    out = split_path(paths, output)
    if out.exists():
        raise InputError(f"{out}: a split exists; a split is drawn once, so that the held-out "
                         "set is never tuned on (delete the file only to start the sets anew)")
    units, unlabelled = _units(paths, config)
    if not units:
        raise InputError(f"no labelled item or run in {', '.join(map(str, paths))}: nothing "
                         "to split; label some first")
    drawn = draw(units, held_out, seed, [p.name for p in paths])
    write_atomic(out, split_text(drawn), follow_links=False)
    return SplitDone(drawn, out, len({(u.category, u.label) for u in units}), unlabelled)
