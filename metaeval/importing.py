"""Resolve ``package.module:attr`` references to user code (graders, judges).

The current directory is put on ``sys.path`` first, as pytest does with its
rootdir, so a user's own packages resolve when ``metaeval`` runs as a script.
"""

from __future__ import annotations

import importlib
import os
import sys

from metaeval.errors import InputError


def resolve(reference: str) -> object:
    """Import ``package.module:attr`` (``attr`` may be dotted) and return the object."""
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"{reference!r} is not an import path; expected 'package.module:attr'")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: object = importlib.import_module(module_name)
    except ImportError as e:
        raise InputError(f"cannot import {module_name!r} (from {reference!r}): {e}") from e
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as e:
            raise InputError(f"{module_name!r} has no attribute {attr!r}") from e
    return obj
