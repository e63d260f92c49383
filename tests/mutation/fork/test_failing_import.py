"""Saying what a fresh process makes of a mutant whose module raises when executed again."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from metaeval.mutation.fork.failing_import import executes_cleanly, first_test_importing
from metaeval.mutation.fork.reload import ReloadPlan

USER = {"pkg", "pkg.core", "pkg.rules", "tests.helpers", "tests.test_a", "tests.conftest"}
TESTS = {"tests.test_a": "tests/test_a.py"}


def first(module: str, importers: dict[str, str]) -> str | None:
    return first_test_importing(module, importers, TESTS, USER.__contains__)


def test_the_first_test_module_to_import_it_is_the_one_that_fails_to_collect() -> None:
    importers = {"pkg.core": "pkg", "pkg": "tests.helpers", "tests.helpers": "tests.test_a",
                 "tests.test_a": "__main__"}
    assert first("pkg.core", importers) == "tests/test_a.py"
    assert first("tests.test_a", importers) == "tests/test_a.py"


def test_no_test_module_when_a_conftest_or_pytest_imported_it_first() -> None:
    # Imported first by a conftest: a fresh pytest fails before collecting anything.
    assert first("pkg.core", {"pkg.core": "tests.conftest", "tests.conftest": "__main__"}) \
        is None
    # Imported first by code that is not the user's (a plugin), or by nobody seen.
    assert first("pkg.core", {"pkg.core": "__main__"}) is None
    assert first("pkg.rules", {}) is None
    # Modules that name each other (a record gone wrong) end the walk too.
    assert first("pkg.core", {"pkg.core": "pkg", "pkg": "pkg.core"}) is None


@pytest.fixture
def module() -> Iterator[str]:
    name = "failing_import_probe"
    sys.modules[name] = types.ModuleType(name)
    yield name
    del sys.modules[name]


def plan(module: str, source: str) -> ReloadPlan:
    return ReloadPlan(((module, compile(source, f"{module}.py", "exec")),), {})


def test_the_control_says_whether_the_modules_execute_again_cleanly(module: str) -> None:
    assert executes_cleanly(plan(module, "X = 1\n"), 10.0, lambda: None)
    assert not executes_cleanly(plan(module, "raise LookupError('twice')\n"), 10.0,
                                lambda: None)
    # A control that does not end is stopped at its limit, and does not count as clean.
    assert not executes_cleanly(plan(module, "import time\ntime.sleep(30)\n"), 0.2,
                                lambda: None)
    assert not hasattr(sys.modules[module], "X")  # only the child executed it
