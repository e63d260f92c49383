"""What each project module's first import added to registries, and taking it
out again before a forked child executes that module again.

A registry that refuses a second registration (``@register_scorer("exact")``
raising ``scorer 'exact' is already registered``) makes a module raise when
it is executed again in the same process; a fresh import finds the registry
empty of it. So the warm process notes, while it imports and collects, what
each project module's top-level code added to the dicts, lists and sets bound
at module level in *other* modules, the standard library's aside (and to
those held by a class's attributes there): a dict's new keys with their values, a list's or a set's
new items. A child withdraws exactly those entries just before it executes
the module again, and puts what the execution registered where the withdrawn
entries stood (a fresh import's order). An entry that another module added,
or one replaced since, is left where it is.

A module's own top-level code is told apart from what it imports: an import
that starts while it runs closes its share, which opens again when that
import ends, so what a third-party module registers when the project first
imports it stays (executing the project's module again does not import it
again). Only containers' sizes are compared at those moments; a dict's new
keys are the last ones (a dict keeps insertion order), a list's or set's new
items are found against a copy kept of it.

Registries held elsewhere (an instance's attribute: pluggy's plugin manager)
are not seen; a module that raises for those still gets a pytest process of
its own. It never changes anything in the warm process: it only watches, and
``withdraw`` runs in forked children.
"""

from __future__ import annotations

import importlib
import itertools
import os
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any

from metaeval.mutation.child.foreign import library_dirs

_bootstrap: Any = importlib.import_module("importlib._bootstrap")

Container = dict[Any, Any] | list[Any] | set[Any]

UNWATCHED = ("metaeval.mutation", "_pytest", "pytest", "pluggy")
"""Modules whose containers are the runner's own, never a registry a project module's
execution must find emptied. Nor are the standard library's (``sys.modules``, the
import system's caches, ``linecache``; ``copyreg`` and ``warnings`` take a second
registration): a fifth of a large process's containers, compared at every import."""


@dataclass(frozen=True, slots=True, eq=False)
class Added:
    """One entry a module's import put in a registry: a dict's ``key`` bound to
    ``value``; a list's or a set's item (``key`` and ``value`` both the item)."""

    container: Container
    key: object
    value: object


Registered = Mapping[str, tuple[Added, ...]]
"""By module name: what its first import added to other modules' registries."""


def _watched_in(module: types.ModuleType) -> list[Container]:
    """The dicts, lists and sets bound at the top of ``module`` and in the
    attributes of the classes it defines (dunder names aside: ``__path__``,
    ``__all__``, ``__builtins__``)."""
    namespace = getattr(module, "__dict__", None)
    if not isinstance(namespace, dict):
        return []
    found: list[Container] = []
    for key, value in list(namespace.items()):
        if isinstance(key, str) and key.startswith("__"):
            continue
        if isinstance(value, dict | list | set):
            found.append(value)
        elif isinstance(value, type) and value.__module__ == module.__name__:
            found.extend(item for name, item in list(vars(value).items())
                         if not name.startswith("__") and isinstance(item, dict | list | set))
    return found


class Ledger:
    """Watches imports (``start`` to ``stop``) and files what each tracked module's
    own top-level code added to registries (``registered``).

    A module is tracked when ``tracked(spec)`` says so (the project's modules);
    every other import only bounds the shares of the tracked ones."""

    def __init__(self, tracked: Callable[[ModuleSpec], bool]) -> None:
        self.tracked = tracked
        self.active = False
        self.containers: list[Container] = []
        self.owners: list[str] = []
        """The module each container is bound in (its own additions are not filed)."""
        self.seen: set[int] = set()
        """``id`` of each container watched (each once)."""
        self.sizes: list[int] = []
        """Each container's size when the current share opened."""
        self.copies: dict[int, list[Any] | set[Any]] = {}
        """By position: a copy of each list and set, as it was when last compared."""
        self.scanned: set[str] = set()
        self.partial: dict[str, int] = {}
        """Modules looked at while they ran, and their namespace's size then."""
        self.stack: list[tuple[str, bool]] = []
        """The imports running, innermost last: (name, tracked)."""
        self.added: dict[str, list[Added]] = {}
        self._original: Callable[..., Any] | None = None

    @property
    def registered(self) -> Registered:
        return {name: tuple(entries) for name, entries in self.added.items()}

    def start(self) -> None:
        """Watch from now on: the import system is wrapped once, then only switched."""
        if self._original is None:
            self._original = _bootstrap._load_unlocked
            _bootstrap._load_unlocked = self._wrap(self._original)
        for name, module in list(sys.modules.items()):
            self._scan(name, module)
        self.sizes = [len(c) for c in self.containers]
        # What changed while nothing watched is nobody's share.
        for position, copy in self.copies.items():
            if len(copy) != self.sizes[position]:
                self.copies[position] = _copy(self.containers[position])
        self.active = True

    def stop(self) -> None:
        self.active = False
        self.stack = []

    def close(self) -> None:
        """Unwrap the import system (when nothing wrapped it since); a warm process
        keeps it wrapped, switched off, for as long as it lives."""
        self.stop()
        if self._original is not None and getattr(
                _bootstrap._load_unlocked, "__wrapped__", None) is self._original:
            _bootstrap._load_unlocked = self._original
            self._original = None

    def _wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(spec: ModuleSpec, *args: Any) -> Any:
            if not self.active:
                return original(spec, *args)
            return self._load(original, spec, *args)

        wrapper.__wrapped__ = original  # type: ignore[attr-defined]
        return wrapper

    def _load(self, original: Callable[..., Any], spec: ModuleSpec, *args: Any) -> Any:
        outer = self.stack[-1] if self.stack else ("", False)
        try:
            tracked = self.tracked(spec)
        except Exception:  # a spec of a kind never seen: only bounds others' shares
            tracked = False
        if outer[1] or tracked:
            self._guarded(self._settle, outer)
        if tracked:
            # A package's ``__init__`` that makes a registry and then imports the
            # modules filling it: watch what the modules still running bound so far.
            for name, running in self.stack:
                module = sys.modules.get(name)
                # A namespace that bound nothing since its last look holds no new container.
                if running and module is not None and self.partial.get(name) != (
                        size := len(vars(module))):
                    self.partial[name] = size
                    self._guarded(self._scan, name, module, False)
        self.stack.append((spec.name, tracked))
        try:
            return original(spec, *args)
        finally:
            if self.stack:
                self.stack.pop()
            if self.active:
                if tracked or outer[1]:
                    self._guarded(self._settle, (spec.name, tracked))
                module = sys.modules.get(spec.name)
                if module is not None:
                    self._guarded(self._scan, spec.name, module)

    def _guarded(self, step: Callable[..., None], *args: Any) -> None:
        """A step of the watch that must never break the import it watches: a
        container whose ``len`` raises ends the watch, with what was filed so far
        (less to withdraw only sends more mutants to processes of their own)."""
        try:
            step(*args)
        except Exception:
            self.stop()

    def _scan(self, name: str, module: object, final: bool = True) -> None:
        """Watch a module's containers (new ones from their size now): once it has
        run (``final``), or so far while it runs."""
        if name in self.scanned or not isinstance(module, types.ModuleType):
            return
        if final:
            self.scanned.add(name)
        if any(name == u or name.startswith(u + ".") for u in UNWATCHED) or (
                name.partition(".")[0] in sys.stdlib_module_names):
            return
        for container in _watched_in(module):
            if id(container) in self.seen:
                continue
            self.seen.add(id(container))
            if isinstance(container, list | set):
                self.copies[len(self.containers)] = _copy(container)
            self.containers.append(container)
            self.owners.append(name)
            self.sizes.append(len(container))

    def _settle(self, share: tuple[str, bool]) -> None:
        """The share of ``share`` (a module's own top-level code, since its last
        import started or ended) closes now: file what it added if it is tracked,
        and open the next share from the sizes now."""
        name, tracked = share
        sizes = self.sizes
        now = list(map(len, self.containers))
        for position in [i for i, (a, b) in enumerate(zip(now, sizes, strict=True)) if a != b]:
            container = self.containers[position]
            grown = now[position] - sizes[position]
            if tracked and self.owners[position] != name:
                self.added.setdefault(name, []).extend(
                    _added(container, grown, self.copies.get(position)))
            if position in self.copies:
                self.copies[position] = _copy(container)
        self.sizes = now


def _copy(container: Container) -> list[Any] | set[Any]:
    return list(container) if isinstance(container, list) else set(container)


def _added(container: Container, grown: int, copy: list[Any] | set[Any] | None
           ) -> list[Added]:
    """What came into ``container`` since ``copy`` was made (a dict: its last
    ``grown`` keys, which a dict keeps in insertion order)."""
    try:
        if isinstance(container, dict):
            if grown <= 0:
                return []
            keys = list(itertools.islice(reversed(container), grown))
            return [Added(container, key, container[key]) for key in reversed(keys)]
        if copy is None:
            return []
        before: dict[int, int] = {}
        for item in copy:
            before[id(item)] = before.get(id(item), 0) + 1
        found = []
        for item in list(container):
            if before.get(id(item), 0):
                before[id(item)] -= 1
            else:
                found.append(Added(container, item, item))
        return found
    except Exception:  # a container that misbehaves when read: nothing filed
        return []


def project_modules(root: Path, packages: Iterable[str]) -> Callable[[ModuleSpec], bool]:
    """Whether a module is the project's: of ``packages``, or a Python file under
    ``root`` outside the interpreter's library folders (a virtual environment in
    the project holds installed code)."""
    tops = frozenset(packages)
    inside = os.path.join(os.path.realpath(root), "")
    library = library_dirs()

    def tracked(spec: ModuleSpec) -> bool:
        if spec.name.partition(".")[0] in tops:
            return True
        origin = spec.origin
        if not origin or not spec.has_location or not origin.endswith(".py"):
            return False
        real = os.path.realpath(origin)
        return real.startswith(inside) and not real.startswith(library)

    return tracked


@dataclass(slots=True)
class Withdrawn:
    """Where a module's entries stood before ``withdraw`` took them out, so that
    ``restore_order`` can put what its execution registered back there."""

    container: Container
    order: list[Any]
    """A dict's keys or a list's items before (a set has no order)."""
    taken: list[Any]
    """A dict's keys or a list's items taken out."""
    size: int = 0
    """The container's size once they were taken out."""


def withdraw(entries: Iterable[Added]) -> list[Withdrawn]:
    """Take out of their registries the entries still there as they were added
    (a dict's key still bound to the same value, an item still held)."""
    groups: dict[int, list[Added]] = {}
    for entry in entries:
        groups.setdefault(id(entry.container), []).append(entry)
    done = []
    for group in groups.values():
        container = group[0].container
        try:
            taken = _take(container, group)
        except Exception:  # a registry that refuses: its module may still raise
            continue
        if taken:
            done.append(taken)
    return done


def _take(container: Container, group: list[Added]) -> Withdrawn | None:
    order = list(container) if isinstance(container, dict | list) else []
    taken: list[Any] = []
    if isinstance(container, dict):
        for entry in group:
            if entry.key in container and container[entry.key] is entry.value:
                del container[entry.key]
                taken.append(entry.key)
    elif isinstance(container, list):
        wanted = [entry.value for entry in group]
        places = []
        for index, item in enumerate(container):
            match = next((w for w, one in enumerate(wanted) if one is item), None)
            if match is not None:
                places.append(index)
                wanted.pop(match)
        for index in reversed(places):
            taken.append(container[index])
            del container[index]
        taken.reverse()
    else:
        for entry in group:
            if any(item is entry.value for item in container):
                container.discard(entry.value)
                taken.append(entry.value)
    return Withdrawn(container, order, taken, len(container)) if taken else None


def restore_order(withdrawn: Iterable[Withdrawn]) -> None:
    """After the module ran again: what it registered anew takes the place of what
    was withdrawn, as a fresh import would have put it (plain dicts and lists;
    a set has no order, a subclass's order is left to it)."""
    for done in withdrawn:
        container = done.container
        try:
            if type(container) is dict:
                _reorder_dict(container, done)
            elif type(container) is list:
                _reorder_list(container, done)
        except Exception:  # the order is a nicety; the entries are in
            continue


def _reorder_dict(table: dict[Any, Any], done: Withdrawn) -> None:
    taken = set(done.taken)
    kept = [key for key in done.order if key not in taken]
    kept_set = set(kept)
    fresh = [key for key in table if key not in kept_set]
    back = [key for key in done.taken if key in table]
    anchor = next((key for key in done.taken if key not in table), done.taken[0])
    extra = [key for key in fresh if key not in taken]
    order: list[Any] = []
    for key in done.order:
        if key in taken:
            if key in back:
                order.append(key)
            if key == anchor:
                order.extend(extra)
        elif key in table:
            order.append(key)
    placed = set(order)
    order.extend(key for key in table if key not in placed)
    if order != list(table):
        items = [(key, table[key]) for key in order]
        table.clear()
        table.update(items)


def _reorder_list(items: list[Any], done: Withdrawn) -> None:
    """The items appended since the withdrawal go where the first withdrawn one was."""
    first = next(i for i, item in enumerate(done.order) if any(item is t for t in done.taken))
    if len(items) <= done.size or first >= done.size:
        return
    tail = items[done.size:]
    del items[done.size:]
    items[first:first] = tail
