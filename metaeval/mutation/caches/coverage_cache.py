"""The baseline's coverage map, kept between ``metaeval mutate`` runs, so that a
run traces only the tests whose code changed.

The fork runner's baseline traces every test to learn which tests run which
lines; on a real harness that is most of a pull-request run that mutates two
lines. A test's record stays valid while its own file, every ``conftest.py``,
the data files it read (``child.reads``) and the run's configuration
(``config_digest``) hash the same, the run records the same packages with the
same pytest arguments, and every function it ran reads the same: in a source
file that changed, only the tests that ran a changed function (or any of the
file, when code outside functions changed) are stale; the records of the
others move with their lines (``source_shape``). The runner hands the
warm process the records still valid (``Reuse``); it traces the other tests and
merges the two. A test the map does not know (new, or renamed) is traced.

What it cannot see: a change to a file neither traced code came from nor a
test read (a plugin installed in the environment). ``--no-cache`` traces
the whole suite. The file lives under ``.metaeval/``; this module writes
nothing else, and an unreadable file is a cold cache with a warning.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval import __version__
from metaeval.data_paths import SOURCE_LIMIT, read_bounded
from metaeval.errors import InputError
from metaeval.files import write_atomic
from metaeval.mutation.cache_files import TRACKED, outdated
from metaeval.mutation.caches.config_digest import config_digest, run_config
from metaeval.mutation.caches.coverage_data import MapFields, known_shapes, map_fields
from metaeval.mutation.caches.result_cache import project_test_files
from metaeval.mutation.caches.source_shape import LineMap, Shape, shape_of
from metaeval.mutation.wire import CodeRun, Reuse, is_read
from metaeval.untrusted_json import JsonInputError, read_json_file
from metaeval.vcs import tracked

COVERAGE_FILE_NAME = "mutate-coverage.json"
"""Kept next to the result cache."""
FORMAT = 4
"""4: the data files the tests read, and the run's configuration by its tables.
3: files under the project by their path in it (2 kept absolute paths, which a
moved checkout would compare in the old place)."""


def _salt(packages: Sequence[str], pytest_args: Sequence[str]) -> str:
    return json.dumps([FORMAT, __version__, sorted(packages), list(pytest_args)])


class _Digests:
    def __init__(self, root: Path, shapes: Mapping[str, tuple[str, Shape]] | None = None
                 ) -> None:
        self.root = root
        self.known: dict[str, str] = {}
        self.shapes = shapes or {}
        """Shapes already known, each with its file's digest when it was taken."""

        self.refused: list[str] = []
        """Why names of the map were not read (a special file, a name climbing out)."""

    def __call__(self, name: str) -> str:
        # The names come from a file on disk (data): only regular files are read, so
        # "/dev/zero" or a fifo is a changed file, never a read that does not end.
        if name not in self.known:
            try:
                self.known[name] = config_digest(self.root, name, f"digests: {name!r}")
            except InputError as e:
                self.known[name] = "refused"
                self.refused.append(str(e))
        return self.known[name]

    def shape(self, name: str) -> Shape | None:
        known = self.shapes.get(name)
        if known is not None and known[0] == self(name):
            return known[1]
        if self(name) in ("refused", "missing"):
            return None
        path = Path(name) if Path(name).is_absolute() else self.root / name
        try:
            return shape_of(read_bounded(path.resolve(), SOURCE_LIMIT, name).decode("utf-8"))
        except (OSError, InputError, UnicodeDecodeError):
            return None


def _shared(root: Path) -> list[str]:
    """Files every test depends on: the pytest configuration and every conftest."""
    return [*run_config(), *(t for t in project_test_files(root)
                             if t.rpartition("/")[2] == "conftest.py")]


def _relative(file: str, root: Path) -> str:
    path = Path(file)
    if path.is_absolute() and path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    return file


def _test_file(nodeid: str) -> str:
    return nodeid.partition("::")[0]


@dataclass(frozen=True, slots=True)
class CoverageMap:
    """A whole baseline's map, traced and reused alike, as the next run reads it."""

    packages: tuple[str, ...]
    """The packages whose code was recorded."""
    pytest_args: tuple[str, ...]
    ran: tuple[CodeRun, ...]
    durations: Mapping[str, float]
    passed: tuple[str, ...]
    """The tests that ran and passed: the only ones whose records are kept."""

    def save(self, path: Path, root: Path) -> None:
        """Write the map with the digests of every file it depends on; ``OutputError``
        when it cannot be written. The shapes of files unchanged since the map
        already there are taken from it, not parsed again."""
        write_atomic(path, json.dumps(self.document(root, _known_shapes(path))),
                     follow_links=False)

    def document(self, root: Path, known: Mapping[str, tuple[str, Shape]] | None = None
                 ) -> dict[str, object]:
        """The map as ``save`` writes it (``caches.coverage_file`` adds the plan's hash);
        ``known``: shapes by file, each with the digest of the text it was taken from."""
        digest = _Digests(root.resolve(), known or {})
        passed = set(self.passed)
        # Files under the project by their path in it: a checkout moved or copied
        # elsewhere (another CI runner, a Ray worker's copy) must see its own files
        # change, not the old place's.
        # Once a file, not once a record: a few hundred files, thousands of records.
        relative = {file: _relative(file, digest.root) for file in {r.file for r in self.ran}}
        ran = tuple(r if relative[r.file] == r.file
                    else dataclasses.replace(r, file=relative[r.file])
                    for r in self.ran)
        files = {*_shared(root), *(_test_file(t) for t in self.passed),
                 *(r.file for r in ran)}
        # A data file's record has no lines to move: when it changes, its readers
        # are traced again (and every test, for one read outside a test's call).
        shapes = {name: shape.to_json()
                  for name in sorted({r.file for r in ran if not is_read(r)})
                  if (shape := digest.shape(name)) is not None}
        return {"salt": _salt(self.packages, self.pytest_args),
                "tests": {t: self.durations.get(t, 0.0) for t in sorted(self.passed)},
                # Skipped and untraced tests: never reused, but their times give
                # the limits of mutants run beside their new trace (``Reuse.old``).
                "others": {t: d for t, d in sorted(self.durations.items())
                           if t not in passed},
                "digests": {name: digest(name) for name in sorted(files)},
                "shapes": shapes,
                "ran": [r.to_json() for r in ran]}


def _known_shapes(path: Path) -> Mapping[str, tuple[str, Shape]]:
    """The shapes in the map at ``path`` with their files' digests; none when there
    is no map there or it is not one (each file is then parsed)."""
    try:
        return known_shapes(map_fields(read_json_file(path)))
    except (OSError, JsonInputError):
        return {}


def load_reuse(path: Path, root: Path, packages: Sequence[str], pytest_args: Sequence[str],
               *, cache: bool = True) -> tuple[Reuse | None, str]:
    """The records of the map at ``path`` that still hold, and a warning when the
    file could not be read or a field of it is out of range (None and "" when there
    is no map, or none holds). ``cache``: the file is the coverage cache, not a
    ``--coverage`` file named on the command line, so one git tracks is ignored."""
    if cache and tracked(path):
        return None, f"warning: {path}: {TRACKED}; tracing every test"
    try:
        document = read_json_file(path)
    except FileNotFoundError:
        return None, ""
    except (OSError, JsonInputError) as e:
        return None, f"warning: {path}: cannot read the coverage map ({e}); tracing every test"
    if outdated(document, salt=_salt(packages, pytest_args)):
        return None, ""  # another metaeval's, packages' or pytest arguments': stale
    try:
        found = map_fields(document)
    except JsonInputError as e:
        # One line for the whole file: a map with one bad number is not trusted at all.
        return None, (f"warning: {path}: not a coverage map metaeval wrote: {e}; tracing "
                      "every test")
    return reuse_of(found, path, root, packages, pytest_args)


def reuse_of(found: MapFields, path: Path, root: Path, packages: Sequence[str],
             pytest_args: Sequence[str]) -> tuple[Reuse | None, str]:
    """``load_reuse`` of a map already read, every field checked (``path``, where it was
    read, names it in a warning): the coverage file the plan read reuses this, so the
    warm start never reads that file again."""
    if found.salt != _salt(packages, pytest_args):
        return None, ""  # another metaeval's, packages' or pytest arguments': stale
    tests, digests, ran = found.tests, found.digests, found.ran
    shapes, others = found.shapes, found.others
    digest = _Digests(root.resolve())
    config = set(_shared(root))  # the pytest configuration and every conftest
    # "refused": a file that could not be read is changed every time.
    changed = {name for name, value in digests.items()
               if value == "refused" or digest(name) != value}
    warning = "".join(f"warning: {path}: {why}; counted as changed\n"
                      for why in digest.refused).rstrip("\n")
    shared = config | {r.file for r in ran if is_read(r) and not r.tests}
    if changed & shared or config - set(digests):
        return None, warning  # every test depends on these
    stale = {t for t in tests if _test_file(t) in changed}
    maps = {name: LineMap(shapes[name], new) for name in changed & shapes.keys()
            if (new := digest.shape(name)) is not None}
    moved = []
    for r in ran:
        if r.file not in changed:
            moved.append(r)
        elif r.file in maps and maps[r.file].unchanged(r.line):
            moved.append(_moved(r, maps[r.file]))
        else:
            stale.update(r.tests)
    kept = {t: d for t, d in tests.items() if t not in stale}
    if not kept:
        return None, warning
    return Reuse(kept, tuple(_without(r, stale) for r in moved
                             if set(r.tests) - stale or (is_read(r) and not r.tests)),
                 len(stale & tests.keys()),
                 {**others, **{t: d for t, d in tests.items() if t in stale}}), warning


def _moved(run: CodeRun, where: LineMap) -> CodeRun:
    """The record of unchanged code in a changed file, at its new line numbers."""
    return dataclasses.replace(run, line=where.moved(run.line), lines=tuple(
        (tuple(where.moved(n) for n in numbers), tests) for numbers, tests in run.lines))


def _without(run: CodeRun, stale: set[str]) -> CodeRun:
    """``run`` with the stale tests' share taken out (they are traced again)."""
    if not stale.intersection(run.tests):
        return run
    keep = [i for i, t in enumerate(run.tests) if t not in stale]
    index = {old: new for new, old in enumerate(keep)}
    lines = tuple((numbers, tuple(index[i] for i in tests if i in index))
                  for numbers, tests in run.lines)
    return dataclasses.replace(run, tests=tuple(run.tests[i] for i in keep),
                               lines=tuple((numbers, tests) for numbers, tests in lines if tests))
