"""Executing a mutated module and its dependents again, as a forked child does."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from textwrap import dedent

import pytest

from metaeval.mutation.child.foreign import library_dirs
from metaeval.mutation.fork import reload
from metaeval.mutation.fork.reload import ModuleGraph, ReloadPlan, apply_reload

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


AT_IMPORT = {("rl_limits", 4, "limit"): frozenset({"rl_rules"})}
"""What the import-time tracer saw: rl_rules's top level called limit()."""


def graph_of(root: Path) -> ModuleGraph:
    return ModuleGraph(root, (), AT_IMPORT)


def test_dependents_are_what_computed_from_the_module_at_import(loaded: Path) -> None:
    # rl_rules called limit() at import, rl_report read rl_rules.CAP: both must be
    # executed again, in that order. rl_table only holds the function in a dict,
    # which rebinding points at the new one; rl_other never looked.
    order = graph_of(loaded).dependents("rl_limits")
    assert order == ["rl_rules", "rl_report"]
    assert graph_of(loaded).dependents("rl_other") == []
    # Without the tracer's record, binding limit and holding it compute nothing.
    assert ModuleGraph(loaded, ()).dependents("rl_limits") == []


def test_modules_that_computed_from_each_other_run_in_the_order_their_imports_ended(
        loaded: Path) -> None:
    # rl_rules imported rl_report while it ran (so rl_report finished first), and
    # each holds an instance of the other's class: a cycle, ordered as a fresh
    # import would execute them.
    rules, report = sys.modules["rl_rules"], sys.modules["rl_report"]
    for module, other in ((rules, report), (report, rules)):
        kind = type("Made", (), {"__module__": other.__name__})
        module.__dict__["made"] = kind()
    graph = ModuleGraph(loaded, (), AT_IMPORT, {"rl_report": "rl_rules", "rl_rules": ""})
    assert graph.dependents("rl_limits") == ["rl_report", "rl_rules"]
    graph = ModuleGraph(loaded, (), AT_IMPORT, {"rl_rules": "rl_report", "rl_report": ""})
    assert graph.dependents("rl_limits") == ["rl_rules", "rl_report"]


def dependents(graph: ModuleGraph) -> list[str]:
    return graph.dependents("rl_limits")


def test_apply_reload_recomputes_what_dependents_made_at_import(loaded: Path) -> None:
    outsider = types.ModuleType("rl_outsider")  # a third-party registry, never re-executed
    outsider.HANDLERS = {"limit": sys.modules["rl_limits"].limit}  # type: ignore[attr-defined]
    sys.modules["rl_outsider"] = outsider
    try:
        graph = graph_of(loaded)
        plan = graph.plan("rl_limits", str(loaded / "rl_limits.py"),
                          MODULES["rl_limits"].replace("LIMIT = 3", "LIMIT = 4"))
        assert isinstance(plan, ReloadPlan)
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
    graph = graph_of(loaded)
    assert graph.plan("rl_limits", str(loaded / "rl_limits.py"), MODULES["rl_limits"]) \
        == "rl_report has no source to execute again"
    assert graph.plan("rl_not_loaded", "x.py", "X = 1\n") \
        == "rl_not_loaded is not a module of the project loaded by the tests"
    with pytest.raises(SyntaxError):
        graph.plan("rl_limits", str(loaded / "rl_limits.py"), "def (:\n")


def test_installed_code_inside_the_project_is_not_the_users(
        loaded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A virtual environment inside the repository, as `.ci/run` makes: a library
    # there that copied a user constant is not executed again.
    site = loaded / ".venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "rl_library.py").write_text("from rl_limits import LIMIT\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    importlib.import_module("rl_library")
    real = library_dirs()
    monkeypatch.setattr(reload, "library_dirs", lambda: (*real, str(site)))
    try:
        graph = graph_of(loaded)
        assert "rl_library" not in dependents(graph)
        assert "rl_rules" in dependents(graph)
        monkeypatch.setattr(reload, "library_dirs", lambda: real)
        assert "rl_library" in dependents(graph_of(loaded))
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
        assert "rl_budget" in dependents(graph)
        plan = graph.plan("rl_limits", str(loaded / "rl_limits.py"),
                          MODULES["rl_limits"].replace("LIMIT = 3", "LIMIT = 4"))
        assert isinstance(plan, ReloadPlan)
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
    assert isinstance(plan, ReloadPlan)
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
    assert graph.plan_callers("rl_limits", swaps, frozenset({"__main__"})) == (
        "it ran at import, called by '__main__', which is not a module of the project")
    assert graph.plan_callers("rl_limits", swaps, frozenset({"rl_limits"})) == (
        "it ran at import, and rl_limits depends on what it made")


def test_bindings_in_lists_and_class_bodies_are_rebound(loaded: Path) -> None:
    (loaded / "rl_holder.py").write_text(dedent("""\
        from rl_limits import limit

        CHECKS = [limit]


        class Rules:
            check = limit
        """), encoding="utf-8")
    holder = importlib.import_module("rl_holder")
    try:
        graph = graph_of(loaded)
        assert "rl_holder" not in dependents(graph)  # it holds limit, computes nothing
        plan = graph.plan("rl_limits", str(loaded / "rl_limits.py"),
                          MODULES["rl_limits"].replace("return LIMIT", "return LIMIT + 1"))
        assert isinstance(plan, ReloadPlan)
        apply_reload(plan)
        assert holder.CHECKS[0]() == 4 and holder.Rules.check() == 4 and holder.limit() == 4
    finally:
        del sys.modules["rl_holder"]


def test_a_module_is_executed_again_from_the_code_its_import_ran(loaded: Path) -> None:
    # The import's own code object, not the source compiled once more; a code object
    # of another file (the file moved, say) is not taken for it.
    file = sys.modules["rl_rules"].__file__
    assert file is not None
    ran = compile(Path(file).read_text(), file, "exec")
    elsewhere = compile("X = 1\n", str(loaded / "moved.py"), "exec")
    graph = ModuleGraph(loaded, (), AT_IMPORT, imported={"rl_rules": ran,
                                                         "rl_report": elsewhere})
    assert graph.code("rl_rules") is ran
    again = graph.code("rl_report")
    assert again is not None and again is not elsewhere
    assert again.co_filename == sys.modules["rl_report"].__file__


@pytest.mark.parametrize(("key", "keys"), [('""', [""]), ('"frequency"', ["frequency"])])
def test_a_registry_holds_what_the_mutated_module_registered(
        loaded: Path, key: str, keys: list[str]) -> None:
    # A registry filled at import: executing the mutated module registers under
    # the mutant's key, as a fresh import would; an entry under the original key
    # must go (not be pointed at the mutant), and a list holds it once, in its place.
    (loaded / "rl_registry.py").write_text(dedent("""\
        REGISTRY = {}
        HOOKS = []


        def register(name):
            def add(function):
                REGISTRY[name] = function
                HOOKS.append(function)
                return function
            return add
        """), encoding="utf-8")
    metrics = dedent("""\
        from rl_registry import register


        @register("frequency")
        def frequency():
            return 1
        """)
    (loaded / "rl_metrics.py").write_text(metrics, encoding="utf-8")
    registry = importlib.import_module("rl_registry")
    importlib.import_module("rl_metrics")
    registry.register("late")(lambda: 0)  # by a module imported later
    outsider = types.ModuleType("rl_outsider")  # holds it without registering it again
    outsider.HANDLERS = {"f": registry.REGISTRY["frequency"]}  # type: ignore[attr-defined]
    sys.modules["rl_outsider"] = outsider
    try:
        plan = ModuleGraph(loaded, ()).plan(
            "rl_metrics", str(loaded / "rl_metrics.py"),
            metrics.replace('"frequency"', key).replace("return 1", "return 2"))
        assert isinstance(plan, ReloadPlan)
        apply_reload(plan)
        assert [k for k in registry.REGISTRY if k != "late"] == keys
        assert registry.REGISTRY[keys[0]]() == 2
        assert [hook() for hook in registry.HOOKS] == [2, 0]  # as a fresh import orders them
        assert outsider.HANDLERS["f"]() == 2  # rebound: nothing registered it anew there
    finally:
        for name in ("rl_registry", "rl_metrics", "rl_outsider"):
            sys.modules.pop(name, None)
        sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "module", None) != "rl_metrics"]
