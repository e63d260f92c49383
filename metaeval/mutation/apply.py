"""Putting one mutant in place inside a pytest child process, in memory only.

A rewrite mutant is served by an import hook (a meta-path finder that compiles
the mutated text instead of reading the file); a module already imported is
re-executed with the mutated code. A patch mutant replaces its target on the
owning module or class. In both cases every module that bound the replaced
object (``from x import f``, a registry dict) is rebound to the new one.

Nothing here writes a file: no bytecode, no source. It runs only in a child
process that ends with the test session.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import sys
import threading
import types
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from metaeval.mutation.wire import CodeRun

if TYPE_CHECKING:
    from _typeshed import TraceFunction


class MutantLoader(importlib.abc.Loader):
    """Executes precompiled mutated code as the module's body."""

    def __init__(self, code: types.CodeType) -> None:
        self.code = code

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        exec(self.code, vars(module))


class MutantFinder(importlib.abc.MetaPathFinder):
    """Answers for one module name only, with the mutated code."""

    def __init__(self, module: str, file: str, code: types.CodeType) -> None:
        self.module = module
        self.file = file
        self.code = code

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module:
            return None
        package = Path(self.file).name == "__init__.py"
        return importlib.util.spec_from_file_location(
            fullname, self.file, loader=MutantLoader(self.code),
            submodule_search_locations=[str(Path(self.file).parent)] if package else None)


def _rebindable(obj: object) -> bool:
    # Only functions and classes: rebinding by identity an int or an interned
    # string would rewrite unrelated names that happen to share the object.
    return isinstance(obj, types.FunctionType | type | types.BuiltinFunctionType)


def rebind(old: object, new: object) -> int:
    """Point every module-level binding of ``old`` (and module-level dict values)
    at ``new``; returns how many bindings changed."""
    return rebind_all([(old, new)])


def rebind_all(pairs: Sequence[tuple[object, object]]) -> int:
    """``rebind`` for many objects in one walk over every module (a warm process
    holds thousands, so one walk per name would cost seconds)."""
    replace = {id(old): new for old, new in pairs if _rebindable(old)}
    if not replace:
        return 0
    changed = 0
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for name, value in list(namespace.items()):
            if id(value) in replace:
                namespace[name] = replace[id(value)]
                changed += 1
            elif type(value) is dict:
                for key, item in list(value.items()):
                    if id(item) in replace:
                        value[key] = replace[id(item)]
                        changed += 1
    return changed


def apply_rewrite(module: str, file: str, source: str) -> None:
    """Serve ``source`` as ``module`` from now on. SyntaxError if it does not compile."""
    code = compile(source, file, "exec", dont_inherit=True)
    sys.meta_path.insert(0, MutantFinder(module, file, code))
    existing = sys.modules.get(module)
    if existing is None:
        return
    namespace = vars(existing)
    before = dict(namespace)
    exec(code, namespace)
    # ``before`` holds every old object, so no id in the mapping is reused meanwhile.
    rebind_all([(old, namespace.get(name)) for name, old in before.items()
                if namespace.get(name) is not old])


def apply_patch(target: str, replacement: object) -> object:
    """Replace ``package.module:attr`` by ``replacement`` (an expression string is
    evaluated in the target module's namespace); returns the original object."""
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    *path, last = attr.split(".")
    owner: object = module
    for part in path:
        owner = getattr(owner, part)
    try:
        original = inspect.getattr_static(owner, last)
    except AttributeError:
        raise AttributeError(f"{module_name!r} has no attribute {attr!r}") from None
    new = eval(replacement, vars(module)) if isinstance(replacement, str) else replacement
    setattr(owner, last, new)
    if owner is module:
        rebind(original, new)
    return original


class CallRecorder:
    """Which functions and lines ran, and under which test.

    Every call is seen (a call-event tracer), but only frames of the recorded
    packages get a line tracer, and only while a test runs: one baseline run
    pays for it. The runner uses the functions to mark mutants in code no test
    reaches as NoCoverage, and the lines to run only the tests that execute a
    mutant's lines.
    """

    def __init__(self, packages: tuple[str, ...]) -> None:
        self.packages = frozenset(packages)
        self.current = ""
        self.seen: dict[types.CodeType, set[str]] = {}
        self.modules: dict[types.CodeType, str] = {}
        self.wanted: dict[types.CodeType, bool] = {}
        self.lines: dict[types.CodeType, dict[int, set[str]]] = {}
        self.hit: set[tuple[types.CodeType, int]] = set()
        """Lines run under the current test, filed under it when it ends."""

    def __call__(self, frame: types.FrameType, event: str, arg: object) -> TraceFunction | None:
        if event != "call":
            return None
        code = frame.f_code
        tests = self.seen.get(code)
        if tests is None:
            tests = self.seen[code] = set()
            module = self.modules[code] = str(frame.f_globals.get("__name__", ""))
            self.wanted[code] = module.partition(".")[0] in self.packages
        if not self.current:
            return None
        tests.add(self.current)
        # Not the recorder's own lines: when metaeval mutates itself they would be
        # recorded while the recorder files them.
        return self._line if self.wanted[code] and code.co_filename != __file__ else None

    def _line(self, frame: types.FrameType, event: str, arg: object) -> TraceFunction:
        if event == "line":
            self.hit.add((frame.f_code, frame.f_lineno))
        return self._line

    def begin(self, nodeid: str) -> None:
        self.current = nodeid

    def end(self) -> None:
        hit, self.hit = self.hit, set()
        for code, line in hit:
            self.lines.setdefault(code, {}).setdefault(line, set()).add(self.current)
        self.current = ""

    def start(self) -> None:
        sys.settrace(self)
        threading.settrace(self)

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)

    def runs(self) -> tuple[CodeRun, ...]:
        """The functions of the recorded packages that ran (pytest's own are left out)."""
        found = []
        for code, tests in self.seen.items():
            if not self.wanted[code]:
                continue
            lines = self.lines.get(code, {})
            names = sorted(tests.union(*lines.values()))
            index = {name: i for i, name in enumerate(names)}
            groups: dict[tuple[int, ...], list[int]] = {}
            for line, ran in sorted(lines.items()):
                groups.setdefault(tuple(sorted(index[t] for t in ran)), []).append(line)
            found.append(CodeRun(self.modules[code], code.co_filename, code.co_firstlineno,
                                 code.co_name, tuple(names),
                                 tuple((tuple(ls), ts) for ts, ls in groups.items())))
        return tuple(found)


# --- swapping code objects (the warm runner's fast path) ------------------------------

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


def original_code(module: str) -> types.CodeType | None:
    """The imported module's own source, compiled; None when it is not imported
    or its source cannot be read (then a mutant of it cannot be swapped in)."""
    live_file = getattr(sys.modules.get(module), "__file__", None)
    if live_file is None:
        return None
    try:
        text = Path(live_file).read_text(encoding="utf-8")
        return compile(text, live_file, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        return None


Swap = list[tuple[types.FunctionType, types.CodeType]]
"""Live functions and the mutated code each gets."""


def plan_swap(module: str, file: str, source: str, original: types.CodeType | None,
              avoid: frozenset[CodeKey] = frozenset()) -> Swap | None:
    """How to put a rewrite mutant in place by giving the live functions it changes
    their mutated code; None when that is not equivalent to importing the mutated
    module: the module is not imported, the change is outside a function, a
    function is not found, or one ran at import time (``avoid``), so what the
    import computed from it would be stale. ``original`` is
    ``original_code(module)``, compiled once. SyntaxError if the mutated source
    does not compile."""
    mutated = compile(source, file, "exec", dont_inherit=True)
    live = sys.modules.get(module)
    if live is None or original is None:
        return None
    pairs = changed_functions(original, mutated)
    if pairs is None:
        return None
    swaps: Swap = []
    for old, new in pairs:
        if (module, old.co_firstlineno, old.co_qualname) in avoid:
            return None
        functions = _live_functions(live, old)
        if not functions or any(len(f.__closure__ or ()) != len(new.co_freevars)
                                for f in functions):
            return None
        swaps.extend((f, new) for f in functions)
    return swaps


def apply_swap(swaps: Swap) -> None:
    for function, new in swaps:
        function.__code__ = new


def swap_code(module: str, file: str, source: str, original: types.CodeType | None,
              avoid: frozenset[CodeKey] = frozenset()) -> bool:
    """``plan_swap`` and, when it can, ``apply_swap``; whether it did."""
    swaps = plan_swap(module, file, source, original, avoid)
    if swaps is None:
        return False
    apply_swap(swaps)
    return True


def recorded_keys(recorder: CallRecorder) -> frozenset[CodeKey]:
    """Every function of the recorded packages the recorder saw run, as CodeKeys."""
    return frozenset(
        (module, code.co_firstlineno, code.co_qualname)
        for code, module in recorder.modules.items() if recorder.wanted[code])
