"""The pytest items a forked child runs, and in which order.

The warm runner's helpers over collected items: how fast a test is taken to
be, how the baseline is cut into parts, and the selected tests collected
again from test modules a reload executed again. They only read and collect
items; running them is the warm runner's.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator, Mapping

import pytest

GUIDED = 2
"""Parts a child would make of what is left of the baseline (``parts_of``)."""
FAST = 0.1
"""Seconds under which tests count as equally fast."""


def speed_class(seconds: float) -> int:
    """Fastest first, by doublings above 0.1 s: faster tests are all alike (their
    times are mostly noise on a loaded machine) and keep their collection order,
    so the test that kills a mutant does not change from run to run."""
    return 0 if seconds < FAST else 1 + int(math.log2(seconds / FAST))


def run_order(chosen: list[pytest.Item], position: Mapping[str, int],
              durations: Mapping[str, float], killers: Collection[str] = (),
              first: Collection[str] = ()) -> list[pytest.Item]:
    """``chosen`` in the order a child runs them: the tests that killed the mutant
    last time, then those that run its code (``first``, when every test is
    chosen), then the rest; each group fastest first (``speed_class``), in
    collection order among equals. A child stops at its first failing test, so
    a killed mutant pays for the tests before its killer only."""
    def rank(item: pytest.Item) -> tuple[int, int, int]:
        group = 0 if item.nodeid in killers else 1 if item.nodeid in first else 2
        return (group, speed_class(durations.get(item.nodeid, 0.0)), position[item.nodeid])
    return sorted(chosen, key=rank)


class CollectAgainError(Exception):
    """A test module executed again raised while it was collected again."""


class Recollected:
    """The selected tests to run after a reload: those of test modules that were
    executed again are collected again, so their parameters and fixtures come
    from the mutated code; the others run as they are.

    A module is collected again only when the run reaches its first selected
    test: a mutant killed by an earlier test never pays for the rest. As in a
    pytest process of its own, which keeps the selected node ids of a whole
    collection, a selected test whose id is gone (its parameters changed) does
    not run; when every test was selected, the tests with new ids run last, chosen
    by the session's options as a fresh collection's would be.
    """

    def __init__(self, selected: tuple[pytest.Item, ...], modules: frozenset[str],
                 everything: bool) -> None:
        self.selected = selected
        self.modules = modules
        self.everything = everything
        self.wanted = {item.nodeid for item in selected}
        self.fresh: dict[pytest.Module, dict[str, pytest.Item]] = {}

    def __iter__(self) -> Iterator[pytest.Item]:
        for item in self.selected:
            node = item.getparent(pytest.Module)
            if node is None or getattr(node.obj, "__name__", None) not in self.modules:
                yield item
                continue
            if node not in self.fresh:
                try:
                    found = (node.session.genitems(node) if self.everything
                             else _collect_wanted(node, self.wanted))
                    self.fresh[node] = {new.nodeid: new for new in found}
                except (Exception, pytest.fail.Exception, pytest.skip.Exception) as e:
                    # pytest's own outcomes are BaseExceptions: a collection calls fail().
                    raise CollectAgainError(node.nodeid) from e
            new = self.fresh[node].get(item.nodeid)
            if new is not None:
                yield new
        if self.everything:
            yield from self._new_ids()

    def _new_ids(self) -> list[pytest.Item]:
        """The tests collected again whose ids the session did not run, as a pytest
        process of its own would keep them: the hook behind ``-k``, ``-m``,
        ``--deselect`` and the plugins' choices takes out what the user left out,
        which is no new id."""
        new = [item for found in self.fresh.values() for nodeid, item in found.items()
               if nodeid not in self.wanted]
        if new:
            session = new[0].session
            session.config.hook.pytest_collection_modifyitems(
                session=session, config=session.config, items=new)
        return new


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


def parts_of(items: list[pytest.Item], jobs: int) -> list[list[pytest.Item]]:
    """``items`` in contiguous parts for ``jobs`` children that each take the next
    part whenever they finish one: each part is the share of what is left that
    ``GUIDED`` parts a child would make, so the parts shrink to single tests at
    the end, and a slow stretch of the suite anywhere is shared out (guided
    self-scheduling; the tests' times are not known before the baseline)."""
    if jobs <= 1:
        return [items] if items else []
    parts = []
    start = 0
    while start < len(items):
        size = -(-(len(items) - start) // (GUIDED * jobs))
        parts.append(items[start:start + size])
        start += size
    return parts
