"""How the warm runner puts each rewrite mutant in place, decided in the warm
process for every mutant before the first child is forked (the children share
what it compiles, and a compile between forks would copy every page it
writes), and what a child that could not do it means.

In order of cost: give the changed functions their mutated code (``swap``);
when one of them ran at import, also execute again the modules whose
top-level code called it, and their dependents; for a change outside a
function, execute the mutated module and its dependents again (``reload``).
No plan means a pytest process of its own. A child whose modules raised when
executed again is a kill by a collection error when a fresh process would say
so (``failing_import``).

It reads the live modules of the warm process and never changes them.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from metaeval.mutation.child.live import LiveFunctions, live_functions
from metaeval.mutation.fork.failing_import import executes_cleanly, first_test_importing
from metaeval.mutation.fork.protocol import WarmMutant
from metaeval.mutation.fork.registries import Registered
from metaeval.mutation.fork.reload import ModuleGraph, ReloadPlan
from metaeval.mutation.fork.swap import Change, CodeKey, Swap, original_code, plan_swap

How = Swap | ReloadPlan
"""How a forked child puts a rewrite mutant in place (a patch mutant needs no plan)."""

ImportTime = dict[CodeKey, frozenset[str]]
"""The functions that ran at import, with the modules whose top-level code called them."""


class Planner:
    """Plans for the mutants of ``modules``, from what the warm process saw while
    importing and collecting."""

    def __init__(self, root: Path, packages: Iterable[str], modules: Iterable[str],
                 import_time: ImportTime, importers: Mapping[str, str],
                 test_modules: Mapping[str, str],
                 imported: Mapping[str, types.CodeType] | None = None,
                 registered: Registered | None = None) -> None:
        self.root = root
        self.packages = tuple(packages)
        # Once a module, not once a mutant: a compile of the whole file.
        self.originals = {module: original_code(module) for module in set(modules)}
        self.import_time = import_time
        self.importers = importers
        self.test_modules = test_modules
        """The collected test modules' names, and their node ids."""
        self.imported = imported or {}
        """Each module's top-level code as its import ran it."""
        self.registered = registered or {}
        """What each module's first import added to registries (``registries``)."""
        self.graph: ModuleGraph | None = None
        """Built at the first mutant that needs modules executed again."""
        self.controls: dict[tuple[str, ...], bool] = {}
        """Sets of modules executed again unmutated in a child: whether that was clean."""
        self.live: LiveFunctions | None = None
        """The functions alive in the warm process, by code: found at the first plan."""

    def plan(self, mutant: WarmMutant) -> How | str:
        """How a child puts ``mutant`` (a rewrite) in place; why no child can, else.
        SyntaxError if the mutated code does not compile."""
        swap = plan_swap(mutant.module, mutant.file, mutant.source,
                         self.originals.get(mutant.module), line=mutant.span[0],
                         live=self._live())
        if isinstance(swap, str):
            return self._reload(mutant, swap)
        callers = _callers(mutant.module, swap.changes, self.import_time)
        if callers is None:
            return swap.swaps
        plan = self._graph().plan_callers(mutant.module, swap.swaps, callers)
        return plan if isinstance(plan, ReloadPlan) else self._reload(mutant, plan)

    def _reload(self, mutant: WarmMutant, why_not_less: str) -> ReloadPlan | str:
        plan = self._graph().plan(mutant.module, mutant.file, mutant.source)
        return plan if isinstance(plan, ReloadPlan) else f"{why_not_less}; {plan}"

    def _live(self) -> LiveFunctions:
        if self.live is None:
            self.live = live_functions(o.file for o in self.originals.values() if o is not None)
        return self.live

    def failing_collection(self, plan: ReloadPlan, raised_in: str, limit: float,
                           prepare: Callable[[], None]) -> str | None:
        """When executing ``plan`` raised in ``raised_in``: the node id of the test
        module a fresh pytest process would fail to collect first; None when that
        cannot be said (``failing_import``)."""
        graph = self._graph()
        collected = first_test_importing(raised_in, self.importers, self.test_modules,
                                         graph.order.__contains__)
        if collected is None:
            return None
        modules = tuple(name for name, _ in plan.executed)
        if modules not in self.controls:
            control = graph.unchanged(plan)
            self.controls[modules] = control is not None and executes_cleanly(
                control, limit, prepare)
        return collected if self.controls[modules] else None

    def _graph(self) -> ModuleGraph:
        if self.graph is None:
            self.graph = ModuleGraph(self.root, self.packages, self.import_time,
                                     self.importers, self.imported, self.registered)
        return self.graph


def _callers(module: str, changes: tuple[Change, ...], import_time: ImportTime
             ) -> frozenset[str] | None:
    """The modules whose top-level code called, at import, a function whose own
    code the mutant changes; None when none of them ran then."""
    ran = [import_time[key] for change in changes if change.own
           and (key := (module, change.old.co_firstlineno, change.old.co_qualname)) in import_time]
    return frozenset().union(*ran) if ran else None
