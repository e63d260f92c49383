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

from metaeval.mutation.wire import CodeRun


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
    if not _rebindable(old):
        return 0
    changed = 0
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for name, value in list(namespace.items()):
            if value is old:
                namespace[name] = new
                changed += 1
            elif type(value) is dict:
                for key, item in list(value.items()):
                    if item is old:
                        value[key] = new
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
    for name, old in before.items():
        new = namespace.get(name)
        if new is not old:
            rebind(old, new)


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
    """Which functions ran, and under which test: a call-event tracer, no line events.

    Cheap enough for one baseline run; the runner uses it to mark mutants in code
    no test reaches as NoCoverage without running them.
    """

    def __init__(self, packages: tuple[str, ...]) -> None:
        self.packages = frozenset(packages)
        self.current = ""
        self.seen: dict[types.CodeType, set[str]] = {}
        self.modules: dict[types.CodeType, str] = {}

    def __call__(self, frame: types.FrameType, event: str, arg: object) -> None:
        if event == "call":
            tests = self.seen.get(frame.f_code)
            if tests is None:
                tests = self.seen[frame.f_code] = set()
                self.modules[frame.f_code] = str(frame.f_globals.get("__name__", ""))
            if self.current:
                tests.add(self.current)

    def start(self) -> None:
        sys.settrace(self)
        threading.settrace(self)

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)

    def runs(self) -> tuple[CodeRun, ...]:
        """The functions of the mutated packages that ran (pytest's own are left out)."""
        found = []
        for code, tests in self.seen.items():
            module = self.modules[code]
            if module.partition(".")[0] in self.packages:
                found.append(CodeRun(module, code.co_filename, code.co_firstlineno,
                                     code.co_name, tuple(sorted(tests))))
        return tuple(found)
