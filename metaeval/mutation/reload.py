"""Putting a mutant in place by executing modules again, in a forked child.

A rewrite that changes a class body, a module constant, a default value, or a
function that ran at import cannot be put in place by swapping code objects
alone: what the import computed from the original is already spread around
(a subclass in another module, a table, a test's parameters). A fresh import
in a pytest process of its own gets it right and costs a whole start-up and
collection. This module does what that import would, in the warm process's
forked child: the mutated code is executed in the module's own namespace,
then every module that depends on it (the package's own modules, conftest
files, test modules) is executed again, dependencies first, and every
module-level binding of a replaced function or class is pointed at its new
version. For a function that ran at import, the function gets its mutated
code and only the modules whose top-level code called it, and their
dependents, are executed again. The warm runner then collects the
re-executed test modules again, so parameters and fixtures are computed from
the mutated code too.

The graph and the compiled code are made once in the warm process, before any
fork. Nothing here writes a file. When modules cannot be executed again (no
source, a cycle) there is no plan; when one raises, ``ExecError`` says which,
and the caller decides (``failing_import``).
"""

from __future__ import annotations

import dis
import graphlib
import importlib.util
import sys
import sysconfig
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.mutation.apply import MutantFinder
from metaeval.mutation.swap import Swap, apply_swap

RUNNER = ("metaeval.mutation", "_pytest", "pytest", "pluggy")
"""Modules never executed again: the machinery running the child."""


@dataclass(frozen=True, slots=True)
class ReloadPlan:
    """What a child does, in order: give the changed functions their mutated code
    (when only a function that ran at import changed), serve the mutated module
    to later imports (when the module itself changed), then execute modules
    again, each after the modules it uses."""

    executed: tuple[tuple[str, types.CodeType], ...]
    holders: Holders
    """Where every function and class of the user's modules is bound, in any module."""
    swaps: Swap = field(default_factory=list)
    served: tuple[str, str, types.CodeType] | None = None
    """The mutated module's name, file and code, for the import hook."""

    @property
    def modules(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.executed)


Holders = dict[int, list[tuple[dict[str, object] | dict[object, object], object]]]
"""``id`` of a function or class to the (namespace or dict, key) pairs bound to it."""


def _owner(value: object) -> str | None:
    """The module a namespace value comes from: a module, or a function's, class's
    or instance's defining module."""
    if isinstance(value, types.ModuleType):
        return value.__name__
    if isinstance(value, types.FunctionType | type):
        return getattr(value, "__module__", None)
    owner = getattr(type(value), "__module__", None)
    return owner if isinstance(owner, str) else None


class ModuleGraph:
    """Which loaded user modules use which, read once from their namespaces and
    their top-level ``from ... import`` statements."""

    def __init__(self, root: Path, packages: Iterable[str]) -> None:
        self.root = root.resolve()
        self.packages = frozenset(packages)
        # A virtual environment inside the project holds installed code, not the user's.
        self.installed = tuple({Path(sysconfig.get_paths()[key]).resolve()
                                for key in ("stdlib", "platstdlib", "purelib", "platlib")})
        self.uses: dict[str, set[str]] = {}
        self.order: dict[str, int] = {}
        self.codes: dict[str, types.CodeType | None] = {}
        for position, (name, module) in enumerate(list(sys.modules.items())):
            if self._is_user(name, module):
                self.order[name] = position
        for name in self.order:
            values = list(vars(sys.modules[name]).values())
            # One level into containers too: a registry dict of functions is a use.
            values += [item for value in values if type(value) in (dict, list, tuple)
                       for item in (value.values() if type(value) is dict else value)]
            # A package holds its submodules as attributes: the same objects after a
            # reload in place, and no value the package computed from them.
            self.uses[name] = {owner for value in values
                               if (owner := _owner(value)) in self.order and owner != name
                               and not (isinstance(value, types.ModuleType)
                                        and owner.startswith(name + "."))}
            # ``from m import LIMIT`` copies a value no identity can trace back to m
            # (a number, a string): only executing the importer again refreshes it.
            self.uses[name] |= {used for used in self._imported_from(name)
                                if used in self.order and used != name}
        self.holders = self._holders()

    def _imported_from(self, name: str) -> set[str]:
        """The modules ``name``'s own top-level code imports names from."""
        code = self.code(name)
        if code is None:
            return set()
        package = getattr(sys.modules[name], "__package__", None) or ""
        found: set[str] = set()
        recent: list[object] = [None, None]
        for instruction in dis.get_instructions(code):
            fromlist = recent[-1]
            if instruction.opname == "IMPORT_NAME" and isinstance(fromlist, tuple):
                level = recent[-2] if isinstance(recent[-2], int) else 0
                try:
                    source = importlib.util.resolve_name(
                        "." * level + str(instruction.argval), package)
                except (ImportError, ValueError):
                    continue
                # ``from pkg import sub`` takes a submodule, not a value the package
                # computed: a use of the submodule, not of the package.
                found.update(f"{source}.{item}" if f"{source}.{item}" in self.order else source
                             for item in fromlist)
            recent = [*recent[-1:], instruction.argval if instruction.opname == "LOAD_CONST"
                      else None]
        return found

    def _holders(self) -> Holders:
        """Every module-level binding, and module-level dict value, of a user
        function or class, in every module: found once here, so a child rebinds
        by lookup instead of walking every namespace of a large process."""
        found: Holders = {}
        for module in list(sys.modules.values()):
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for key, value in list(namespace.items()):
                if self._is_user_object(value):
                    found.setdefault(id(value), []).append((namespace, key))
                elif type(value) is dict:
                    for inner, item in list(value.items()):
                        if self._is_user_object(item):
                            found.setdefault(id(item), []).append((value, inner))
        return found

    def _is_user_object(self, value: object) -> bool:
        return isinstance(value, types.FunctionType | type) and \
            getattr(value, "__module__", None) in self.order

    def _is_user(self, name: str, module: types.ModuleType) -> bool:
        if name.startswith(RUNNER) or not isinstance(module, types.ModuleType):
            return False
        if name.partition(".")[0] in self.packages:
            return True
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file.endswith(".py"):
            return False
        try:
            path = Path(file).resolve()
        except OSError:
            return False
        return path.is_relative_to(self.root) and not any(
            path.is_relative_to(place) for place in self.installed)

    def dependents(self, module: str) -> list[str] | None:
        """The modules that refer to ``module``, directly or through others, each
        after the modules it refers to; None when they form a cycle."""
        return self._ordered(self._reach({module}) - {module})

    def _reach(self, modules: set[str]) -> set[str]:
        """``modules`` and every module that refers to one of them, directly or not."""
        users: dict[str, set[str]] = {}
        for name, uses in self.uses.items():
            for used in uses:
                users.setdefault(used, set()).add(name)
        found = set(modules)
        pending = list(modules)
        while pending:
            for user in users.get(pending.pop(), ()):
                if user not in found:
                    found.add(user)
                    pending.append(user)
        return found

    def _ordered(self, names: set[str]) -> list[str] | None:
        sorter = graphlib.TopologicalSorter(
            {name: {u for u in self.uses[name] if u in names} for name in names})
        try:
            return list(sorter.static_order())
        except graphlib.CycleError:
            return None

    def code(self, name: str) -> types.CodeType | None:
        """The module's own source compiled, once; None without a readable source."""
        if name not in self.codes:
            file = getattr(sys.modules.get(name), "__file__", None)
            try:
                text = Path(str(file)).read_text(encoding="utf-8")
                self.codes[name] = compile(text, str(file), "exec", dont_inherit=True)
            except (OSError, SyntaxError, ValueError):
                self.codes[name] = None
        return self.codes[name]

    def plan(self, module: str, file: str, source: str) -> ReloadPlan | None:
        """How a child executes ``module`` mutated, and its dependents again; None
        when one of them cannot be. SyntaxError if the mutated source does not compile."""
        code = compile(source, file, "exec", dont_inherit=True)
        if module not in self.order:
            return None
        names = self.dependents(module)
        executed = self._codes(names or [])
        if names is None or executed is None:
            return None
        return ReloadPlan(((module, code), *executed), self.holders, served=(module, file, code))

    def plan_callers(self, module: str, swaps: Swap, callers: frozenset[str]
                     ) -> ReloadPlan | None:
        """How a child puts in place a mutant of functions (of ``module``) that ran
        at import, called by the top-level code of ``callers``: their code swapped,
        then the callers and their dependents executed again, so what those imports
        computed with the functions is computed with the mutant. None when that
        cannot be done: a caller that is not a user module (pytest collecting, say),
        or ``module`` itself among them (executing it again would define the
        functions anew from the original)."""
        if not callers <= self.order.keys():
            return None
        names = self._ordered(self._reach(set(callers)))
        if names is None or module in names:
            return None
        executed = self._codes(names)
        if executed is None:
            return None
        return ReloadPlan(tuple(executed), self.holders, swaps)

    def unchanged(self, plan: ReloadPlan) -> ReloadPlan | None:
        """The same modules executed again from their own source, nothing swapped:
        the control that shows executing them again is not what fails."""
        executed = self._codes([name for name, _ in plan.executed])
        return None if executed is None else ReloadPlan(tuple(executed), self.holders)

    def _codes(self, names: list[str]) -> list[tuple[str, types.CodeType]] | None:
        found = []
        for name in names:
            body = self.code(name)
            if body is None:
                return None
            found.append((name, body))
        return found


class ExecError(Exception):
    """A module raised while it was executed again; the exception is the cause."""

    def __init__(self, module: str) -> None:
        super().__init__(module)
        self.module = module


def apply_reload(plan: ReloadPlan) -> None:
    """Execute the plan in this process (a forked child: the parent is untouched).
    The import hook serves the mutated module to anything that imports it later.
    ExecError when a module raises."""
    if plan.served is not None:
        sys.meta_path.insert(0, MutantFinder(*plan.served))
    apply_swap(plan.swaps)
    pairs: list[tuple[object, object]] = []
    for name, code in plan.executed:
        namespace = vars(sys.modules[name])
        before = dict(namespace)
        try:
            exec(code, namespace)
        except Exception as e:
            raise ExecError(name) from e
        # ``pairs`` keeps every old object alive, so no id in the mapping is reused.
        pairs.extend((old, namespace.get(key)) for key, old in before.items()
                     if namespace.get(key) is not old)
    for old, new in pairs:
        for holder, key in plan.holders.get(id(old), ()):
            if holder.get(key) is old:  # type: ignore[call-overload]
                holder[key] = new  # type: ignore[index]
