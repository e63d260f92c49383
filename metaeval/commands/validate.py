"""``metaeval validate``: load meta-set, judge-item and recorded-verdict files and
name every bad line.

Loads the files given (default: the configured meta-sets), the meta-set lines
through the checks they declare, the ``*.ndjson`` judge items beside them (and
every ``.jsonl`` file whose first record is a judge item, with a warning to
rename it), and recorded verdicts (a judge's log for ``judge-audit
--recorded``): the files named by ``--recorded``, and every ``.jsonl`` file
whose first record is a recorded verdict (``{"id", "verdict", ...}`` and
nothing a meta-set run has). Returns what loaded, counted, with every error.
Never prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.commands.import_runs import imported_runs
from metaeval.commands.validate_labels import check_labels
from metaeval.config import Config
from metaeval.errors import ExitCode, shown
from metaeval.judges.base import DEFAULT_SCALE, Scale
from metaeval.judges.scales import configured_audit, declared_scale
from metaeval.loaders.judge_items import ITEM_SUFFIX, JudgeItems, load_judge_items
from metaeval.loaders.meta_set import MetaSet, load_meta_sets
from metaeval.loaders.recorded_verdicts import RECORDED_FIELDS, item_kinds, load_recorded
from metaeval.loaders.suites import apply_suite, suite_names
from metaeval.untrusted_json import LoadError, read_jsonl

META_SUFFIX = ".jsonl"


@dataclass(frozen=True, slots=True)
class Validated:
    """What ``validate`` loaded: meta-set runs, judge items and probes, recorded
    verdicts, with every file read and every error."""

    meta: MetaSet
    """The runs; its ``errors`` and ``files`` are those of every kind of file."""
    items: int = 0
    """Judge items with a human label (pointwise and pairwise)."""
    probes: int = 0
    """Probe records (length, injection, pairwise length and injection)."""
    verdicts: int = 0
    """Recorded verdicts (one per line of a judge's log)."""
    recorded: tuple[str, ...] = ()
    """The files read as recorded verdicts."""
    labels: int = 0
    """Rows of labels files (runs' and judge items')."""
    annotators: int = 0
    """Annotators of those rows."""
    label_files: tuple[str, ...] = ()
    """The files read as labels files."""

    @property
    def errors(self) -> tuple[LoadError, ...]:
        return self.meta.errors


def _first_kind(path: Path) -> str:
    """What the first record of a ``.jsonl`` file is: ``recorded`` (a recorded verdict:
    an object with a ``verdict`` and only the fields a recorded verdict has), ``item``
    (a judge item: a ``prompt``, and none of a run's ``task``, ``trajectory`` or
    ``messages``), else ``meta`` (a meta-set run, or a bad line it will name)."""
    for record in read_jsonl(path, []):
        value = record.value
        if not isinstance(value, dict):
            return "meta"
        if "verdict" in value and set(value) <= RECORDED_FIELDS:
            return "recorded"
        if "prompt" in value and not {"task", "trajectory", "messages"} & set(value):
            return "item"
        if "annotator" in value and {"run_id", "item_id"} & set(value):
            return "labels"
        return "meta"
    return "meta"


def looks_recorded(path: Path) -> bool:
    """Whether the first record of ``path`` is a recorded verdict: an object with a
    ``verdict`` and only the fields a recorded verdict has (a meta-set run has
    ``task``, ``trajectory`` or ``messages`` and no ``verdict``)."""
    return _first_kind(path) == "recorded"


def _split(targets: Sequence[Path], recorded: Sequence[Path], labels: Sequence[Path] = ()
           ) -> tuple[list[Path], list[Path], list[Path], list[Path]]:
    """(what is read as meta-sets and ``*.ndjson`` judge items, what is read as recorded
    verdicts, the ``.jsonl`` files read as judge items, labels files): folders are
    opened so a log, items or labels inside one are not read as a meta-set."""
    meta: list[Path] = []
    logs: list[Path] = list(recorded)
    items: list[Path] = []
    found_labels: list[Path] = list(labels)
    for target in targets:
        if target in logs or target in found_labels:
            continue
        if target.suffix.lower() == ".csv":
            found_labels.append(target)
            continue
        if target.is_dir():
            found = sorted(target.rglob(f"*{META_SUFFIX}"))
            kinds = {f: _first_kind(f) for f in found}  # each file's first line, once
            if any(kind != "meta" for kind in kinds.values()):
                meta.extend(f for f in found if kinds[f] == "meta")
                logs.extend(f for f in found if kinds[f] == "recorded")
                items.extend(f for f in found if kinds[f] == "item")
                found_labels.extend(f for f in found if kinds[f] == "labels")
                meta.extend(sorted(target.rglob(f"*{ITEM_SUFFIX}")))
                continue
        elif target.is_file() and target.suffix == META_SUFFIX:
            kind = _first_kind(target)
            if kind != "meta":
                {"recorded": logs, "item": items, "labels": found_labels}[kind].append(target)
                continue
        meta.append(target)
    return meta, logs, items, found_labels


def judge_items_under(paths: Iterable[Path], labels: tuple[int, int] = (1, 5),
                      classes: tuple[str, ...] = (), also: Sequence[Path] = ()) -> JudgeItems:
    """The judge items of the ``*.ndjson`` files given or found in folders under
    ``paths``, and of the files ``also`` names (``.jsonl`` files whose first record is
    a judge item); none: nothing loaded. ``classes``: the declared label classes."""
    paths = list(paths)
    files = [p for p in paths if p.is_file() and p.suffix == ITEM_SUFFIX]
    files += [f for p in paths if p.is_dir() for f in sorted(p.rglob(f"*{ITEM_SUFFIX}"))]
    files += also
    return load_judge_items(files, labels, classes) if files else JudgeItems()


def with_judge_items(paths: Iterable[Path], meta: MetaSet,
                     labels: tuple[int, int] = (1, 5), classes: tuple[str, ...] = (),
                     items: JudgeItems | None = None
                     ) -> MetaSet:
    """``meta`` with the errors and files of the judge items under ``paths`` added
    (``*.ndjson`` files given or found in folders), for ``metaeval validate``;
    ``labels``: the range of integer labels (``[tool.metaeval.judge_audit]
    label_scale``); ``classes``: its ``label_classes``; ``items``: those
    ``judge_items_under`` already loaded from them."""
    paths = list(paths)
    items = items if items is not None else judge_items_under(paths, labels, classes)
    if not items.files and not items.errors:
        return meta
    # A folder of judge items alone is not missing its meta-set files.
    holding = {str(p) for p in paths if p.is_dir() and any(p.rglob(f"*{ITEM_SUFFIX}"))}
    errors = tuple(e for e in meta.errors if not (e.line == 0 and e.path in holding))
    return MetaSet(meta.runs, errors + items.errors, meta.files + items.files, meta.warnings)


@dataclass(frozen=True, slots=True)
class ValidateRequest:
    """What ``validate`` is asked to check besides its paths."""

    recorded: tuple[Path, ...] = ()
    """Judge logs to check as recorded verdicts."""
    scale_text: str | None = None
    """``--scale``: the recorded verdicts' scale."""
    labels: tuple[Path, ...] = ()
    """Labels files (``--labels``), besides those found among the paths."""
    runs: tuple[tuple[str, Path], ...] = ()
    """``--runs FORMAT:PATH``: a harness's runs the labels are joined with."""


def validate(paths: tuple[Path, ...], config: Config,
             request: ValidateRequest = ValidateRequest()) -> Validated:
    """Everything under ``paths`` (default: the configured meta-sets, unless only
    recorded verdicts, labels or runs are given), with every error. Recorded verdicts
    are checked on the scale ``--scale`` gives, else the config's ``scale``, else
    1-5; each verdict as its item's when the items are among ``paths``, and an id no
    loaded item has is an error then. Labels files are checked row by row and joined
    with the runs and items loaded (``validate_labels``)."""
    recorded, scale_text = request.recorded, request.scale_text
    given = recorded or request.labels or request.runs
    targets = list(paths) or ([] if given else config.paths(config.meta_sets))
    settings = configured_audit(config.judge_audit)
    # Integer judge-item labels on the project's declared label scale, as judge-audit reads them.
    labels, classes = settings.label_scale or (1, 5), settings.label_classes
    meta_paths, logs, item_files, label_files = _split(targets, recorded, request.labels)
    items = judge_items_under(meta_paths, labels, classes, item_files)
    runs = [t for t in meta_paths if t.suffix != ITEM_SUFFIX]
    suite = config.meta_eval.suite
    meta = load_meta_sets(runs, config.allowed_modules, config.judges,
                          suite_names(suite)) if runs else MetaSet((), (), ())
    if request.runs:
        imported_errors: list[LoadError] = []
        imported = [run for fmt, path in request.runs for run in imported_runs(
            fmt, path, imported_errors, config.allowed_modules, config.judges,
            suite_names(suite), run_map=config.meta_eval.run_map)]
        meta = MetaSet((*meta.runs, *imported), (*meta.errors, *imported_errors),
                       (*meta.files, *(str(p) for _, p in request.runs)), meta.warnings)
    if suite:
        # A run that cannot take a suite check it is selected for is as bad as a bad
        # line; a harness's runs take the suite as meta-eval --runs gives it to them.
        applied, bad = apply_suite(meta.runs, suite, config.allowed_modules, config.judges)
        meta = MetaSet(tuple(applied), (*meta.errors, *bad), meta.files, meta.warnings)
    meta = with_judge_items(meta_paths, meta, labels, classes, items)
    checked = check_labels(label_files, meta.runs if runs or request.runs else None,
                           items if items.count else None) if label_files else None
    scale = settings.scale or DEFAULT_SCALE
    if scale_text is not None:
        scale = declared_scale(scale_text, None, scale_where="--scale", pass_where="--scale")
    verdicts, errors = _recorded(logs, scale, items, classes)
    labelled = len(items.pointwise) + len(items.pairwise)
    # Loaded as items all the same; but elsewhere the name decides what a file is.
    renamed = tuple(LoadError(str(f), 0, "", f"judge items in a {META_SUFFIX} file: "
                              f"meta-eval reads every {META_SUFFIX} file under the meta-sets "
                              f"as runs, and judge-audit's default reads *{ITEM_SUFFIX}; "
                              f"expected {f.stem}{ITEM_SUFFIX}") for f in item_files)
    label_errors = checked.errors if checked else ()
    return Validated(MetaSet(meta.runs, meta.errors + errors + label_errors,
                             meta.files + tuple(str(p) for p in (*logs, *label_files)),
                             meta.warnings + renamed + (checked.torn if checked else ())),
                     labelled, len(items.probes), verdicts, tuple(str(p) for p in logs),
                     checked.rows if checked else 0, checked.annotators if checked else 0,
                     tuple(str(p) for p in label_files))


def _recorded(logs: Sequence[Path], scale: Scale, items: JudgeItems,
              classes: tuple[str, ...] = ()) -> tuple[int, tuple[LoadError, ...]]:
    kinds = item_kinds(items) if items.count else None
    count, errors = 0, list[LoadError]()
    for log in logs:
        found, bad = load_recorded(log, scale, kinds, classes)
        errors.extend(bad)
        for record in found:
            if kinds is not None and record.id not in kinds:
                path, _, line = record.source.rpartition(":")
                errors.append(LoadError(path, int(line) if line.isdigit() else 0, "id",
                                        f"got {shown(record.id)}; expected the id of a loaded "
                                        "judge item"))
            else:
                count += 1
    return count, tuple(sorted(errors, key=lambda e: (e.path, e.line)))


def validate_code(loaded: Validated) -> ExitCode:
    """0 when every line loads, 2 when any line (or file) is bad."""
    return ExitCode.BAD_INPUT if loaded.errors else ExitCode.OK

