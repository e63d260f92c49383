"""Executing a mutated module and its dependents again, as a forked child does."""

from __future__ import annotations

import importlib
import sys
import sysconfig
import types
from collections.abc import Iterator
from pathlib import Path
from textwrap import dedent

import pytest

from metaeval.mutation.reload import ModuleGraph, apply_reload

MODULES = {
    "rl_limits": "LIMIT = 3\n\n\ndef limit():\n    return LIMIT\n",
    # Uses rl_limits by name and keeps its function in a registry.
    "rl_rules": dedent("""\
        from rl_limits import limit

        RULES = {"limit": limit}
        CAP = limit() * 2
        """),
    # Uses rl_limits only through rl_rules.
    "rl_report": "import rl_rules\n\nSHOWN = f\"cap {rl_rules.CAP}\"\n",
    # Uses rl_limits only through a dict value.
    "rl_table": "import importlib\n\nTABLE = {'f': importlib.import_module('rl_limits').limit}\n",
    "rl_other": "X = 1\n",
}


@pytest.fixture
def loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name, source in MODULES.items():
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in MODULES:
        importlib.import_module(name)
    yield tmp_path
    for name in MODULES:
        sys.modules.pop(name, None)
    sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "module", None) not in MODULES]


def test_dependents_come_after_what_they_use(loaded: Path) -> None:
    graph = ModuleGraph(loaded, ())
    assert graph.dependents("rl_limits") is not None
    order = graph.dependents("rl_limits") or []
    assert set(order) == {"rl_rules", "rl_report", "rl_table"}  # not rl_other
    assert order.index("rl_rules") < order.index("rl_report")
    assert graph.dependents("rl_other") == []


def test_a_cycle_among_dependents_cannot_be_ordered(loaded: Path) -> None:
    rules, report = sys.modules["rl_rules"], sys.modules["rl_report"]
    shown_by = types.FunctionType((lambda: None).__code__, {"__name__": "rl_report"})
    shown_by.__module__ = "rl_report"
    report.__dict__["shown_by"] = shown_by
    rules.__dict__["back"] = shown_by  # rl_rules now uses rl_report, which uses rl_rules
    assert ModuleGraph(loaded, ()).dependents("rl_limits") is None


def test_apply_reload_recomputes_what_dependents_made_at_import(loaded: Path) -> None:
    outsider = types.ModuleType("rl_outsider")  # a third-party registry, never re-executed
    outsider.HANDLERS = {"limit": sys.modules["rl_limits"].limit}  # type: ignore[attr-defined]
    sys.modules["rl_outsider"] = outsider
    try:
        graph = ModuleGraph(loaded, ())
        plan = graph.plan("rl_limits", str(loaded / "rl_limits.py"),
                          MODULES["rl_limits"].replace("LIMIT = 3", "LIMIT = 4"))
        assert plan is not None
        apply_reload(plan)
    finally:
        del sys.modules["rl_outsider"]
    import rl_report  # type: ignore[import-not-found]
    import rl_rules  # type: ignore[import-not-found]
    import rl_table  # type: ignore[import-not-found]

    assert rl_rules.CAP == 8 and rl_report.SHOWN == "cap 8"
    assert rl_rules.RULES["limit"]() == 4 and rl_table.TABLE["f"]() == 4
    assert outsider.HANDLERS["limit"]() == 4
    assert sys.modules["rl_other"].X == 1


def test_a_module_without_source_cannot_be_planned(loaded: Path) -> None:
    (loaded / "rl_report.py").unlink()
    graph = ModuleGraph(loaded, ())
    assert graph.plan("rl_limits", str(loaded / "rl_limits.py"), MODULES["rl_limits"]) is None
    assert graph.plan("rl_not_loaded", "x.py", "X = 1\n") is None
    with pytest.raises(SyntaxError):
        graph.plan("rl_limits", str(loaded / "rl_limits.py"), "def (:\n")


def test_installed_code_inside_the_project_is_not_the_users(
        loaded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A virtual environment inside the repository, as `.ci/run` makes: a library
    # there that holds a user function is not executed again, only rebound.
    site = loaded / ".venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "rl_library.py").write_text("from rl_limits import limit\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    importlib.import_module("rl_library")
    real = sysconfig.get_paths()
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {**real, "purelib": str(site)})
    try:
        graph = ModuleGraph(loaded, ())
        assert "rl_library" not in (graph.dependents("rl_limits") or [])
        assert "rl_rules" in (graph.dependents("rl_limits") or [])
        monkeypatch.setattr(sysconfig, "get_paths", lambda: real)
        assert "rl_library" in (ModuleGraph(loaded, ()).dependents("rl_limits") or [])
    finally:
        del sys.modules["rl_library"]


def test_a_constant_imported_by_name_is_taken_again(loaded: Path) -> None:
    # ``from rl_limits import LIMIT`` copies an int: no identity leads back to
    # rl_limits, so only the import statement shows rl_budget uses it.
    (loaded / "rl_budget.py").write_text(
        "from rl_limits import LIMIT\n\n\ndef budget():\n    return LIMIT * 10\n",
        encoding="utf-8")
    importlib.import_module("rl_budget")
    try:
        graph = ModuleGraph(loaded, ())
        assert "rl_budget" in (graph.dependents("rl_limits") or [])
        plan = graph.plan("rl_limits", str(loaded / "rl_limits.py"),
                          MODULES["rl_limits"].replace("LIMIT = 3", "LIMIT = 4"))
        assert plan is not None
        apply_reload(plan)
        assert sys.modules["rl_budget"].budget() == 40
    finally:
        del sys.modules["rl_budget"]


def limit_swapped(new_body: str) -> list[tuple[types.FunctionType, types.CodeType]]:
    """``rl_limits.limit`` given another body, as a swap plan holds it."""
    limits = sys.modules["rl_limits"]
    scratch: dict[str, object] = {}
    exec(compile(f"def limit():\n    return {new_body}\n", str(limits.__file__), "exec"),
         vars(limits) | scratch, scratch)
    code = scratch["limit"].__code__  # type: ignore[attr-defined]
    return [(limits.limit, code)]


def test_a_function_that_ran_at_import_reruns_only_its_callers(loaded: Path) -> None:
    # rl_rules computed CAP by calling limit() at import: executing rl_rules (and
    # what uses it) again computes it with the mutant; rl_limits itself is left
    # alone, and rl_table keeps its entry, which is the swapped function.
    graph = ModuleGraph(loaded, ())
    plan = graph.plan_callers("rl_limits", limit_swapped("LIMIT + 1"), frozenset({"rl_rules"}))
    assert plan is not None
    assert [name for name, _ in plan.executed] == ["rl_rules", "rl_report"]
    table = sys.modules["rl_table"].TABLE
    apply_reload(plan)
    assert sys.modules["rl_rules"].CAP == 8 and sys.modules["rl_report"].SHOWN == "cap 8"
    assert sys.modules["rl_limits"].LIMIT == 3 and table["f"]() == 4


def test_callers_that_cannot_be_executed_again_leave_a_full_reload(loaded: Path) -> None:
    graph = ModuleGraph(loaded, ())
    swaps = limit_swapped("LIMIT + 1")
    # A call from pytest collecting (no user module's top level) or from the
    # function's own module, which would define it anew from the original.
    assert graph.plan_callers("rl_limits", swaps, frozenset({"__main__"})) is None
    assert graph.plan_callers("rl_limits", swaps, frozenset({"rl_limits"})) is None
