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

from metaeval.mutation.child.foreign import ImportPause, module_above
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
    pays for it. Outside the tests it is paused while a third-party module that
    cannot call the project runs its top level (``foreign``). The runner uses the
    functions to mark mutants in code no test reaches as NoCoverage, and the lines
    to run only the tests that execute a mutant's lines.
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
        self.callers: dict[types.CodeType, set[str]] = {}
        """Of functions of the recorded packages that ran outside a test (at import,
        while collecting): the modules whose top-level code called them, "" for a
        call from no module's top level (a pytest hook)."""
        self.importers: dict[str, str] = {}
        """Every module imported outside a test, and the module whose top-level code
        imported it first (pytest's ``__main__`` for a test module or a conftest)."""
        self.module_codes: dict[str, types.CodeType] = {}
        """Each module's top-level code as its import ran it, by name: the module graph
        executes it again in a child instead of compiling the source once more."""
        self.tracer: TraceFunction = self.__call__
        """What is installed: a bound method is called faster than the instance."""
        self.pause = ImportPause(self)
        """Off while a third-party module runs its top level (``foreign``)."""

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
            if code.co_name == "<module>":
                self.imported(frame, code)
            elif self.wanted[code]:
                self.callers.setdefault(code, set()).add(module_above(frame))
            return None
        tests.add(self.current)
        # Not the recorder's own lines: when metaeval mutates itself they would be
        # recorded while the recorder files them.
        return self._line if self.wanted[code] and code.co_filename != __file__ else None

    def imported(self, frame: types.FrameType, code: types.CodeType) -> None:
        """A module's top-level code starts outside a test (``frame`` runs it)."""
        namespace = frame.f_globals
        name = str(namespace.get("__name__", ""))
        self.importers.setdefault(name, module_above(frame))
        # Not code that exec() runs in a module's namespace (a dataclass's methods).
        if code.co_filename == namespace.get("__file__"):
            self.module_codes[name] = code

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
        self.pause.install()
        sys.settrace(self.tracer)
        threading.settrace(self.tracer)

    def intact(self) -> bool:
        """Whether it still records: a test may replace the trace function (a coverage
        tool does), and CPython drops one that raises (a RecursionError inside it)."""
        return sys.gettrace() is self.tracer

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)
        self.pause.remove()

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
                                 tuple((tuple(ls), ts) for ts, ls in groups.items()),
                                 at_import=code in self.callers))
        return tuple(found)
