"""``metaeval import FORMAT PATH...``: agent runs from a harness's files as meta-set lines.

Reads the files (a directory: its files of the format's suffixes) through the
format's importer, refuses a run id used twice, and returns the lines with every
error; a bad record is left out and named, the good ones are kept. With
``label_from`` a harness score becomes each run's label (a value the rule cannot
map is an error naming the run). Never prints, never writes: the command line
writes the lines, as ``ImportStream`` hands them over one at a time (an import
holds one record, or one open trace, at a time; never the file).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.config import NO_JUDGES, JudgesSection
from metaeval.contract import JsonObject
from metaeval.errors import ExitCode, InputError, shown
from metaeval.importers.runs import FORMATS, run_format, sniffed
from metaeval.importers.runs.common import BadRecord, ImportedRun, LabelRule, run_line
from metaeval.importers.runs.mapped import joined, map_line
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.loaders.meta_set import MetaRun, parse_run, reuse_warnings
from metaeval.suite_config import NO_MAP, RunMap
from metaeval.untrusted_json import FirstUse, LoadError

__all__ = ["AUTO", "ImportRequest", "ImportStream", "Imported", "import_code", "import_runs",
           "imported_runs", "picked_format", "runs_spec"]

AUTO = "auto"
"""The format name that asks for the format to be picked by sniffing the files."""


@dataclass(frozen=True, slots=True)
class ImportRequest:
    fmt: str
    paths: tuple[Path, ...]
    label_from: str | None = None
    run_map: RunMap = NO_MAP
    """The suite's ``map``: where each run's category, task, criteria and states are
    read from, and which field names a per-call record's conversation."""


@dataclass(frozen=True, slots=True)
class Imported:
    """The meta-set lines read, every error, and the files read."""

    lines: tuple[JsonObject, ...]
    errors: tuple[LoadError, ...]
    files: tuple[str, ...]
    sources: tuple[str, ...] = ()
    """Where each line's run was read (``file:line``, or ``file#record``), in order."""
    count: int | None = None
    """How many lines were read, when they were streamed out and not kept in ``lines``."""

    @property
    def runs(self) -> int:
        return len(self.lines) if self.count is None else self.count


def _files(paths: Sequence[Path], suffixes: tuple[str, ...], errors: list[LoadError]
           ) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in suffixes)
            if not found:
                errors.append(LoadError(str(path), 0, "", "no "
                                        f"{' or '.join(suffixes)} files in this directory"))
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            errors.append(LoadError(str(path), 0, "", "no such file or directory"))
    return files


def where(source: str) -> tuple[str, int, str]:
    """``file:line`` to its parts; a source naming a record (``file#samples[2]``)
    keeps its record in the field."""
    path, sep, line = source.rpartition(":")
    if sep and line.isdigit():
        return path, int(line), ""
    path, _, record = source.partition("#")
    return path, 0, record


def _in_file_order(errors: list[LoadError], files: list[Path]) -> tuple[LoadError, ...]:
    """The errors by file (as given) and line: the joining of per-call records reads
    one record ahead, so a reader's error can be met before the one of the line
    above it."""
    rank = {str(f): k for k, f in enumerate(files)}
    return tuple(sorted(errors, key=lambda e: (rank.get(e.path, -1), e.line)))


def import_runs(request: ImportRequest) -> Imported:
    errors: list[LoadError] = []
    files: list[Path] = []
    lines: list[JsonObject] = []
    sources: list[str] = []
    for line, source in _imported_lines(request, errors, files):
        lines.append(line)
        sources.append(source)
    return Imported(tuple(lines), _in_file_order(errors, files), tuple(str(f) for f in files),
                    tuple(sources))


class ImportStream:
    """``import_runs`` one line at a time: ``lines`` yields each meta-set line as it is
    read (the caller writes it and lets it go); ``result`` then has the errors, the
    files and how many lines there were, and no lines."""

    def __init__(self, request: ImportRequest) -> None:
        self._request = request
        self._errors: list[LoadError] = []
        self._files: list[Path] = []
        self._count = 0

    def lines(self) -> Iterator[JsonObject]:
        for line, _ in _imported_lines(self._request, self._errors, self._files):
            self._count += 1
            yield line

    def result(self) -> Imported:
        return Imported((), _in_file_order(self._errors, self._files),
                        tuple(str(f) for f in self._files), count=self._count)


def _imported_lines(request: ImportRequest, errors: list[LoadError], files: list[Path],
                    check: bool = True) -> Iterator[tuple[JsonObject, str]]:
    """Each run the importer reads, as a meta-set line and where it was read, one at a
    time (an importer holds one record, or one open trace, at a time); the files read
    are added to ``files``, bad records and repeated ids to ``errors``. ``check``:
    each line is read back as the meta-set reader reads it (``validate``), and one it
    refuses is an error, not a line written (a caller that reads it so itself passes
    False)."""
    unit = run_format(request.fmt)
    files.extend(_files(request.paths, unit.suffixes, errors))
    rule = LabelRule(request.label_from) if request.label_from else None
    ids = FirstUse()
    refused: list[tuple[ImportedRun, BadRecord]] = []

    def named() -> None:
        for run, bad in refused:
            path, line, record = where(run.source)
            errors.append(LoadError(path, line, ".".join(p for p in (record, bad.field) if p),
                                    bad.message))
        refused.clear()

    # A per-call format is read twice: first for where each conversation ends
    # (mapped.joined), its errors said by the second reading only.
    again = unit.read(files, []) if unit.per_call else None
    for run in joined(unit.read(files, errors), unit.per_call,
                      request.run_map.get("conversation_from"), refused, again):
        named()
        path, line, record = where(run.source)
        first = ids.earlier(run.id, run.source)
        if first is not None:
            errors.append(LoadError(path, line, ".".join(p for p in (record, "id") if p),
                                    f"got {shown(run.id)}; expected a run id not already used "
                                    f"(first at {first})"))
            continue
        try:
            written = map_line(run_line(run, rule), request.run_map)
        except BadRecord as bad:
            errors.append(LoadError(path, line, ".".join(p for p in (record, bad.field) if p),
                                    bad.message))
            continue
        problems = parse_run(written, run.source)[1] if check else []
        errors.extend(LoadError(path, line, ".".join(x for x in (record, p.field) if x),
                                f"{p.message} (in the meta-set line it would be)")
                      for p in problems)
        if not problems:
            yield written, run.source
    named()


def picked_format(paths: Sequence[Path], where: str = "FORMAT") -> str:
    """The one format that claims every file of ``paths`` (a directory: each of its
    files of a registered suffix), by sniffing their first bytes; an ``InputError``
    naming the file when none or several claim it, or two files differ."""
    suffixes = {s for unit in FORMATS.values() for s in unit.suffixes}
    picked: dict[str, Path] = {}
    for path in paths:
        files = (sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in suffixes)
                 if path.is_dir() else [path])
        for file in files:
            if not file.is_file():
                raise InputError(f"{file}: no such file")
            claims = [unit.name for unit in sniffed(file)]
            if len(claims) != 1:
                found = (f"{' and '.join(claims)} both read it" if claims
                         else "no format recognises its first bytes")
                raise InputError(f"{where} auto: {file}: {found}; expected a file of one of "
                                 f"{', '.join(sorted(FORMATS))} (name the format instead of "
                                 "auto)")
            picked.setdefault(claims[0], file)
    if len(picked) > 1:
        shown_files = "; ".join(f"{name}: {file}" for name, file in sorted(picked.items()))
        raise InputError(f"{where} auto: the files are of several formats ({shown_files}); "
                         "expected one format (import each on its own)")
    if not picked:
        raise InputError(f"{where} auto: no file of a known suffix in "
                         f"{', '.join(map(str, paths))}")
    return next(iter(picked))


def runs_spec(text: str, where: str = "--runs") -> tuple[str, Path]:
    """``FORMAT:PATH`` (``inspect:logs/``) to its format and path; ``auto:PATH`` picks
    the format by sniffing; an ``InputError`` naming ``where`` for an unknown format
    or no path."""
    fmt, sep, path = text.partition(":")
    if not sep or not path or (fmt not in FORMATS and fmt != AUTO):
        raise InputError(f"{where}: got {shown(text)}; expected FORMAT:PATH with FORMAT one "
                         f"of {', '.join(sorted(FORMATS))} or {AUTO} (inspect:logs/)")
    if fmt == AUTO:
        fmt = picked_format([Path(path)], where)
    return fmt, Path(path)


def imported_runs(fmt: str, path: Path, errors: list[LoadError],
                  allowed: AllowedModules = BUILTINS_ONLY, judges: JudgesSection = NO_JUDGES,
                  suite: Collection[str] = (), warnings: list[LoadError] | None = None,
                  run_map: RunMap = NO_MAP) -> Iterator[MetaRun]:
    """The runs of ``path`` in ``fmt`` as ``meta-eval --runs`` measures them: each
    imported line read as a meta-set line is (the same checks of code and judges), so
    ``--runs FORMAT:PATH`` and ``metaeval import`` then ``meta-eval`` agree, warnings
    included. Bad records and bad lines land in ``errors``, what loaded but deserves a
    look in ``warnings``; a repeated run id is refused. Streamed: a run is let go once
    the caller has graded it."""
    for line, source in _imported_lines(ImportRequest(fmt, (path,), run_map=run_map), errors,
                                        [], check=False):
        run, problems = parse_run(line, source, allowed, judges, suite)
        at, number, record = where(source)
        errors.extend(LoadError(at, number, ".".join(x for x in (record, p.field) if x),
                                p.message) for p in problems)
        if run is not None:
            if warnings is not None:
                warnings.extend(LoadError(at, number, ".".join(x for x in (record, field) if x),
                                          message) for field, message in reuse_warnings(run))
            yield run


def import_code(result: Imported) -> ExitCode:
    """0 when every record became a run; 2 when one is bad or none was read."""
    return ExitCode.BAD_INPUT if result.errors or not result.runs else ExitCode.OK
