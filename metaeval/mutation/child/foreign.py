"""The recorder's trace function paused while a module from outside the project
runs its top level, and every module's importer noted as it starts.

On Python 3.11 the recorder is a trace function written in Python, called for
every call: collecting inspect_ai's scorer tests made 3.6 million calls, 2.5
million of them while a third-party or standard-library module ran its top
level. Such a module cannot call the project's functions at import unless it
names the project's package (it would have to import it), so the recorder
misses nothing it is asked for (which project functions ran at import, and
which module's top level called them) when it is paused there.

A module is *foreign* when it is not in the recorded packages, it comes from
the interpreter's standard library or site-packages (or has no file: built in,
frozen, a namespace), and its source does not name a recorded package (an
extension module has no source; a module with no readable source is traced).
A project function a foreign module reaches only through a callback it was
handed earlier (an import hook the project installed, say) is not seen.

Both import paths that run a module's top level are wrapped: a first import
(``_load_unlocked``) and ``importlib.reload`` (``_exec``). The wrappers stand
aside when the recorder is stopped, under a test, or when a tracer other than
the recorder was installed.

pytest's rewriting of a test module's asserts (``REWRITE``) is paused the same
way: it reads, parses and compiles the module's source and runs none of it.
Collecting inspect_ai's scorer tests in the warm process took 10.1 and 11.2 s
with it traced, 6.6 and 8.9 s paused (two pairs, alternating).
"""

from __future__ import annotations

import importlib
import os
import site
import sys
import sysconfig
import types
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from _typeshed import TraceFunction

# The module that runs imports, under the name importlib gives it (``_frozen_importlib``).
_bootstrap: Any = importlib.import_module("importlib._bootstrap")
_WRAPPED = ("_load_unlocked", "_exec")
REWRITE = ("_pytest.assertion.rewrite", "_rewrite_test")
"""pytest's module and function that rewrite a test module's asserts, wrapped when
pytest has loaded it (by its own name; pytest 6 to 9)."""


def module_above(frame: types.FrameType) -> str:
    """The module whose top-level code is running below ``frame`` on the stack
    (a class body or a function it called counts for it); "" for none."""
    caller = frame.f_back
    while caller is not None and caller.f_code.co_name != "<module>":
        caller = caller.f_back
    return "" if caller is None else str(caller.f_globals.get("__name__", ""))


def library_dirs() -> tuple[str, ...]:
    """The interpreter's standard library and site-packages folders, each ending
    with a separator."""
    paths = {sysconfig.get_path(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.update(site.getsitepackages() if hasattr(site, "getsitepackages") else ())
    paths.add(site.getusersitepackages())
    return tuple(sorted({os.path.join(os.path.realpath(p), "") for p in paths if p}))


def is_foreign(spec: ModuleSpec, packages: frozenset[str], library: tuple[str, ...]) -> bool:
    """Whether a module's top level cannot call the recorded packages' functions
    (the module docstring says when)."""
    if spec.name.partition(".")[0] in packages:
        return False
    origin = spec.origin
    if not origin or not spec.has_location:  # built in, frozen, a namespace package
        return True
    if not os.path.realpath(origin).startswith(library):
        return False
    if not origin.endswith(".py"):
        return not origin.endswith(".pyc")  # an extension module; bytecode has no source
    try:
        with open(origin, "rb") as file:
            source = file.read()
    except OSError:
        return False
    return not any(package.encode() in source for package in packages)


class Recording(Protocol):
    """What the pause reads of the recorder it serves (``apply.CallRecorder``); named
    here so that this module needs nothing of the one that uses it."""

    @property
    def current(self) -> str:
        """The test running; "" outside the tests."""

    @property
    def tracer(self) -> TraceFunction:
        """The trace function the recorder installs."""

    @property
    def packages(self) -> frozenset[str]:
        """The recorded packages."""

    @property
    def importers(self) -> dict[str, str]:
        """Each module imported outside a test, and the module that first imported it."""


class ImportPause:
    """Wraps the import system while ``recorder`` runs outside the tests (``install``
    to ``remove``)."""

    def __init__(self, recorder: Recording) -> None:
        self.recorder = recorder
        self.library = library_dirs()
        self.foreign: dict[str, bool] = {}
        self.paused = 0
        """Foreign top levels running with the trace function off."""
        self.originals: dict[str, Callable[..., Any]] = {}
        self.rewrite: tuple[types.ModuleType, Callable[..., Any]] | None = None
        """pytest's rewriting module and its function, while wrapped."""

    def install(self) -> None:
        if self.originals:
            return
        for name in _WRAPPED:
            original = getattr(_bootstrap, name)
            self.originals[name] = original
            setattr(_bootstrap, name, self._wrap(original))
        module = sys.modules.get(REWRITE[0])
        rewrite = getattr(module, REWRITE[1], None)
        if module is not None and callable(rewrite):
            self.rewrite = (module, rewrite)
            setattr(module, REWRITE[1], self._quiet(rewrite))

    def remove(self) -> None:
        for name, original in self.originals.items():
            if getattr(getattr(_bootstrap, name), "__wrapped__", None) is original:
                setattr(_bootstrap, name, original)
        if self.rewrite is not None:
            module, rewrite = self.rewrite
            if getattr(getattr(module, REWRITE[1]), "__wrapped__", None) is rewrite:
                setattr(module, REWRITE[1], rewrite)
            self.rewrite = None
        # One wrapped again by someone else stays, and passes through (``originals``
        # emptied) to what it wrapped.
        self.originals = {}

    def _quiet(self, rewrite: Callable[..., Any]) -> Callable[..., Any]:
        """``rewrite`` with the recorder off while it runs, outside tests."""
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            recorder = self.recorder
            if (not self.originals or recorder.current
                    or sys.gettrace() is not recorder.tracer):
                return rewrite(*args, **kwargs)
            sys.settrace(None)
            try:
                return rewrite(*args, **kwargs)
            finally:
                sys.settrace(recorder.tracer)

        wrapper.__wrapped__ = rewrite  # type: ignore[attr-defined]
        return wrapper

    def _wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(spec: ModuleSpec, *args: Any) -> Any:
            if not self.originals:
                return original(spec, *args)
            return self._run(original, spec, *args)

        wrapper.__wrapped__ = original  # type: ignore[attr-defined]
        return wrapper

    def _run(self, original: Callable[..., Any], spec: ModuleSpec, *args: Any) -> Any:
        recorder = self.recorder
        if recorder.current:  # under a test: every call counts
            return original(spec, *args)
        if spec.name not in recorder.importers:  # the first import only: a walk up the stack
            recorder.importers[spec.name] = module_above(sys._getframe(1))
        foreign = self.foreign.get(spec.name)
        if foreign is None:
            foreign = self.foreign[spec.name] = is_foreign(spec, recorder.packages,
                                                           self.library)
        tracing = sys.gettrace()
        if foreign and tracing is recorder.tracer:
            sys.settrace(None)
            self.paused += 1
            try:
                return original(spec, *args)
            finally:
                self.paused -= 1
                sys.settrace(recorder.tracer)
        if not foreign and tracing is None and self.paused:
            # The project's own module, imported by a foreign one's top level.
            sys.settrace(recorder.tracer)
            try:
                return original(spec, *args)
            finally:
                sys.settrace(None)
        return original(spec, *args)
