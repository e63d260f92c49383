"""Putting a rewrite mutant in place by swapping code objects: the warm runner's
fast path.

A mutant inside a function body changes nothing but that function's code. The
warm process plans it (compiles the mutated statement, finds which live
functions run the original code) and the forked child gives those functions
the mutated code: the same effect as importing the mutated module, without
importing anything, unless the change is outside a function (no plan here:
the module is executed again, ``reload``) or the function ran at import (the
planner then also executes its callers again).

Nothing here writes a file; code objects are only assigned in a forked child.
"""

from __future__ import annotations

import ast
import bisect
import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.live import LiveFunctions, live_functions

CO_OPTIMIZED = 0x01
"""Set on functions, lambdas and comprehensions; never on module or class bodies."""

CodeKey = tuple[str, int, str]
"""(module name, ``co_firstlineno``, ``co_qualname``): one function across compilations."""


def _nested(code: types.CodeType) -> list[types.CodeType]:
    return [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _shape(code: types.CodeType) -> tuple[object, ...]:
    """A body's own behaviour, without nested code and without column positions
    (a def whose text got longer moves the end column of the module's ``def``)."""
    consts = tuple("<code>" if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return (code.co_qualname, code.co_code, consts, code.co_names, code.co_varnames,
            code.co_flags, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
            code.co_freevars, code.co_cellvars, code.co_exceptiontable)


@dataclass(frozen=True, slots=True)
class Change:
    """One function's code before and after a mutant (a lambda, a closure and a
    comprehension are functions too)."""

    old: types.CodeType
    new: types.CodeType
    own: bool
    """Whether its own body changed, not only code nested in it: only then can
    what it computed when it ran (at import, say) differ."""
    root: bool
    """Defined in a module or class body (made when its module was imported), not
    inside another function."""


@dataclass(frozen=True, slots=True)
class Changes:
    """Every function whose code a mutant changes, and the functions whose code
    it removes (or adds) with no counterpart."""

    changed: tuple[Change, ...]
    orphans: tuple[types.CodeType, ...] = ()


def changed_code(original: types.CodeType, mutated: types.CodeType) -> Changes | None:
    """The functions, at any depth, whose code differs between two compilations of
    a module; None when something else changed (a module-level constant, a class
    body, a decorator, a default value), which only executing the module again can
    put in place."""
    changed: list[Change] = []
    orphans: list[types.CodeType] = []

    def walk(a: types.CodeType, b: types.CodeType, in_function: bool) -> bool:
        function = bool(a.co_flags & CO_OPTIMIZED)
        own = _shape(a) != _shape(b)
        if not function and own:
            return False
        if function and a != b:
            changed.append(Change(a, b, own, not in_function))
        # Paired by name and line, then by rank among namesakes: a mutant may remove a
        # lambda, and what follows it moves up a rank.
        later = _nested(b)
        for code in _nested(a):
            twin = next((c for c in later if (c.co_qualname, c.co_firstlineno)
                         == (code.co_qualname, code.co_firstlineno)), None) or next(
                (c for c in later if c.co_qualname == code.co_qualname), None)
            if twin is None:
                if not function:
                    return False
                orphans.extend(_tree(code))
                continue
            later.remove(twin)
            if not walk(code, twin, in_function or function):
                return False
        # New nested code appears only inside a function whose own body changed:
        # nothing alive runs it yet.
        return function or not later

    ok = walk(original, mutated, False)
    return Changes(tuple(changed), tuple(orphans)) if ok else None


def _tree(code: types.CodeType) -> list[types.CodeType]:
    return [code, *(inner for nested in _nested(code) for inner in _tree(nested))]


def changed_functions(original: types.CodeType, mutated: types.CodeType
                      ) -> list[tuple[types.CodeType, types.CodeType]] | None:
    """``changed_code`` as (original, mutated) pairs of the functions whose code differs."""
    changes = changed_code(original, mutated)
    return None if changes is None else [(c.old, c.new) for c in changes.changed]


@dataclass(frozen=True, slots=True)
class Original:
    """An imported module's own source, compiled once, and where its top-level
    statements lie. A mutant is compiled as the one statement it is in, not as
    its whole module: compiling a module is most of what planning a mutant
    costs. The statement keeps its line numbers, and the module's top-level
    imports come with it: CPython compiles ``module.f()`` differently when
    ``module`` is imported, and the code must equal the live function's."""

    file: str
    code: types.CodeType
    lines: tuple[str, ...]
    statements: tuple[tuple[int, int], ...]
    """First (decorators included) and last line of each top-level statement."""
    imports: tuple[tuple[int, int], ...]
    """The top-level statements that import a name into the module (``from
    __future__`` ones too: the statement alone needs the module's features)."""
    units: dict[int, types.CodeType] = field(default_factory=dict)
    """Original statements compiled alone, by first line (filled as mutants need them)."""

    def pair(self, source: str, line: int | None) -> tuple[types.CodeType, types.CodeType]:
        """(original, mutated) code of the top-level statement holding ``line``; of the
        whole modules when the mutated text differs outside that statement or no
        line is given. SyntaxError if the mutated code does not compile."""
        unit = _holding(self.statements, line)
        if unit is not None:
            first, last = unit
            mutated = source.splitlines(keepends=True)
            end = last + len(mutated) - len(self.lines)
            if end >= first and mutated[:first - 1] == list(self.lines[:first - 1]) \
                    and mutated[end:] == list(self.lines[last:]):
                if first not in self.units:
                    self.units[first] = self._compile(self.lines[first - 1:last], first, last)
                return self.units[first], self._compile(mutated[first - 1:end], first, last)
        return self.code, compile(source, self.file, "exec", dont_inherit=True)

    def _compile(self, lines: Sequence[str], first: int, last: int) -> types.CodeType:
        # Before the statement, its module's lines blanked but for the imports (so every
        # line number, and with it every code object's identity, is the module's);
        # after it, the imports that follow.
        before = ["\n"] * (first - 1)
        after: list[str] = []
        for start, stop in self.imports:
            if stop < first:
                before[start - 1:stop] = self.lines[start - 1:stop]
            elif start > last:
                after += self.lines[start - 1:stop]
        text = "".join((*before, *lines, "\n", *after))
        return compile(text, self.file, "exec", dont_inherit=True)


def _holding(statements: tuple[tuple[int, int], ...], line: int | None
             ) -> tuple[int, int] | None:
    if line is None:
        return None
    at = bisect.bisect_right(statements, (line, sys.maxsize)) - 1
    if at >= 0 and statements[at][0] <= line <= statements[at][1]:
        return statements[at]
    return None


def _imports(node: ast.stmt) -> bool:
    """Whether a top-level statement binds a module-level name by importing it."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return False
    return any(isinstance(inner, ast.Import | ast.ImportFrom) for inner in ast.walk(node))


def original_code(module: str) -> Original | None:
    """The imported module's own source, compiled; None when it is not imported
    or its source cannot be read (then a mutant of it cannot be swapped in)."""
    live_file = getattr(sys.modules.get(module), "__file__", None)
    if live_file is None:
        return None
    try:
        text = Path(live_file).read_text(encoding="utf-8")
        code = compile(text, live_file, "exec", dont_inherit=True)
        tree = ast.parse(text, live_file)
    except (OSError, SyntaxError, ValueError):
        return None

    def lines_of(node: ast.stmt) -> tuple[int, int]:
        decorators = getattr(node, "decorator_list", ())
        return (min([node.lineno, *(d.lineno for d in decorators)]),
                node.end_lineno or node.lineno)

    return Original(live_file, code, tuple(text.splitlines(keepends=True)),
                    tuple(lines_of(node) for node in tree.body),
                    tuple(lines_of(node) for node in tree.body if _imports(node)))


Swap = list[tuple[types.FunctionType, types.CodeType]]
"""Live functions and the mutated code each gets."""

OUTSIDE_FUNCTIONS = ("the change is outside a function body (a decorator, a default value, "
                     "a class body or a module-level statement)")


@dataclass(frozen=True, slots=True)
class SwapPlan:
    """A rewrite mutant put in place by code alone: which live function gets which
    code, and every function it changes (the planner asks which ran at import)."""

    swaps: Swap
    changes: tuple[Change, ...]


def plan_swap(module: str, file: str, source: str, original: Original | None,
              line: int | None = None, live: LiveFunctions | None = None) -> SwapPlan | str:
    """How to put a rewrite mutant in place by giving every live function whose code
    it changes (found by its code object: through decorators, registries and
    closures made at import) the mutated code; else why that cannot be done.
    (Whether a changed function ran at import, so that what the import computed
    from it is stale, is the planner's to weigh.) ``original`` is
    ``original_code(module)``, made once; ``line``, the mutant's first line, lets
    only its statement be compiled; ``live`` is ``live_functions`` of the module's
    file, made once (else here). SyntaxError if the mutated code does not compile."""
    if original is None:
        compile(source, file, "exec", dont_inherit=True)
        return "its module is not imported once the tests are collected, or has no source"
    old_code, mutated = original.pair(source, line)
    if module not in sys.modules:
        return "its module is not imported once the tests are collected"
    changes = changed_code(old_code, mutated)
    if changes is None:
        return OUTSIDE_FUNCTIONS
    if live is None:
        live = live_functions([original.file])
    if any((original.file, code) in live for code in changes.orphans):
        return "a function made earlier from code the mutant removes is still alive"
    swaps: Swap = []
    for change in changes.changed:
        functions = live.get((original.file, change.old), [])
        if change.root and not functions:
            return (f"no live function runs the code of {change.old.co_qualname} "
                    "(a decorator may have copied it)")
        for function in functions:
            if len(function.__closure__ or ()) != len(change.new.co_freevars):
                return (f"{change.old.co_qualname}: a closure made earlier holds other "
                        "variables than the mutant's code uses")
            swaps.append((function, change.new))
    return SwapPlan(swaps, changes.changed)


def apply_swap(swaps: Swap) -> None:
    for function, new in swaps:
        function.__code__ = new


def swap_code(module: str, file: str, source: str, original: Original | None,
              line: int | None = None) -> bool:
    """``plan_swap`` and, when it can, ``apply_swap``; whether it did."""
    plan = plan_swap(module, file, source, original, line)
    if isinstance(plan, str):
        return False
    apply_swap(plan.swaps)
    return True


def import_callers(recorder: CallRecorder) -> dict[CodeKey, frozenset[str]]:
    """Every function of the recorded packages the recorder saw run (at import:
    it runs until the tests do), with the modules whose top-level code called it."""
    return {(module, code.co_firstlineno, code.co_qualname):
            frozenset(recorder.callers.get(code, ()))
            for code, module in recorder.modules.items() if recorder.wanted[code]}
