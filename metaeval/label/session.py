"""What ``metaeval label`` loads before it serves: the runs (meta-set ``*.jsonl``,
with the project's suite applied) and judge items (``*.ndjson``) named, the
labels file, and a recorded judge's verdicts, made into the ordered entries.

Every bad line of a run or item file, and of the labels file, is an
``InputError`` naming file:line before the server starts: a page that quietly
left a run out would have it never labelled. Probe records are not items a person
labels and are left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from metaeval.config import Config
from metaeval.contract import JsonValue
from metaeval.errors import InputError
from metaeval.judges.base import Mode
from metaeval.label.next_for import OpenAudit, ordered_for
from metaeval.label.queue import Entry, item_entry, ordered, run_entries
from metaeval.label.store import ITEM, RUN, LabelStore, key_of, read_rows
from metaeval.loaders.judge_items import (
    ITEM_SUFFIX,
    Order,
    PairItem,
    PointItem,
    Variant,
    load_judge_items,
)
from metaeval.loaders.meta_set import data_files, load_meta_sets
from metaeval.loaders.recorded_verdicts import item_kinds, load_recorded
from metaeval.loaders.suites import apply_suite, suite_names
from metaeval.untrusted_json import LoadError

MAX_ANNOTATOR = 100


def other_labels(paths: Sequence[Path], own: Path) -> tuple[Path, ...]:
    """``--compare-with``: other annotators' labels files (a folder: its ``*.jsonl``),
    never ``own``; each read and checked now, so a bad row stops the session before
    it serves, as a bad line of its own file does."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.glob("*.jsonl") if p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            raise InputError(f"--compare-with {path}: no such file or folder; expected another "
                             "annotator's labels file (JSON Lines) or a folder of them")
    others = tuple(p for p in dict.fromkeys(found)
                   if not (own.exists() and p.samefile(own)))
    for path in others:
        read_rows(path)
    return others


def checked_annotator(name: str) -> str:
    """``--annotator``: a name of 1-100 printable characters, as written."""
    if not name.strip() or len(name) > MAX_ANNOTATOR or not name.isprintable():
        raise InputError(f"--annotator: got {name!r}; expected a name of 1 to {MAX_ANNOTATOR} "
                         "printable characters")
    return name


def _fail(errors: Sequence[LoadError]) -> InputError:
    return InputError("\n".join(str(e) for e in errors) + (
        f"\n{len(errors)} bad line(s); fix them (metaeval validate names the same) and "
        "start again: a line left out would never be labelled"))


def _split(paths: Sequence[Path]) -> tuple[list[Path], list[Path], list[LoadError]]:
    runs, items, errors = [], [], []
    for path in paths:
        if path.is_dir():
            found_runs, _ = data_files([path], ".jsonl")
            found_items, _ = data_files([path], ITEM_SUFFIX)
            if not found_runs and not found_items:
                errors.append(LoadError(str(path), 0, "", "no .jsonl runs or .ndjson items "
                                                          "in this directory"))
            runs += found_runs
            items += found_items
        elif not path.is_file():
            errors.append(LoadError(str(path), 0, "", "no such file or directory"))
        elif path.suffix == ITEM_SUFFIX:
            items.append(path)
        elif path.suffix == ".jsonl":
            runs.append(path)
        else:
            errors.append(LoadError(str(path), 0, "", f"got a {path.suffix or 'suffixless'} "
                                    "file; expected runs (.jsonl) or judge items (.ndjson)"))
    return runs, items, errors


def _judged(recorded: Path | None, kinds: Mapping[str, Mode]
            ) -> dict[str, dict[str, JsonValue]]:
    """item -> order -> the recorded judge's first sample on the item itself, as a label."""
    if recorded is None:
        return {}
    found, errors = load_recorded(recorded, kinds=kinds)
    if errors:
        raise _fail(errors)
    judged: dict[str, dict[str, JsonValue]] = {}
    for r in found:
        if r.variant is not Variant.ORIGINAL or r.sample != 0 or r.verdict is None:
            continue
        verdict: JsonValue = (("pass" if r.verdict else "fail") if isinstance(r.verdict, bool)
                              else r.verdict if isinstance(r.verdict, str) else None)
        if verdict is not None:
            judged.setdefault(r.id, {})[Order(r.order).value] = verdict
    return judged


def load_entries(paths: Sequence[Path], annotator: str, store: LabelStore, config: Config,
                 recorded: Path | None = None, next_for: OpenAudit | None = None
                 ) -> tuple[Entry, ...]:
    """The entries of a session, near misses first; with ``next_for`` (an inconclusive
    audit), the items that would move its open decision first (``next_for``)."""
    run_files, item_files, errors = _split(paths)
    if errors:
        raise _fail(errors)
    suite = config.meta_eval.suite
    loaded = load_meta_sets(run_files, config.allowed_modules, config.judges,
                            suite_names(suite)) if run_files else None
    runs = list(loaded.runs) if loaded is not None else []
    errors = list(loaded.errors) if loaded is not None else []
    if runs:
        runs, suite_errors = apply_suite(runs, suite, config.allowed_modules, config.judges)
        errors += suite_errors
    items = load_judge_items(item_files) if item_files else None
    if items is not None:
        errors += items.errors
    if errors:
        raise _fail(errors)
    if not runs and (items is None or not (items.pairwise or items.pointwise)):
        raise InputError(f"nothing to label in {', '.join(map(str, paths))}; expected runs "
                         "(.jsonl meta-set files) or judge items (.ndjson)")
    labelled: dict[str, dict[str, set[str]]] = {}
    item_labels: dict[str, set[str]] = {}
    for row in store.rows():
        key = key_of(row)
        if row["label"] == "unsure":
            continue
        if key.kind == RUN:
            labelled.setdefault(key.target, {}).setdefault(key.check, set()).add(
                str(row["label"]))
        elif key.kind == ITEM:
            item_labels.setdefault(key.target, set()).add(str(row["label"]))
    if recorded is not None and (items is None or not (items.pairwise or items.pointwise)):
        raise InputError(f"--recorded {recorded}: a judge's verdicts on judge items, but no "
                         "judge items (.ndjson) are being labelled: nothing to read it for")
    entries = run_entries(runs, labelled, config.allowed_modules, config.judges)
    if items is not None:
        judged = _judged(recorded, item_kinds(items))
        chosen: list[PairItem | PointItem] = [*items.pairwise, *items.pointwise]
        for item in chosen:
            entries.append(item_entry(item, annotator, judged.get(item.id, {}),
                                      item_labels.get(item.id, set())))
    if next_for is not None:
        return tuple(ordered_for(entries, annotator, next_for))
    return tuple(ordered(entries, annotator))
