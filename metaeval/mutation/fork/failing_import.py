"""A mutant that makes a module raise when the forked child executes it again:
what a pytest process of its own would make of it, said without starting one.

Such a mutant used to get a fresh process (a cold start and a whole
collection: a third of a second on a small project, seconds on a large one).
That process imports the mutated code for the first time, where the test
module that first imports the raising module (directly or through others)
imports it; the import raises, that module fails to collect, and pytest
stops before any test with the collection error first in its report: a kill,
by that test module. This module says the same from what the warm process
saw, on two conditions, else the mutant still gets its own process:

- the same modules, executed again from their own source, do not raise (a
  control in a forked child, once per set of modules): what raises is the
  mutant, not executing a module twice;
- the first import of the raising module came from a collected test module,
  not from a conftest file or a plugin (there pytest fails before collecting,
  which is not a kill).

It never runs a test and never touches the parent's modules: the control is
executed in a child that only exits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from metaeval.mutation.fork.reload import ReloadPlan, apply_reload
from metaeval.mutation.processes import forked_ok


def first_test_importing(module: str, importers: Mapping[str, str],
                         test_modules: Mapping[str, str], is_user: Callable[[str], bool]
                         ) -> str | None:
    """The node id of the collected test module whose collection first imported
    ``module``, following ``importers`` (module -> the module that imported it
    first); None when the chain leaves the user's modules or passes a conftest
    before reaching one."""
    seen: set[str] = set()
    name = module
    while name not in seen:
        seen.add(name)
        if name in test_modules:
            return test_modules[name]
        if not is_user(name) or name.rpartition(".")[2] == "conftest":
            return None
        name = importers.get(name, "")
    return None


def executes_cleanly(control: ReloadPlan, limit: float, prepare: Callable[[], None]) -> bool:
    """Whether executing ``control`` in a forked child (``prepare`` run first in
    it) ends without an exception within ``limit`` seconds."""
    def work() -> bool:
        prepare()
        apply_reload(control)
        return True

    return forked_ok(work, limit)
