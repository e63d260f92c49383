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
        home = _home(obj)
        if home is not None and not allowed.allows(home):
            raise InputError(f"{reference!r} is {home!r} code, which is not in an allowed "
                             f"module; {ALLOW_HINT}")
    return obj


def _home(obj: object) -> str | None:
    """The module that defines ``obj`` when it is code that would run if called: a
    module, class or function. None for any other object: a value the allowed
    module made itself (a Judge instance, a partial) is its own doing."""
    if isinstance(obj, ModuleType):
        return obj.__name__
    if isinstance(obj, type) or inspect.isroutine(obj):
        home = getattr(obj, "__module__", None)
        # A builtin method has no module to check: refused, as code from nowhere.
        return home if isinstance(home, str) else "(unknown)"
    return None
