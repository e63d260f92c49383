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

from metaeval.mutation.apply import CallRecorder

CO_OPTIMIZED = 0x01
"""Set on functions, lambdas and comprehensions; never on module or class bodies."""

CodeKey = tuple[str, int, str]
"""(module name, ``co_firstlineno``, ``co_qualname``): one function across compilations."""


def _nested(code: types.CodeType) -> list[types.CodeType]:
    return [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _is_live_root(code: types.CodeType) -> bool:
    # A def reachable by attribute from its module: a module-level function or a
    # method. Lambdas, comprehensions and closures are rebuilt from their parent's
    # constants each call, so swapping the parent swaps them too.
    return bool(code.co_flags & CO_OPTIMIZED) and all(
        part.isidentifier() for part in code.co_qualname.split("."))


def _shape(code: types.CodeType) -> tuple[object, ...]:
    """A body's own behaviour, without nested code and without column positions
    (a def whose text got longer moves the end column of the module's ``def``)."""
    consts = tuple("<code>" if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return (code.co_qualname, code.co_code, consts, code.co_names, code.co_varnames,
            code.co_flags, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
            code.co_freevars, code.co_cellvars, code.co_exceptiontable)


def changed_functions(original: types.CodeType, mutated: types.CodeType
                      ) -> list[tuple[types.CodeType, types.CodeType]] | None:
    """The (original, mutated) pairs of module-level functions and methods whose
    code differs; None when something else changed (a module-level constant, a
    class body, a decorator, a default value), which only re-executing the module
    can put in place."""
    pairs: list[tuple[types.CodeType, types.CodeType]] = []

    def walk(a: types.CodeType, b: types.CodeType) -> bool:
        if a.co_qualname != b.co_qualname:
            return False
        if _is_live_root(a):
            if a != b:
                pairs.append((a, b))
            return True
        na, nb = _nested(a), _nested(b)
        return (_shape(a) == _shape(b) and len(na) == len(nb)
                and all(walk(x, y) for x, y in zip(na, nb, strict=True)))

    return pairs if walk(original, mutated) else None


def _live_functions(module: types.ModuleType, code: types.CodeType) -> list[types.FunctionType]:
    """The function objects in ``module`` running ``code`` (found by qualname,
    through staticmethod, classmethod, property and ``functools.wraps`` layers)."""
    owner: object = module
    *path, last = code.co_qualname.split(".")
    for part in path:
        owner = vars(owner).get(part) if hasattr(owner, "__dict__") else None
        if not isinstance(owner, type):
            return []
    namespace = getattr(owner, "__dict__", {})
    pending: list[object] = [namespace.get(last)]
    found: list[types.FunctionType] = []
    for _ in range(32):  # a bounded walk: wrappers can point at each other
        if not pending:
            break
        obj = pending.pop()
        if isinstance(obj, types.FunctionType):
            if obj.__code__ == code:
                found.append(obj)
            pending.append(getattr(obj, "__wrapped__", None))
        elif isinstance(obj, staticmethod | classmethod):
            pending.append(obj.__func__)
        elif isinstance(obj, property):
            pending.extend((obj.fget, obj.fset, obj.fdel))
        elif obj is not None:  # functools.lru_cache and other wrappers that say what they wrap
            pending.append(getattr(obj, "__wrapped__", None))
    return found


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


def plan_swap(module: str, file: str, source: str, original: Original | None,
              line: int | None = None) -> Swap | None:
    """How to put a rewrite mutant in place by giving the live functions it changes
    their mutated code; None when that cannot be: the module is not imported, the
    change is outside a function, or a function is not found. (Whether a changed
    function ran at import, so that what the import computed from it is stale,
    is the planner's to weigh.) ``original`` is
    ``original_code(module)``, made once; ``line``, the mutant's first line, lets
    only its statement be compiled. SyntaxError if the mutated code does not compile."""
    if original is None:
        compile(source, file, "exec", dont_inherit=True)
        return None
    old_code, mutated = original.pair(source, line)
    live = sys.modules.get(module)
    if live is None:
        return None
    pairs = changed_functions(old_code, mutated)
    if pairs is None:
        return None
    swaps: Swap = []
    for old, new in pairs:
        functions = _live_functions(live, old)
        if not functions or any(len(f.__closure__ or ()) != len(new.co_freevars)
                                for f in functions):
            return None
        swaps.extend((f, new) for f in functions)
    return swaps


def apply_swap(swaps: Swap) -> None:
    for function, new in swaps:
        function.__code__ = new


def swap_code(module: str, file: str, source: str, original: Original | None,
              line: int | None = None) -> bool:
    """``plan_swap`` and, when it can, ``apply_swap``; whether it did."""
    swaps = plan_swap(module, file, source, original, line)
    if swaps is None:
        return False
    apply_swap(swaps)
    return True


def import_callers(recorder: CallRecorder) -> dict[CodeKey, frozenset[str]]:
    """Every function of the recorded packages the recorder saw run (at import:
    it runs until the tests do), with the modules whose top-level code called it."""
    return {(module, code.co_firstlineno, code.co_qualname):
            frozenset(recorder.callers.get(code, ()))
            for code, module in recorder.modules.items() if recorder.wanted[code]}
