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
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.mutation.child.apply import MutantFinder
from metaeval.mutation.child.foreign import library_dirs
from metaeval.mutation.fork.registries import Registered, restore_order, withdraw
from metaeval.mutation.fork.swap import Swap, apply_swap

RUNNER = ("metaeval.mutation", "_pytest", "pytest", "pluggy")
CO_OPTIMIZED = 0x01
"""Set on functions, lambdas and comprehensions; never on module or class bodies."""
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
    registered: Registered = field(default_factory=dict)
    """What each executed module's first import added to registries (``registries``),
    withdrawn just before it is executed again."""

    @property
    def modules(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.executed)


Holder = dict[str, object] | dict[object, object] | list[object] | type
"""A place a function or class is bound in: a namespace or dict, a list, a class."""
Holders = dict[int, list[tuple[Holder, object]]]
"""``id`` of a function or class to the places bound to it: (namespace or dict, key),
(list, index), (class, attribute name)."""

CodeKey = tuple[str, int, str]
"""(module name, ``co_firstlineno``, ``co_qualname``)."""


def _owner(value: object) -> str | None:
    """The module a namespace value comes from: a module, or a function's, class's
    or instance's defining module."""
    if isinstance(value, types.ModuleType):
        return value.__name__
    if isinstance(value, types.FunctionType | type):
        return getattr(value, "__module__", None)
    owner = getattr(type(value), "__module__", None)
    return owner if isinstance(owner, str) else None


def _bound(value: object) -> bool:
    """A function, class or module: an object a name is bound to, which rebinding
    (``holders``) points at its new version; not a value computed at import."""
    return isinstance(value, types.FunctionType | type | types.ModuleType)


class ModuleGraph:
    """Which loaded user modules computed something at import from which: read
    once from their namespaces, their top-level ``from ... import`` statements and
    the calls their top-level code made at import.

    Only a module that *computed* something from another (called its functions,
    subclassed its classes, holds its instances or a copy of its constant) must be
    executed again after it. One that merely binds another's functions or classes
    (``from m import f``, a registry of them) is rebound instead: executing every
    importer again would spread over most of a large package, whose modules
    import each other."""

    def __init__(self, root: Path, packages: Iterable[str],
                 import_time: Mapping[CodeKey, frozenset[str]] | None = None,
                 importers: Mapping[str, str] | None = None,
                 imported: Mapping[str, types.CodeType] | None = None,
                 registered: Registered | None = None) -> None:
        self.root = root.resolve()
        self.packages = frozenset(packages)
        self.importers = dict(importers or {})
        self.imported = imported or {}
        """The top-level code each module's import ran (``CallRecorder.module_codes``)."""
        self.registered = registered or {}
        # A virtual environment inside the project holds installed code, not the user's.
        self.installed = tuple(Path(place) for place in library_dirs())
        self.uses: dict[str, set[str]] = {}
        self.order: dict[str, int] = {}
        self.codes: dict[str, types.CodeType | None] = {}
        for position, (name, module) in enumerate(list(sys.modules.items())):
            if self._is_user(name, module):
                self.order[name] = position
        for name in self.order:
            self.uses[name] = {used for used in self._computed_from(name)
                               if used in self.order and used != name}
        for (called, _, _), callers in (import_time or {}).items():
            for caller in callers:
                if caller in self.order and called in self.order and caller != called:
                    self.uses[caller].add(called)
        self.holders = self._holders()

    def _computed_from(self, name: str) -> set[str]:
        """The modules whose objects ``name``'s namespace holds a product of: an
        instance, a class it inherits from, a tuple holding their functions (which
        cannot be rebound), a constant imported by name."""
        found: set[str] = set()
        for value in list(vars(sys.modules[name]).values()):
            if isinstance(value, type):
                if getattr(value, "__module__", None) == name:
                    found.update(owner for base in value.__mro__[1:]
                                 if isinstance(owner := getattr(base, "__module__", None), str))
            elif type(value) in (dict, list):
                # A container built at import: its functions and classes are rebound.
                items = value.values() if type(value) is dict else value
                found.update(owner for item in list(items)
                             if not _bound(item) and (owner := _owner(item)) is not None)
            elif type(value) is tuple:
                found.update(owner for item in value
                             if not isinstance(item, types.ModuleType)
                             and (owner := _owner(item)) is not None)
            elif not _bound(value) and (owner := _owner(value)) is not None:
                found.add(owner)
        # ``from m import LIMIT`` copies a value no identity can trace back to m
        # (a number, a string), as ``SHOWN = m.LIMIT`` does: only executing the
        # importer again refreshes it.
        return found | self._imported_from(name) | self._modules_read(name)

    def _modules_read(self, name: str) -> set[str]:
        """The user modules whose attributes ``name``'s top-level code (its class
        bodies included, its functions' bodies not) reads: ``import m`` and then
        ``m.LIMIT`` while importing."""
        code = self.code(name)
        namespace = vars(sys.modules[name])
        if code is None:  # unread, it may read any module it holds
            return {value.__name__ for value in list(namespace.values())
                    if isinstance(value, types.ModuleType)}
        found: set[str] = set()
        pending = [code]
        while pending:
            body = pending.pop()
            pending.extend(c for c in body.co_consts
                           if isinstance(c, types.CodeType) and not c.co_flags & CO_OPTIMIZED)
            reached: object = None
            for instruction in dis.get_instructions(body):
                if instruction.opname in ("LOAD_NAME", "LOAD_GLOBAL"):
                    reached = namespace.get(str(instruction.argval))
                elif instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and isinstance(
                        reached, types.ModuleType):
                    value = vars(reached).get(str(instruction.argval))
                    # ``a.b.LIMIT`` reads b, not the package a that holds it.
                    if not isinstance(value, types.ModuleType):
                        found.add(reached.__name__)
                    reached = value
                    continue
                else:
                    reached = None
                    continue
                if not isinstance(reached, types.ModuleType):
                    reached = None
        return found

    def _imported_from(self, name: str) -> set[str]:
        """The modules ``name``'s own top-level code copies a value from by name
        (``from m import LIMIT``); not those it takes a function, a class or a
        submodule from, which rebinding keeps current."""
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
                origin = sys.modules.get(source)
                found.update(source for item in fromlist
                             if item != "*" and not _bound(getattr(origin, str(item), None)))
            recent = [*recent[-1:], instruction.argval if instruction.opname == "LOAD_CONST"
                      else None]
        return found

    def _holders(self) -> Holders:
        """Every binding of a user function or class in a module namespace, a
        module-level dict or list, or a user class's namespace: found once here,
        so a child rebinds by lookup instead of walking every namespace of a large
        process."""
        found: Holders = {}
        for module in list(sys.modules.values()):
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for key, value in list(namespace.items()):
                if self._is_user_object(value):
                    found.setdefault(id(value), []).append((namespace, key))
                    if isinstance(value, type) and value.__module__ == module.__name__:
                        for attribute, item in list(vars(value).items()):
                            if self._is_user_object(item):
                                found.setdefault(id(item), []).append((value, attribute))
                elif type(value) is dict:
                    for inner, item in list(value.items()):
                        if self._is_user_object(item):
                            found.setdefault(id(item), []).append((value, inner))
                elif type(value) is list:
                    for index, item in enumerate(list(value)):
                        if self._is_user_object(item):
                            found.setdefault(id(item), []).append((value, index))
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

    def dependents(self, module: str) -> list[str]:
        """The modules that computed something from ``module`` at import, directly or
        through others, each after those it computed from."""
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

    def _ordered(self, names: set[str]) -> list[str]:
        """``names``, each after the modules it computed something from. Modules that
        computed from each other (an import cycle that reaches back at import) go in
        the order their imports finished: one imported while another ran finished
        first, as in a fresh import."""
        graph = {name: {u for u in self.uses[name] if u in names} for name in names}
        order: list[str] = []
        for group in _components(graph):
            order.extend(self._finished_order(group) if len(group) > 1 else group)
        return order

    def _finished_order(self, group: list[str]) -> list[str]:
        members = set(group)
        inside: dict[str, set[str]] = {name: set() for name in group}
        for name in group:
            seen = {name}
            importer = self.importers.get(name, "")
            while importer and importer not in seen:
                seen.add(importer)
                if importer in members:
                    inside[importer].add(name)  # the importer finished after it
                importer = self.importers.get(importer, "")
        by_start = sorted(group, key=self.order.__getitem__)
        sorter = graphlib.TopologicalSorter({name: inside[name] for name in by_start})
        return list(sorter.static_order())

    def code(self, name: str) -> types.CodeType | None:
        """The module's top-level code as its import ran it, else its source compiled
        (once); None without a readable source."""
        if name not in self.codes:
            file = getattr(sys.modules.get(name), "__file__", None)
            ran = self.imported.get(name)
            if ran is not None and ran.co_filename == file:
                self.codes[name] = ran  # compiling inspect_ai's 539 again took 1.5 s
                return ran
            try:
                text = Path(str(file)).read_text(encoding="utf-8")
                self.codes[name] = compile(text, str(file), "exec", dont_inherit=True)
            except (OSError, SyntaxError, ValueError):
                self.codes[name] = None
        return self.codes[name]

    def plan(self, module: str, file: str, source: str) -> ReloadPlan | str:
        """How a child executes ``module`` mutated, and its dependents again; why not
        when one of them cannot be. SyntaxError if the mutated source does not compile."""
        code = compile(source, file, "exec", dont_inherit=True)
        if module not in self.order:
            return f"{module} is not a module of the project loaded by the tests"
        executed = self._codes(self.dependents(module))
        if isinstance(executed, str):
            return executed
        return ReloadPlan(((module, code), *executed), self.holders, served=(module, file, code),
                          registered=self._registered(module, *(n for n, _ in executed)))

    def plan_callers(self, module: str, swaps: Swap, callers: frozenset[str]
                     ) -> ReloadPlan | str:
        """How a child puts in place a mutant of functions (of ``module``) that ran
        at import, called by the top-level code of ``callers``: their code swapped,
        then the callers and their dependents executed again, so what those imports
        computed with the functions is computed with the mutant. Why not when that
        cannot be done: a caller that is not a user module (pytest collecting, say),
        or ``module`` itself among them (executing it again would define the
        functions anew from the original)."""
        strangers = sorted(callers - self.order.keys())
        if strangers:
            return (f"it ran at import, called by {', '.join(map(repr, strangers[:3]))}, "
                    "which is not a module of the project")
        names = self._ordered(self._reach(set(callers)))
        if module in names:
            return f"it ran at import, and {module} depends on what it made"
        executed = self._codes(names)
        if isinstance(executed, str):
            return executed
        return ReloadPlan(tuple(executed), self.holders, swaps,
                          registered=self._registered(*names))

    def unchanged(self, plan: ReloadPlan) -> ReloadPlan | None:
        """The same modules executed again from their own source, nothing swapped:
        the control that shows executing them again is not what fails."""
        executed = self._codes([name for name, _ in plan.executed])
        return None if isinstance(executed, str) else ReloadPlan(
            tuple(executed), self.holders, registered=plan.registered)

    def _registered(self, *names: str) -> Registered:
        return {name: self.registered[name] for name in names if name in self.registered}

    def _codes(self, names: list[str]) -> list[tuple[str, types.CodeType]] | str:
        found = []
        for name in names:
            body = self.code(name)
            if body is None:
                return f"{name} has no source to execute again"
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
        # What its first import registered goes first, as a fresh import finds it.
        withdrawn = withdraw(plan.registered.get(name, ()))
        try:
            exec(code, namespace)
        except Exception as e:
            raise ExecError(name) from e
        restore_order(withdrawn)
        # ``pairs`` keeps every old object alive, so no id in the mapping is reused.
        pairs.extend((old, namespace.get(key)) for key, old in before.items()
                     if namespace.get(key) is not old)
    # Decided before anything is rebound, which would put ``new`` in more places.
    moved: list[tuple[Holder, object, object, object]] = []
    stale: list[tuple[dict[str, object] | dict[object, object], object, object]] = []
    appended: list[tuple[list[object], object, object]] = []
    for old, new in pairs:
        for holder, key in plan.holders.get(id(old), ()):
            again = _registered_again(holder, new)
            if again and isinstance(holder, dict):
                stale.append((holder, key, old))
                continue
            moved.append((holder, key, old, new))
            if again and isinstance(holder, list):
                appended.append((holder, key, new))
    for holder, key, old, new in moved:
        _rebind(holder, key, old, new)
    for table, key, old in stale:
        if table.get(key) is old:  # type: ignore[call-overload]
            del table[key]  # type: ignore[arg-type]
    for items, key, new in appended:
        if isinstance(key, int) and key < len(items) and items[key] is new:
            items[:] = [item for i, item in enumerate(items) if item is not new or i == key]


def _registered_again(holder: Holder, new: object) -> bool:
    """Whether executing the modules again put ``new`` in ``holder``, a registry (a
    dict or list, not a module's namespace or a class) that held the old object:
    it registered itself again, as in a fresh import. A dict's entry for the old
    object then goes, so a mutant that changes the key leaves nothing under the
    original one; in a list the new object takes the old one's place and is not
    held twice."""
    if isinstance(holder, type):
        return False
    if isinstance(holder, list):
        return any(item is new for item in holder)
    name = holder.get("__name__")
    if isinstance(name, str) and getattr(sys.modules.get(name), "__dict__", None) is holder:
        return False
    return any(value is new for value in holder.values())


def _rebind(holder: Holder, key: object, old: object, new: object) -> None:
    """Point one place bound to ``old`` at ``new``, if it still holds ``old``."""
    if isinstance(holder, type):
        if vars(holder).get(str(key)) is old:
            setattr(holder, str(key), new)
    elif isinstance(holder, list):
        if isinstance(key, int) and key < len(holder) and holder[key] is old:
            holder[key] = new
    elif holder.get(key) is old:  # type: ignore[call-overload]
        holder[key] = new  # type: ignore[index]


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` (name -> the names it uses),
    each after the components it uses (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            name, edges = work[-1]
            used = next(edges, None)
            if used is not None:
                if used not in index:
                    index[used] = low[used] = len(index)
                    stack.append(used)
                    on_stack.add(used)
                    work.append((used, iter(sorted(graph[used]))))
                elif used in on_stack:
                    low[name] = min(low[name], index[used])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[name])
            if low[name] == index[name]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == name:
                        break
                found.append(group)
    return found
