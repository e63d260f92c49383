"""``metaeval split``: draw the golden and held-out sets of labelled judge items or
meta-set runs once (``metaeval.loaders.splits``), and write the split file.

Every file named is read whole and must load: a bad line is refused, never left
out of the split. Items with no human label, and probe records, are not split
(they are counted and said). A split file that exists is never replaced: a split
is drawn once. ``redraw`` is the one exception: a fresh held-out set drawn from the
items labelled since the last draw, the old held-out items moved to golden
(``metaeval.loaders.splits.redraw``). Reads the items, writes the split file; prints
nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.config import Config
from metaeval.errors import InputError
from metaeval.files import write_atomic
from metaeval.loaders.item_labels import join_item_labels, read_item_labels
from metaeval.loaders.judge_items import ITEM_SUFFIX, PairItem, PointItem, load_judge_items
from metaeval.loaders.meta_set import load_meta_sets
from metaeval.loaders.splits import (
    NONE,
    SUFFIX,
    Split,
    Unit,
    draw,
    item_label,
    read_split,
    redraw,
    split_text,
)


@dataclass(frozen=True, slots=True)
class SplitDone:
    """What was split and where the split went."""

    split: Split
    path: Path
    strata: int
    unlabelled: int
    """Items or runs with no human label: not split."""
    new: int | None = None
    """With ``redraw``: the labelled items the old split did not name; else None."""


def _units(paths: Sequence[Path], config: Config, labels: Sequence[Path] = ()
           ) -> tuple[list[Unit], int]:
    items = [p for p in paths if p.suffix == ITEM_SUFFIX]
    runs = [p for p in paths if p.suffix != ITEM_SUFFIX]
    units: list[Unit] = []
    unlabelled = 0
    errors: list[str] = []
    if labels and not items:
        raise InputError("--labels: the item rows of labels files join judge items "
                         f"(*{ITEM_SUFFIX}), and none was given; label meta-set runs in the "
                         "runs themselves to split them")
    if items:
        loaded = load_judge_items(items)
        errors += map(str, loaded.errors)
        if labels:  # labels kept apart (metaeval label) count as the items' own
            rows, row_errors = read_item_labels(labels)
            loaded, join_errors = join_item_labels(loaded, rows)
            errors += map(str, sorted((*row_errors, *join_errors),
                                      key=lambda e: (e.path, e.line)))
        chosen: list[PairItem | PointItem] = [*loaded.pointwise, *loaded.pairwise]
        for item in chosen:
            label = item_label(item)
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


def split(paths: Sequence[Path], config: Config, *, held_out: float | None, seed: int,
          output: Path | None = None, again: bool = False,
          labels: Sequence[Path] = ()) -> SplitDone:
    """Draw and write the split of ``paths`` (see the module docstring); ``again``:
    redraw the held-out set of the split that exists. ``held_out`` None: 0.2 for a
    first draw, the split's own fraction for a redraw. ``labels``: labels files whose
    item rows label the judge items, as ``judge-audit --labels`` joins them."""
    if not paths:
        raise InputError("expected the judge items (.ndjson) or meta-set runs (.jsonl) to split")
    for path in paths:
        if not path.is_file():
            raise InputError(f"{path}: no such file; expected judge items (.ndjson) or "
                             "meta-set runs (.jsonl)")
    out = split_path(paths, output)
    if again:
        return _redraw(paths, config, out, held_out, labels)
    if out.exists():
        raise InputError(f"{out}: a split exists; a split is drawn once, so that the held-out "
                         "set is never tuned on (delete the file only to start the sets anew)")
    units, unlabelled = _units(paths, config, labels)
    if not units:
        raise InputError(f"no labelled item or run in {', '.join(map(str, paths))}: nothing "
                         "to split; label some first")
    drawn = draw(units, 0.2 if held_out is None else held_out, seed, [p.name for p in paths])
    write_atomic(out, split_text(drawn), follow_links=False)
    return SplitDone(drawn, out, len({(u.category, u.label) for u in units}), unlabelled)


def _redraw(paths: Sequence[Path], config: Config, out: Path, held_out: float | None,
            labels: Sequence[Path]) -> SplitDone:
    if not out.is_file():
        raise InputError(f"--redraw: {out}: no split to redraw; draw one first (metaeval "
                         "split without --redraw)")
    old = read_split(out)
    units, unlabelled = _units(paths, config, labels)
    fresh, new = redraw(old, units, old.held_out_fraction if held_out is None else held_out,
                        [p.name for p in paths])
    write_atomic(out, split_text(fresh), follow_links=False)
    return SplitDone(fresh, out, len({(u.category, u.label) for u in units}), unlabelled, new)
