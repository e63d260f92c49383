"""The files each baseline test opens for reading: the data its verdict depends on.

A test that reads a meta-set, a labels file or a fixture turns red when a row
of it changes, with no change to any module; a cached result is stale then.
The traced baseline (both isolations) records, per test, every file opened for
reading through ``open``, ``io.open``, ``pathlib`` or ``os.open`` (Python's
``open`` audit event), and hands them on as ``CodeRun`` records of no function
(``is_read``), so they travel with the coverage record: the result cache and
the coverage cache hash them as dependencies of the tests that read them.

A file read in a test's own body (its call) is that test's. One read anywhere
else (a fixture's setup or teardown, which other tests may share whatever its
scope; collection, where a test module loads its cases; a conftest) is every
test's: a record with no test.

Kept: regular files inside the project root, except Python modules (a source
or test module is hashed as one already), compiled bytecode and anything under
a hidden or build directory (``.metaeval/``, ``.git/``, ``.venv/``,
``__pycache__``). An audit hook cannot be removed: it is added only in a
baseline child, which exits when its tests end, and it does nothing outside a
test. Imports only the standard library, like ``wire``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from metaeval.mutation.wire import CodeRun, read_record

# Directories whose files are never a test's data (as ``result_cache._NOT_TESTS``).
_NOT_DATA = frozenset({"venv", "site-packages", "node_modules", "__pycache__", "build",
                       "dist"})
_MODULES = (".py", ".pyc", ".pyo", ".pyi")


def _reads(mode: object, flags: object) -> bool:
    """Whether an ``open`` event reads: ``open``'s mode, else ``os.open``'s flags."""
    if isinstance(mode, str):
        return "r" in mode or "+" in mode
    if isinstance(flags, int):
        return flags & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) != os.O_WRONLY
    return True


class FileReads:
    """The files each test opened for reading; ``start`` once, then ``begin``/``end``
    around each test and ``runs`` at the end."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.opened: dict[str, set[tuple[str, str]]] = {"": set()}
        """Per test, each (name as given, working directory then) its call opened;
        under "" those opened anywhere else."""
        self._test = ""
        self._current: set[tuple[str, str]] | None = self.opened[""]
        self._started = False

    def start(self) -> None:
        if not self._started:
            self._started = True
            sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[object, ...]) -> None:
        # Called for every audited event of the process: the cheapest test first.
        if event != "open" or self._current is None:
            return  # None: recording ended
        try:
            name = args[0] if args else None
            if isinstance(name, os.PathLike):
                name = os.fspath(name)
            if isinstance(name, bytes):
                name = os.fsdecode(name)
            if isinstance(name, str) and _reads(args[1] if len(args) > 1 else None,
                                                args[2] if len(args) > 2 else None):
                self._current.add((name, "" if os.path.isabs(name) else os.getcwd()))
        except Exception:
            # Raised here, it would be the test's open() that fails. What gets here
            # (a relative name in a removed working directory, a path-like that
            # raises) is an open that fails by itself: no file was read.
            return

    def begin(self, nodeid: str) -> None:
        """A test starts: what its fixtures open is every test's until its call."""
        self._test = nodeid

    def end(self) -> None:
        """A test ended (or a baseline child starts): reads are every test's again."""
        self._test = ""
        self._current = self.opened[""]

    def pause(self) -> None:
        """Stop recording in this process (the warm process, once its baseline
        children are forked: a mutant's reads are nobody's dependency)."""
        self._current = None

    # Phases, for a plugin registered in the process that runs the tests.
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        self._current = self.opened.setdefault(self._test or item.nodeid, set())

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        self._current = self.opened[""]

    def _inside(self, name: str, cwd: str) -> str | None:
        """``name`` relative to the root, when it is a data file of the project."""
        try:
            path = Path(os.path.realpath(os.path.join(cwd, name)))
            relative = path.relative_to(self.root)
        except (OSError, ValueError):
            return None
        parts = relative.parts
        if not parts or path.suffix in _MODULES or any(
                p.startswith(".") or p in _NOT_DATA for p in parts[:-1]) \
                or parts[-1].startswith("."):
            return None
        return relative.as_posix() if path.is_file() else None

    def runs(self) -> tuple[CodeRun, ...]:
        """One record per data file read, with the tests that read it; none for a
        file read outside a test's call (every test's)."""
        self._current = None
        readers: dict[str, set[str]] = {}
        seen: dict[tuple[str, str], str | None] = {}
        for test, opened in self.opened.items():
            for name, cwd in opened:
                if (name, cwd) not in seen:
                    seen[(name, cwd)] = self._inside(name, cwd)
                file = seen[(name, cwd)]
                if file is not None:
                    readers.setdefault(file, set()).add(test)
        return tuple(read_record(file, () if "" in tests else tuple(sorted(tests)))
                     for file, tests in sorted(readers.items()))
