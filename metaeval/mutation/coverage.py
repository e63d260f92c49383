"""Which tests reach a mutant, from the functions each baseline test ran.

The baseline child records every function (code object) under the project root
that ran, and the tests running when it did. A mutant sits in the innermost
function whose lines contain it; if that function never ran, no test can see
the mutant and it is NoCoverage without being run. Module and class bodies run
on import, so a mutant there always counts as reached. This module only reads
source files, never writes them.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.mutation.model import Mutant, MutantKind
from metaeval.mutation.wire import CodeRun

CodeKey = tuple[str, int, str]
"""(module name, ``co_firstlineno``, ``co_name``)."""


def _code_objects(code: types.CodeType) -> list[types.CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_code_objects(const))
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
    """Per test, the source files of the recorded packages whose code it ran."""

    @staticmethod
    def from_runs(root: Path, runs: tuple[CodeRun, ...]) -> Coverage:
        ran: dict[CodeKey, tuple[str, ...]] = {}
        files: dict[str, set[str]] = {}
        for run in runs:
            key = (run.module, run.line, run.name)
            ran[key] = tuple(sorted({*ran.get(key, ()), *run.tests}))
            for test in (*run.tests, ""):  # "": every file that ran, under any test
                files.setdefault(test, set()).add(run.file)
        return Coverage(root.resolve(), ran,
                        files={test: frozenset(f) for test, f in files.items()})

    def files_run_by(self, tests: tuple[str, ...] | None) -> frozenset[str]:
        """The recorded source files ``tests`` ran; every recorded file for None."""
        if tests is None:
            return self.files.get("", frozenset())
        return frozenset().union(*(self.files.get(t, frozenset()) for t in tests))

    def _codes(self, path: Path) -> list[types.CodeType] | None:
        if path not in self._compiled:
            try:
                source = path.read_text(encoding="utf-8")
                self._compiled[path] = _code_objects(compile(source, str(path), "exec",
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
            first, last = _extent(code)
            if first <= start and end <= last:
                containing.append((code, first, last))
        if not containing:
            return None
        innermost = max(containing, key=lambda found: (found[1], (-found[2][0], -found[2][1])))[0]
        return innermost if _is_function(innermost) else None

    def tests_for(self, mutant: Mutant) -> tuple[str, ...] | None:
        """The tests that ran the mutant's function; None when it is reached anyway
        (module or class body) or cannot be told; ``()`` when nothing ran it."""
        code = self.enclosing(mutant)
        if code is None:
            return None
        return self.ran.get((mutant.module, code.co_firstlineno, code.co_name), ())

    def reached(self, mutant: Mutant) -> bool:
        code = self.enclosing(mutant)
        if code is None:
            return True
        return (mutant.module, code.co_firstlineno, code.co_name) in self.ran
