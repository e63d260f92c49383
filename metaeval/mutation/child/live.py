"""The function objects alive in this process, found by walking the heap: what the
baseline's line probes and the fork's code swap both give new code to. Child side:
imports nothing of the project."""

from __future__ import annotations

import gc
import types
from collections.abc import Iterable

LiveFunctions = dict[tuple[str, types.CodeType], list[types.FunctionType]]
"""The function objects alive in a process, by (file, code object)."""


def live_functions(files: Iterable[str]) -> LiveFunctions:
    """Every function object in this process whose code comes from ``files``, found
    once by walking the heap: a decorator's wrapper, a registry, a closure made at
    import or a bound default may hold one that no module attribute reaches."""
    wanted = frozenset(files)
    # A frozen heap (see the warm runner) is invisible to get_objects.
    frozen = gc.get_freeze_count() > 0
    if frozen:
        gc.unfreeze()
    try:
        objects = gc.get_objects()
    finally:
        if frozen:
            gc.freeze()
    found: LiveFunctions = {}
    for obj in objects:
        if type(obj) is types.FunctionType and obj.__code__.co_filename in wanted:
            found.setdefault((obj.__code__.co_filename, obj.__code__), []).append(obj)
    return found
