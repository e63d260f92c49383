"""Resolve ``package.module:attr`` references to user code (graders, judges), and
only those the project allows.

A reference often comes from data (a check in a meta-set that other people
wrote and send around), so it is checked against ``[tool.metaeval]
allowed_modules`` on its *text*, before anything is imported: importing a module
runs it, and importing ``a.b`` runs ``a`` first. This module must never import
a module, nor hand back an object, that the allowed list does not cover.

The current directory is put on ``sys.path`` first, as pytest does with its
rootdir, so a user's own packages resolve when ``metaeval`` runs as a script.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from dataclasses import dataclass
from types import ModuleType

from metaeval.errors import InputError

ALLOW_HINT = ("add its package to [tool.metaeval] allowed_modules in pyproject.toml to run it")
EXPECTED = "expected 'package.module:attr'"


@dataclass(frozen=True, slots=True)
class AllowedModules:
    """``[tool.metaeval] allowed_modules``: the packages whose code a grader or a judge
    named by import path may come from.

    A package allows its submodules: ``mypkg`` allows ``mypkg.graders``, not
    ``mypkgevil`` nor ``mypkg_x``. Empty (the default, and a project with no such
    key): only the built-in graders and judges, which are named, never imported.
    """

    packages: tuple[str, ...] = ()

    def allows(self, module: str) -> bool:
        return any(module == p or module.startswith(p + ".") for p in self.packages)


BUILTINS_ONLY = AllowedModules()


def is_module_name(text: str) -> bool:
    """``a.b.c`` of identifiers: no relative (``..x``), empty or doubled-dot part."""
    return all(part.isidentifier() for part in text.split("."))


def one_line(error: BaseException, limit: int = 200) -> str:
    """``Type: message`` on one line, cut at ``limit`` characters."""
    text = " ".join(f"{type(error).__name__}: {error}".split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def parse_reference(reference: str) -> tuple[str, tuple[str, ...]]:
    """``package.module:attr.sub`` to (``package.module``, (``attr``, ``sub``)); an
    InputError for anything else (``..:x``, ``:x``, ``x:``, ``a..b:c``)."""
    module_name, sep, attr = reference.partition(":")
    if not sep or not is_module_name(module_name) or not is_module_name(attr):
        shown = reference if len(reference) <= 80 else reference[:77] + "..."
        raise InputError(f"{shown!r} is not an import path; {EXPECTED}")
    return module_name, tuple(attr.split("."))


def resolve(reference: str, allowed: AllowedModules) -> object:
    """Import ``package.module:attr`` (``attr`` may be dotted) and return the object,
    when ``allowed`` covers the module and the object's own home.

    Every problem is an InputError: a malformed path, a module outside the list
    (nothing imported), a module that fails to import (named, with its exception on
    one line), a missing attribute, or an object the allowed module only imported
    from elsewhere (``mypkg:os.system``).
    """
    module_name, attrs = parse_reference(reference)
    if not allowed.allows(module_name):
        raise InputError(f"{reference!r} is not in an allowed module; {ALLOW_HINT}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: object = importlib.import_module(module_name)
    # An allowed module is the user's own code: whatever it raises at import (a syntax
    # error, an exception, sys.exit) is their mistake to be named, not a traceback.
    except (Exception, SystemExit) as e:
        raise InputError(f"cannot import {module_name!r} (from {reference!r}): "
                         f"{one_line(e)}") from e
    for i, part in enumerate(attrs):
        try:
            obj = getattr(obj, part)
        except AttributeError as e:
            raise InputError(f"{module_name!r} has no attribute "
                             f"{'.'.join(attrs[:i + 1])!r}") from e
        except Exception as e:  # a property or a module __getattr__ of the user's raised
            raise InputError(f"{reference!r}: reading {part!r} raised {one_line(e)}") from e
        foreign = _foreign(obj, allowed)
        if foreign is not None:
            raise InputError(f"{reference!r} is {foreign}, which is not in an allowed "
                             f"module; {ALLOW_HINT}")
    return obj


def _foreign(obj: object, allowed: AllowedModules) -> str | None:
    """What makes ``obj`` code from outside ``allowed`` (a phrase naming it), or None
    when it may be called. Allowed: a module, class or Python function defined in an
    allowed module (a function's code in that module's package, so a borrowed
    ``__module__`` does not pass), and an instance of such a class (a grader object).
    Refused: everything else callable, however an allowed module got hold of it: a
    builtin (``os.system``), a ``functools.partial`` or a bound method over one, a
    callable instance of a foreign class. A value that cannot be called is data."""
    if isinstance(obj, ModuleType):
        return None if allowed.allows(obj.__name__) else f"{obj.__name__!r} code"
    if inspect.ismethod(obj):  # both the function and what it is bound to
        return _foreign(obj.__func__, allowed) or _foreign(obj.__self__, allowed)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        home = getattr(obj, "__module__", None)
        if not isinstance(home, str) or not allowed.allows(home):
            return f"{home!r} code"
        if inspect.isfunction(obj) and not _defined_in(obj.__code__.co_filename, home):
            return f"code from {obj.__code__.co_filename!r} (it claims {home!r})"
        return None
    if not callable(obj):
        return None
    if inspect.isroutine(obj):  # builtins, method descriptors: code from nowhere we allow
        return f"{getattr(obj, '__module__', None)!r} code (a builtin)"
    cls = type(obj)
    if allowed.allows(cls.__module__) and _foreign(cls, allowed) is None:
        return None
    return f"a callable {cls.__module__}.{cls.__qualname__} object"


def _defined_in(filename: str, module: str) -> bool:
    """Whether ``filename`` is ``module``'s file or inside its top package's folder."""
    top = sys.modules.get(module.partition(".")[0])
    where = getattr(top, "__file__", None)
    if not isinstance(where, str):
        return False
    root = os.path.dirname(where) if os.path.basename(where) == "__init__.py" else where
    real, base = os.path.realpath(filename), os.path.realpath(root)
    return real == base or real.startswith(base + os.sep)
