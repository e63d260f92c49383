"""The pytest items a forked child runs, and in which order.

The warm runner's helpers over collected items: how fast a test is taken to
be, how the baseline is cut into parts, and the selected tests collected
again from test modules a reload executed again. They only read and collect
items; running them is the warm runner's.
"""

from __future__ import annotations

import math

import pytest

FAST = 0.1
"""Seconds under which tests count as equally fast."""


def speed_class(seconds: float) -> int:
    """Fastest first, by doublings above 0.1 s: faster tests are all alike (their
    times are mostly noise on a loaded machine) and keep their collection order,
    so the test that kills a mutant does not change from run to run."""
    return 0 if seconds < FAST else 1 + int(math.log2(seconds / FAST))


def recollect(selected: tuple[pytest.Item, ...], modules: frozenset[str]
              ) -> tuple[pytest.Item, ...]:
    """The selected tests collected again from the test modules that were executed
    again, so their parameters and fixtures come from the mutated code; the others
    as they are. When a selected test is gone (its parameters' ids changed), every
    test of its module runs, as a fresh process would."""
    wanted = {item.nodeid for item in selected}
    fresh: dict[pytest.Module, list[pytest.Item]] = {}
    for item in selected:
        node = item.getparent(pytest.Module)
        if node is not None and node not in fresh \
                and getattr(node.obj, "__name__", None) in modules:
            fresh[node] = _collect_wanted(node, wanted)
    if not fresh:
        return selected
    by_id = {new.nodeid: new for items in fresh.values() for new in items}
    kept = [item for item in selected if item.getparent(pytest.Module) not in fresh]
    if all(item.nodeid in by_id for item in selected if item not in kept):
        return tuple(by_id.get(item.nodeid, item) for item in selected)
    everything = (new for node in fresh for new in node.session.genitems(node))
    return (*kept, *everything)


def _collect_wanted(module: pytest.Module, wanted: set[str]) -> list[pytest.Item]:
    """The items of ``module`` among ``wanted``, expanding only the classes that
    hold one: collecting a whole module again costs more than most tests."""
    found: list[pytest.Item] = []
    for child in module.collect():
        if isinstance(child, pytest.Item):
            if child.nodeid in wanted:
                found.append(child)
        elif any(nodeid.startswith(child.nodeid + "::") for nodeid in wanted):
            found.extend(i for i in child.session.genitems(child) if i.nodeid in wanted)
    return found


def parts_of(items: list[pytest.Item], count: int) -> list[list[pytest.Item]]:
    """``items`` in at most ``count`` contiguous parts of nearly equal length, each
    in collection order (a module cut in two sets its fixtures up in both)."""
    count = max(1, min(count, len(items)))
    size = -(-len(items) // count)
    parts: list[list[pytest.Item]] = [[]]
    for item in items:
        if len(parts[-1]) >= size and len(parts) < count:
            parts.append([])
        parts[-1].append(item)
    return [part for part in parts if part]
