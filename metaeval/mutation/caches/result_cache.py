"""Results of earlier ``metaeval mutate`` runs, reused while nothing they depend on changed.

An entry is keyed by a hash of the mutant itself (its id, its mutated module or
declared replacement, its location) and of the run's settings (metaeval's
version, the pytest arguments, the time limit). It stays valid while the files
it depends on hash the same: the mutated module, the files of the tests that
were selected for it, every ``conftest.py``, pytest's configuration and
``[tool.metaeval.mutate]`` (``config_digest``: not the rest of
``pyproject.toml``), the source files those tests ran in the baseline and the
data files they read (``child.reads``: meta-sets, labels files, fixtures). A
mutant no test reached, or one every test may see, depends on every test file
and every file the baseline read. Adding or removing a test file invalidates
every entry.

The scan cache (``find.scan_cache``) keeps the rewrite mutants of each module
text. The caches live in JSON files under ``.metaeval/`` (gitignored). This module
never writes anywhere else, and a missing, outdated, corrupt or foreign cache
file is an empty cache, never an error: one that cannot be read (not UTF-8, not
JSON, nested too deep, the wrong shape) says so in one warning line on stderr.
Mutants settled without running are not cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from metaeval import __version__
from metaeval.contract import JsonValue
from metaeval.errors import InputError, shown
from metaeval.files import write_atomic
from metaeval.mutation.cache_files import cold, outdated, read_cache
from metaeval.mutation.caches.config_digest import config_digest, run_config
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.limits import SECONDS, clamp_seconds
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.untrusted_json import join_field

CACHE_FILE = ".metaeval/mutate-cache.json"
FORMAT = 2
"""2: the data files the tests read are dependencies, and the run's configuration
its tables (a cache of 1 knows neither, and is read as empty)."""
# A RuntimeError is cached too: a patch target that is gone stays gone until a
# file changes. Ignored and CompileError mutants are settled without running.
CACHEABLE = (Status.KILLED, Status.SURVIVED, Status.NO_COVERAGE, Status.TIMEOUT,
             Status.RUNTIME_ERROR)
# Directories whose files are never the project's tests.
_NOT_TESTS = frozenset({"venv", "site-packages", "node_modules", "__pycache__", "build",
                        "dist"})

Entry = dict[str, object]


def _limit(value: JsonValue) -> float:
    if not SECONDS.holds(value):
        raise ValueError(f"got {shown(value)}; expected {SECONDS.expected}")
    assert isinstance(value, int | float)
    return float(value)


_CACHED = frozenset(s.value for s in CACHEABLE)


def _bad_entry(entry: object) -> str | None:
    """The field of a cache entry that is not what ``store`` writes, and why; None
    for a good one. A result is a status, tests and seconds in range: an entry
    that says otherwise was not written by a run, and the cache is not trusted."""
    if not isinstance(entry, dict):
        return f": got {shown(entry)}; expected an object"
    deps, result = entry.get("deps"), entry.get("result")
    if not isinstance(entry.get("listing"), str):
        return f".listing: got {shown(entry.get('listing'))}; expected a digest"
    if not isinstance(deps, dict) or not all(isinstance(d, str) for d in deps.values()):
        return f".deps: got {shown(deps)}; expected an object of file name to digest"
    if not isinstance(result, dict):
        return f".result: got {shown(result)}; expected an object"
    status = result.get("status")
    if not isinstance(status, str) or status not in _CACHED:  # a list is not hashable
        return (f".result.status: got {shown(status)}; expected one of "
                f"{', '.join(sorted(_CACHED))}")
    for name in ("killed_by", "covered_by"):
        tests = result.get(name)
        if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
            return f".result.{name}: got {shown(tests)}; expected a list of test ids"
    for name in ("duration", "in_tests"):
        if not SECONDS.holds(result.get(name)):
            return f".result.{name}: got {shown(result.get(name))}; expected {SECONDS.expected}"
    if not isinstance(result.get("detail"), str):
        return f".result.detail: got {shown(result.get('detail'))}; expected a string"
    return None


def _is_test_file(name: str) -> bool:
    return name == "conftest.py" or (name.endswith(".py") and (
        name.startswith("test_") or name.endswith("_test.py")))


def project_test_files(root: Path) -> tuple[str, ...]:
    """The project's test files and conftest files, relative to ``root``, sorted."""
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _NOT_TESTS]
        here = Path(directory)
        found.extend((here / name).relative_to(root).as_posix()
                     for name in files if _is_test_file(name))
    return tuple(sorted(found))


class ResultCache:
    """The cache of one project; ``save`` writes it back."""

    def __init__(self, root: Path, settings: tuple[str, ...], path: Path | None = None) -> None:
        self.root = root.resolve()
        self.path = path or self.root / CACHE_FILE
        self.salt = json.dumps([FORMAT, __version__, *settings])
        self.entries: dict[str, Entry] = {}
        self.limits = (0.0, 0.0)
        self._digests: dict[str, str] = {}
        self._test_list: tuple[str, ...] | None = None
        self._load()

    def _load(self) -> None:
        data = read_cache(self.path)
        if data is None or outdated(data, format=FORMAT):
            return  # none yet, or another format's: start empty; it is rewritten on save
        entries = data.get("entries") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(entries, dict):
            cold(self.path, "not a result cache: expected an object with entries")
            return
        for key, entry in entries.items():
            problem = _bad_entry(entry)
            if problem is not None:
                # One bad entry and none is trusted: whoever wrote it could have
                # written the others too. One line, naming the first.
                cold(self.path, f"not a result cache: {join_field('entries', key)}{problem}")
                return
        try:
            self.limits = (_limit(data.get("baseline")), _limit(data.get("timeout")))
        except ValueError as e:
            cold(self.path, f"not a result cache: baseline and timeout: {e}")
            return
        self.entries = {k: dict(v) for k, v in entries.items() if isinstance(v, dict)}

    # --- hashing -------------------------------------------------------------------

    def _digest(self, name: str) -> str:
        # A cached entry's deps name files (data): only regular files are read, so
        # "/dev/zero" or a fifo is a changed dependency, said once, never read.
        if name not in self._digests:
            try:
                self._digests[name] = config_digest(self.root, name, f"deps: {name!r}")
            except InputError as e:
                self._digests[name] = "refused"
                print(f"warning: {self.path}: {e}; counted as changed", file=sys.stderr)
        return self._digests[name]

    def _tests(self) -> tuple[str, ...]:
        if self._test_list is None:
            self._test_list = project_test_files(self.root)
        return self._test_list

    def _listing(self) -> str:
        return hashlib.sha256("\n".join(self._tests()).encode("utf-8")).hexdigest()

    def key(self, mutant: Mutant) -> str:
        span = mutant.span
        parts = [self.salt, mutant.id, mutant.kind.value, mutant.module, mutant.path,
                 mutant.qualname, mutant.mutated_source, mutant.original, mutant.replacement,
                 mutant.target, span.start_line, span.start_column, span.end_line,
                 span.end_column]
        return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()

    def _relative(self, file: str) -> str:
        path = Path(file)
        if path.is_absolute() and path.is_relative_to(self.root):
            return path.relative_to(self.root).as_posix()
        return file

    def _dependencies(self, result: MutantResult, coverage: Coverage | None) -> set[str]:
        mutant = result.mutant
        deps = {mutant.path, *run_config()}
        deps.update(t for t in self._tests() if t.rpartition("/")[2] == "conftest.py")
        tests = tuple(dict.fromkeys((*result.covered_by, *result.killed_by)))
        # An undetected mutant may be killed by any test that changes, including one
        # in a file that never reached it; a kill only needs its own tests unchanged.
        if result.status in (Status.NO_COVERAGE, Status.SURVIVED) or not result.covered_by:
            deps.update(self._tests())
            ran = coverage.files_run_by(None) if coverage is not None else frozenset()
        else:
            deps.update(t.partition("::")[0] for t in tests)
            ran = coverage.files_run_by(tests) if coverage is not None else frozenset()
        deps.update(self._relative(f) for f in ran)
        return deps

    # --- the runner's interface ----------------------------------------------------

    def lookup(self, mutant: Mutant) -> MutantResult | None:
        """The earlier result, when the mutant and everything it depends on are unchanged."""
        entry = self.entries.get(self.key(mutant))
        if entry is None or entry.get("listing") != self._listing():
            return None
        deps = entry.get("deps")
        result = entry.get("result")
        if not isinstance(deps, dict) or not isinstance(result, dict):
            return None
        # "refused" (a file too large or not regular) is changed every time, never
        # equal to itself: what could not be read could have changed.
        if any(digest == "refused" or self._digest(name) != digest
               for name, digest in deps.items()):
            return None
        try:
            return MutantResult(
                mutant, Status(result["status"]), killed_by=tuple(result["killed_by"]),
                covered_by=tuple(result["covered_by"]), duration=float(result["duration"]),
                detail=str(result["detail"]), in_tests=float(result["in_tests"]), cached=True)
        except (KeyError, ValueError, TypeError):
            return None

    def killers(self, mutant: Mutant) -> tuple[str, ...]:
        """The tests that killed the mutant when its entry was written, whether or
        not what it depends on changed since: only the order its tests run in
        (these first), never its result."""
        entry = self.entries.get(self.key(mutant))
        result = entry.get("result") if entry is not None else None
        if not isinstance(result, dict) or result.get("status") != Status.KILLED.value:
            return ()
        killed_by = result.get("killed_by")
        return tuple(killed_by) if isinstance(killed_by, list) else ()

    def store(self, result: MutantResult, coverage: Coverage | None) -> None:
        if result.status not in CACHEABLE or result.cached:
            return
        deps = self._dependencies(result, coverage)
        self.entries[self.key(result.mutant)] = {
            "listing": self._listing(),
            "deps": {name: self._digest(name) for name in sorted(deps)},
            "result": {"status": result.status.value, "killed_by": list(result.killed_by),
                       "covered_by": list(result.covered_by),
                       # Within the range the next run reads: its own cache never goes cold.
                       "duration": clamp_seconds(result.duration),
                       "in_tests": clamp_seconds(result.in_tests), "detail": result.detail},
        }

    def last_limits(self) -> tuple[float, float]:
        """The baseline duration and time limit of the run that filled the cache."""
        return self.limits

    def save(self, baseline_duration: float, timeout: float) -> None:
        """Write the cache; ``OutputError`` when it cannot be written."""
        if baseline_duration or timeout:
            self.limits = (clamp_seconds(baseline_duration), clamp_seconds(timeout))
        write_atomic(self.path, json.dumps({"format": FORMAT, "baseline": self.limits[0],
                                            "timeout": self.limits[1],
                                            "entries": self.entries}), follow_links=False)


# --- parsed modules --------------------------------------------------------------------
