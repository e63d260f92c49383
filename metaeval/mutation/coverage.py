"""Which tests reach a mutant, from the functions and lines each baseline test ran.

The baseline child records every function (code object) of the mutated
packages that ran, the tests running when it did, and which of its lines each
test ran. A mutant sits in the innermost function whose lines contain it; if
that function never ran, no test can see the mutant and it is NoCoverage
without being run. If it ran, the tests to run are those that ran the
mutant's lines; when none did, no test executes the mutated code and it is
NoCoverage too (the detail says its function runs). Module and class bodies
run on import, so a mutant there always counts as reached, by every test; so
does one in a function that ran at import (a decorator that fills a registry),
even when tests call it too: what the import made, any test may see.
This module only reads source files, never writes them.
"""

from __future__ import annotations

import threading
import types
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.mutation.model import Mutant, MutantKind
from metaeval.mutation.wire import CodeRun, is_read

CodeKey = tuple[str, int, str]
"""(module name, ``co_firstlineno``, ``co_name``)."""


def code_objects(code: types.CodeType) -> list[types.CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(code_objects(const))
    return found


def _line_range(code: types.CodeType) -> tuple[int, int]:
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return min([code.co_firstlineno, *lines]), max([code.co_firstlineno, *lines])


def _extent(code: types.CodeType) -> tuple[tuple[int, int], tuple[int, int]]:
    """(line, column) of the first and last character of a code object's own
    instructions, 0-based columns; from the ``def`` (or first decorator) line."""
    # Zero-width positions (RESUME and the like sit at column 0) are no text.
    first: list[tuple[int, int]] = []
    last: list[tuple[int, int]] = []
    for line, end_line, col, end_col in code.co_positions():
        if line is None or end_line is None or col is None or end_col is None:
            continue
        if (line, col) != (end_line, end_col):
            first.append((line, col))
            last.append((end_line, end_col))
    lines = _line_range(code)
    # A def starts at its def (or decorator) line; a comprehension, generator
    # expression or lambda only where its own text does.
    header = [] if code.co_name.startswith("<") and code.co_name != "<module>" else [
        (code.co_firstlineno, 0)]
    return (min([*header, *first] or [(lines[0], 0)]),
            max([*last, (lines[1], 0)]))


def _code_lines(codes: list[types.CodeType]) -> frozenset[int]:
    """Lines that hold an instruction in any of ``codes``: the only lines a line
    event can name (a constant folded into another line's instruction has none)."""
    return frozenset(line for code in codes for _, _, line in code.co_lines()
                     if line is not None)


@dataclass(frozen=True, slots=True)
class Selection:
    """Which tests can tell one mutant from the original."""

    tests: tuple[str, ...] | None
    """Those tests; None for every test (a module or class body, a function that
    ran only at import, or code that cannot be told)."""
    reached: bool = True
    """False when the mutant's function never ran: NoCoverage."""
    first: tuple[str, ...] = ()
    """With ``tests`` None: the tests that ran the mutant's own code, to run before
    the rest (a function that also ran at import): a mutant they kill stops there,
    and only a survivor pays for every test."""

    @property
    def unseen(self) -> bool:
        """The function ran but none of the mutant's lines did: no test executes them."""
        return self.reached and self.tests == ()


def _is_function(code: types.CodeType) -> bool:
    # CO_OPTIMIZED: functions, lambdas, comprehensions; never module or class bodies.
    return bool(code.co_flags & 0x01)


@dataclass(slots=True)
class Coverage:
    """The baseline's record, indexed for lookups by mutant."""

    root: Path
    ran: dict[CodeKey, tuple[str, ...]]
    _compiled: dict[Path, list[types.CodeType] | None] = field(default_factory=dict)
    files: dict[str, frozenset[str]] = field(default_factory=dict)
    """Per test, the source files of the recorded packages whose code it ran, and
    the data files it read (``child.reads``); "" for every test's."""
    at_import: frozenset[CodeKey] = frozenset()
    """Functions that also ran outside every test (``CodeRun.at_import``)."""
    shared_reads: frozenset[str] = frozenset()
    """Data files read outside any test's call (collection, a fixture): every test's."""

    lines: dict[tuple[str, int], frozenset[str]] = field(default_factory=dict)
    """(module, line) to the tests that ran the line, for modules traced by line."""
    line_modules: frozenset[str] = frozenset()
    """Modules whose lines the baseline traced."""
    _code_lines: dict[int, frozenset[int]] = field(default_factory=dict)
    """Lines with instructions, by ``id`` of a code object held in ``_compiled``."""
    _extents: dict[int, tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=dict)
    """``_extent`` of each code object held in ``_compiled``, by ``id``: every mutant
    of a file asks for all of them."""
    _compiling: threading.Lock = field(default_factory=threading.Lock, repr=False,
                                       compare=False)
    """The subprocess runner selects from its worker threads: a file is compiled once,
    so the code objects every thread measures are the same ones, held (their ``id``
    never reused) for as long as this record lives."""

    @staticmethod
    def from_runs(root: Path, runs: tuple[CodeRun, ...]) -> Coverage:
        ran: dict[CodeKey, tuple[str, ...]] = {}
        files: dict[str, set[str]] = {}
        lines: dict[tuple[str, int], set[str]] = {}
        at_import: set[CodeKey] = set()
        shared: set[str] = set()
        for run in runs:
            if is_read(run):  # a data file, no code: only a dependency of its readers
                for test in (*run.tests, ""):
                    files.setdefault(test, set()).add(run.file)
                if not run.tests:
                    shared.add(run.file)
                continue
            key = (run.module, run.line, run.name)
            if run.at_import:
                at_import.add(key)
            ran[key] = tuple(sorted({*ran.get(key, ()), *run.tests}))
            for test in (*run.tests, ""):  # "": every file that ran, under any test
                files.setdefault(test, set()).add(run.file)
            for numbers, indices in run.lines:
                tests = {run.tests[i] for i in indices}
                for number in numbers:
                    lines.setdefault((run.module, number), set()).update(tests)
        return Coverage(root.resolve(), ran,
                        files={test: frozenset(f) for test, f in files.items()},
                        lines={key: frozenset(t) for key, t in lines.items()},
                        line_modules=frozenset(module for module, _ in lines),
                        at_import=frozenset(at_import), shared_reads=frozenset(shared))

    def files_run_by(self, tests: tuple[str, ...] | None) -> frozenset[str]:
        """The recorded source files ``tests`` ran and data files they read (with
        those every test may have read); every recorded file for None."""
        if tests is None:
            return self.files.get("", frozenset())
        return self.shared_reads.union(*(self.files.get(t, frozenset()) for t in tests))

    def _codes(self, path: Path) -> list[types.CodeType] | None:
        if path in self._compiled:
            return self._compiled[path]
        with self._compiling:
            if path not in self._compiled:
                try:
                    source = path.read_text(encoding="utf-8")
                    self._compiled[path] = code_objects(compile(source, str(path), "exec",
                                                                 dont_inherit=True))
                except (OSError, SyntaxError, ValueError):
                    self._compiled[path] = None
            return self._compiled[path]

    def enclosing(self, mutant: Mutant) -> types.CodeType | None:
        """The function a mutant sits in; None when it is in a module or class body,
        or the source cannot be read (then it counts as reached)."""
        path = (self.root / mutant.path).resolve()
        codes = self._codes(path)
        if codes is None:
            return None
        line = mutant.span.start_line
        if mutant.kind is MutantKind.PATCH:
            name = mutant.qualname.rpartition(".")[2]
            exact = [c for c in codes if c.co_firstlineno == line and c.co_name == name]
            return exact[0] if exact and _is_function(exact[0]) else None
        # Columns too: a comprehension is a code object of its own, and one on the
        # mutant's line need not contain it (``[f(v) for v in xs] if a and b else []``).
        start = (line, mutant.span.start_column - 1)
        end = (mutant.span.end_line, mutant.span.end_column - 1)
        containing = []
        for code in codes:
            found = self._extents.get(id(code))
            if found is None:
                found = self._extents[id(code)] = _extent(code)
            first, last = found
            if first <= start and end <= last:
                containing.append((code, first, last))
        if not containing:
            return None
        innermost = max(containing, key=lambda found: (found[1], (-found[2][0], -found[2][1])))[0]
        return innermost if _is_function(innermost) else None

    def select(self, mutant: Mutant) -> Selection:
        """The tests that can tell the mutant from the original: those that ran its
        lines when the baseline traced them, else those that ran its function."""
        code = self.enclosing(mutant)
        if code is None:
            return Selection(None)
        key = (mutant.module, code.co_firstlineno, code.co_name)
        if key not in self.ran:
            return Selection((), reached=False)
        function_tests = self.ran[key]
        if not function_tests:
            return Selection(None)  # ran only at import: any test may see what it made
        if mutant.kind is MutantKind.PATCH:
            return Selection(function_tests)  # put in place after the imports ran
        covering = self._covering(mutant, code, function_tests)
        if key in self.at_import:
            # Its lines that ran at import were not traced, and what it made there
            # (a registry entry) any test may see, not only those that call it;
            # the tests that ran its lines are the likeliest to kill it.
            return Selection(None, first=covering or function_tests)
        return Selection(covering)

    def _covering(self, mutant: Mutant, code: types.CodeType,
                  function_tests: tuple[str, ...]) -> tuple[str, ...]:
        """The tests that ran the mutant's lines when the baseline traced them, else
        those that ran its function."""
        numbers = self._instruction_lines(mutant, code)
        if not numbers or mutant.module not in self.line_modules:
            return function_tests
        chosen = frozenset().union(*(self.lines.get((mutant.module, n), frozenset())
                                     for n in numbers))
        return (tuple(t for t in function_tests if t in chosen)
                + tuple(sorted(chosen.difference(function_tests))))

    def _instruction_lines(self, mutant: Mutant, code: types.CodeType) -> list[int]:
        """The lines of the mutant's span where ``code`` (or code nested in it) has
        instructions, so a line event names them; none when other code has an
        instruction there too: a default value or a decorator on a ``def`` line
        runs in the module or class body, at import, never under a line event of
        the function's own frame."""
        span = range(mutant.span.start_line, mutant.span.end_line + 1)
        tree = code_objects(code)
        inside = {id(c) for c in tree}
        codes = self._codes((self.root / mutant.path).resolve()) or []
        if any(n in self._lines_of(c) for c in codes if id(c) not in inside for n in span):
            return []
        return [n for n in span if any(n in self._lines_of(c) for c in tree)]

    def _lines_of(self, code: types.CodeType) -> frozenset[int]:
        found = self._code_lines.get(id(code))
        if found is None:
            found = self._code_lines[id(code)] = _code_lines([code])
        return found

    def tests_for(self, mutant: Mutant) -> tuple[str, ...] | None:
        """``select(mutant).tests``: None when every test may reach it (module or
        class body) or it cannot be told; ``()`` when no test runs its code."""
        return self.select(mutant).tests

    def reached(self, mutant: Mutant) -> bool:
        """Whether the mutant's function ran at all (module and class bodies do)."""
        return self.select(mutant).reached
