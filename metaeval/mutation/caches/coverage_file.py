"""A coverage file: one baseline's coverage map, traced once and shared by shards.

``metaeval mutate --trace-only --write-coverage FILE`` traces the baseline in a
first CI job and writes the map the coverage cache keeps (``coverage_cache``),
with the hash of the plan it was traced for (``shard_manifest.plan_hash``, over
every planned mutant). Each shard passes it with ``--coverage FILE``: its warm
runner reuses the records that still hold instead of tracing the whole suite
again. A shard without the file traces on its own.

The file comes from another job, so it is data: read as JSON, field by field
(``coverage_data``: every duration, line number and test index in its range),
never imported or called. A file for another plan, written by another metaeval,
or not a map at all is refused (``InputError``, exit 2) rather than quietly
traced around: a pipeline that hands its shards the wrong file should say so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metaeval import __version__
from metaeval.errors import InputError, shown
from metaeval.files import write_atomic
from metaeval.mutation.caches.coverage_cache import FORMAT, CoverageMap, reuse_of
from metaeval.mutation.caches.coverage_data import REQUIRED, MapFields, map_fields
from metaeval.mutation.wire import Reuse
from metaeval.untrusted_json import JsonInputError, parse_json, read_json_file

PLAN_FIELD = "plan_hash"


@dataclass(frozen=True, slots=True)
class CoverageFile:
    """A coverage file whose fields all read as a map: what the warm runner needs
    to reuse it (``RunOptions.coverage_file``), read once, by the plan."""

    path: Path
    plan: str
    """The plan hash it was traced for."""
    packages: tuple[str, ...]
    """The packages whose code was recorded: a warm runner reusing the map records these."""
    pytest_args: tuple[str, ...]
    tests: int
    """Tests whose records it holds."""
    fields: MapFields
    """The map itself, every field checked: what the warm runner reuses (``reuse``)
    without reading the file again."""

    def check_plan(self, plan: str) -> CoverageFile:
        """Itself when it was traced for ``plan``; ``InputError`` naming both hashes if not."""
        if self.plan != plan:
            raise InputError(
                f"--coverage: {self.path}: field {PLAN_FIELD!r}: got {self.plan!r}; expected "
                f"{plan!r}, the hash of this run's plan: the file was traced for other "
                "mutants, config or tests (trace it again with --trace-only "
                "--write-coverage at this commit)")
        return self

    def reuse(self, root: Path, packages: tuple[str, ...], pytest_args: Sequence[str]
              ) -> tuple[tuple[str, ...], Reuse | None, str]:
        """What a warm runner for ``packages`` in ``root`` takes of the map: the packages
        it records (``covering_packages``), the records that still hold there (None when
        none does), and its warnings, one a line ("" for none)."""
        packages, covering = covering_packages(self.path, self.packages, packages)
        reuse, stale = reuse_of(self.fields, self.path, root, packages, pytest_args)
        return packages, reuse, "\n".join(w for w in (covering, stale) if w)


def write_coverage_file(path: Path, cmap: CoverageMap, plan: str,
                        root: Path | None = None) -> None:
    """Write ``cmap`` as the coverage cache does, with ``plan`` (a ``plan_hash``);
    ``root`` is the project root the map's files are named against (default: the
    current directory). ``OutputError`` when it cannot be written."""
    root = (Path.cwd() if root is None else root).resolve()
    # ``document`` names the project's files from its root: a shard's checkout may
    # lie elsewhere.
    write_atomic(path, json.dumps({PLAN_FIELD: plan, **cmap.document(root)}), follow_links=True)


def read_coverage_file(path: Path, plan: str) -> CoverageFile:
    """The coverage file at ``path``, traced for ``plan``; ``InputError`` naming the
    file, the field, what was found and what was expected when it is not."""
    return load_coverage_file(path).check_plan(plan)


def load_coverage_file(path: Path) -> CoverageFile:
    """The coverage file at ``path``, every field checked, its plan not yet compared."""
    def bad(field: str, found: object, expected: str) -> InputError:
        return InputError(f"--coverage: {path}: field {field!r}: got {shown(found)}; "
                          f"expected {expected}")

    try:
        document: Any = read_json_file(path)
    except (OSError, JsonInputError) as e:
        raise InputError(f"--coverage: {path}: cannot read it as JSON: {e}") from e
    if not isinstance(document, dict):
        raise InputError(f"--coverage: {path}: got {shown(document)}; expected an object "
                         "written by metaeval mutate --write-coverage")
    for field in (PLAN_FIELD, *REQUIRED):
        if field not in document:
            raise InputError(f"--coverage: {path}: field {field!r} is missing; expected in "
                             "every coverage file (metaeval mutate --trace-only "
                             "--write-coverage writes them)")
    plan = document[PLAN_FIELD]
    if not isinstance(plan, str) or not plan:
        raise bad(PLAN_FIELD, plan, "a plan hash (a string)")
    # Every field, numbers by their range: the shards' results hang on this file's
    # durations (a test's time sets its mutants' limits) and its line records.
    try:
        fields = map_fields({k: v for k, v in document.items() if k != PLAN_FIELD})
    except JsonInputError as e:
        raise InputError(f"--coverage: {path}: field {e.field!r}: {e.message} (metaeval "
                         "mutate --trace-only --write-coverage writes every field)") from e
    packages, pytest_args = _salt(fields.salt, bad)
    tests = fields.tests
    return CoverageFile(path, plan, packages, pytest_args, len(tests), fields)


def _salt(salt: object, bad: Callable[[str, object, str], InputError]
          ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The packages and pytest arguments the map was recorded with, from its salt
    (``[format, version, packages, pytest args]``)."""
    try:
        parts: Any = parse_json(salt) if isinstance(salt, str) else None
    except JsonInputError:
        parts = None
    if not (isinstance(parts, list) and len(parts) == 4
            and all(isinstance(p, list) and all(isinstance(s, str) for s in p)
                    for p in parts[2:])):
        raise bad("salt", salt, "[format, metaeval version, packages, pytest arguments]")
    if parts[:2] != [FORMAT, __version__]:
        raise bad("salt", salt, f"a map written by this metaeval ({__version__}, map format "
                                f"{FORMAT}): trace it with the same metaeval as the shards")
    return tuple(parts[2]), tuple(parts[3])


def covering_packages(path: Path, found: tuple[str, ...], packages: tuple[str, ...]
                      ) -> tuple[tuple[str, ...], str]:
    """The packages a warm runner reusing the file at ``path`` (traced for ``found``,
    ``CoverageFile.packages``) records: ``found``, when they hold every one of
    ``packages`` (a shard's share may touch fewer), else ``packages`` and a
    warning that every test is traced."""
    if set(packages) <= set(found):
        return found, ""
    return packages, (f"warning: {path}: traced for the packages {list(found)}, this run "
                      f"mutates {list(packages)}; tracing every test")
