"""What a module's import added to registries, withdrawn before a forked child
executes it again: in process, and fork against subprocess isolation."""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from importlib.machinery import ModuleSpec
from pathlib import Path
from textwrap import dedent

import pytest

from metaeval.mutation.fork.registries import (
    Added,
    Ledger,
    project_modules,
    restore_order,
    withdraw,
)
from metaeval.mutation.fork.reload import ExecError, ModuleGraph, ReloadPlan, apply_reload
from tests.mutation.conftest import METAEVAL, small_project

REGISTRY = dedent("""\
    SCORERS = {}
    HOOKS = []
    SEEN = set()


    class Plugins:
        table = {}


    def register(name):
        def add(function):
            if name in SCORERS:
                raise ValueError(f"scorer {name!r} is already registered")
            SCORERS[name] = function
            return function
        return add


    def hook(function):
        if any(h.__name__ == function.__name__ for h in HOOKS):
            raise ValueError(f"hook {function.__name__!r} is already added")
        HOOKS.append(function)
        SEEN.add(function)
        return function


    def plugin(name):
        def add(cls):
            if name in Plugins.table:
                raise ValueError(f"plugin {name!r} is already registered")
            Plugins.table[name] = cls
            return cls
        return add


    register("builtin")(len)  # the registry's own entry: nobody's to withdraw
    """)
MODULES = {
    "rg_registry": REGISTRY,
    # Untracked (third party): what it registers when the project first imports it
    # stays, since executing the project's module again does not import it again.
    "rg_third": "import rg_registry\n\nrg_registry.register('third')(abs)\n",
    "rg_user_b": dedent("""\
        from rg_registry import hook, register


        @register("b")
        def b():
            return "b"


        @hook
        def quiet(text):
            return text.lower()
        """),
    "rg_user_a": dedent("""\
        from rg_registry import hook, plugin, register


        @register("a")
        def a():
            return "a"


        @hook
        def loud(text):
            return text.upper()


        import rg_third  # noqa: E402
        import rg_user_b  # noqa: E402


        @plugin("p")
        class P:
            pass


        @register("a2")
        def a2():
            return "a2"
        """),
}


@pytest.fixture
def watched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ledger]:
    for name, source in MODULES.items():
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    ledger = Ledger(lambda spec: spec.name.startswith("rg_user"))
    ledger.start()
    try:
        importlib.import_module("rg_user_a")
    finally:
        ledger.stop()
        ledger.close()
    yield ledger
    for name in MODULES:
        sys.modules.pop(name, None)
    sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "module", None) not in MODULES]


def shown(entries: tuple[Added, ...]) -> list[object]:
    return [getattr(e.key, "__name__", e.key) for e in entries]


def test_each_module_is_filed_what_its_own_top_level_added(watched: Ledger) -> None:
    registry = sys.modules["rg_registry"]
    registered = watched.registered
    # a's entries in the dict, the list, the set and the class attribute, in the
    # order it made them; not b's (a tracked import it made), not rg_third's (an
    # untracked one), not the registry's own.
    def by_container(module: str) -> list[list[object]]:
        return [shown(tuple(e for e in registered[module] if e.container is container))
                for container in (registry.SCORERS, registry.HOOKS, registry.SEEN,
                                  registry.Plugins.table)]

    assert by_container("rg_user_a") == [["a", "a2"], ["loud"], ["loud"], ["p"]]
    assert by_container("rg_user_b") == [["b"], ["quiet"], ["quiet"], []]
    assert len(registered["rg_user_a"]) == 5 and len(registered["rg_user_b"]) == 3
    assert set(registered) == {"rg_user_a", "rg_user_b"}


def test_a_module_is_executed_again_into_registries_as_a_fresh_import_finds_them(
        watched: Ledger, tmp_path: Path) -> None:
    registry = sys.modules["rg_registry"]
    graph = ModuleGraph(tmp_path, (), registered=watched.registered)
    source = MODULES["rg_user_a"].replace('"a2"', '"a3"')
    plan = graph.plan("rg_user_a", str(tmp_path / "rg_user_a.py"), source)
    assert isinstance(plan, ReloadPlan)
    apply_reload(plan)  # raised "scorer 'a' is already registered" before
    # The changed key leaves nothing under the old one; every other module's entry
    # stays, each where a fresh import puts it.
    assert list(registry.SCORERS) == ["builtin", "a", "third", "b", "a3"]
    assert [hook("Ab") for hook in registry.HOOKS] == ["AB", "ab"]
    assert len(registry.SEEN) == 2 and set(registry.Plugins.table) == {"p"}
    assert registry.Plugins.table["p"] is sys.modules["rg_user_a"].P
    assert registry.HOOKS[0] is sys.modules["rg_user_a"].loud


def test_without_the_record_executing_again_raises(watched: Ledger, tmp_path: Path) -> None:
    # The mirror: with nothing filed, the registry refuses as before.
    plan = ModuleGraph(tmp_path, ()).plan("rg_user_a", str(tmp_path / "rg_user_a.py"),
                                          MODULES["rg_user_a"])
    assert isinstance(plan, ReloadPlan)
    with pytest.raises(ExecError) as raised:
        apply_reload(plan)
    assert "'a' is already registered" in str(raised.value.__cause__)


def test_only_entries_still_as_added_are_withdrawn() -> None:
    def mine() -> None: ...

    def theirs() -> None: ...

    table: dict[str, object] = {"x": mine, "y": mine, "z": theirs}
    hooks: list[object] = [theirs, mine, theirs]
    seen = {mine, theirs}
    table["y"] = theirs  # replaced since by another module: not ours to take
    entries = [Added(table, "x", mine), Added(table, "y", mine), Added(hooks, mine, mine),
               Added(seen, mine, mine), Added(table, "gone", mine)]
    done = withdraw(entries)
    assert table == {"y": theirs, "z": theirs}
    assert hooks == [theirs, theirs] and seen == {theirs}
    table["x"] = mine  # registered again by the execution: back in its place
    hooks.append(mine)
    restore_order(done)
    assert list(table) == ["x", "y", "z"] and hooks == [theirs, mine, theirs]


def test_the_project_is_what_the_packages_and_the_root_hold(tmp_path: Path) -> None:
    tracked = project_modules(tmp_path, ["pkg"])
    (tmp_path / "mod.py").write_text("", encoding="utf-8")
    assert tracked(ModuleSpec("pkg.sub", None))
    inside = importlib.util.spec_from_file_location("mod", tmp_path / "mod.py")
    assert inside is not None and tracked(inside)
    assert not tracked(ModuleSpec("json", None, origin="built-in"))
    json_spec = importlib.util.find_spec("json")
    assert json_spec is not None and not tracked(json_spec)


REGISTRY_PROJECT = {
    "registry.py": REGISTRY,
    "late.py": """\
        from registry import hook, register


        @register("late")
        def late(value):
            return value


        @hook
        def whisper(text):
            return text.lower()
        """,
    "scorers.py": """\
        from registry import hook, register

        THRESHOLD = 0.5


        @register("exact")
        def exact(answer, target):
            return answer.strip() == target.strip()


        @hook
        def shout(text):
            return text.upper()


        import late  # noqa: E402  registers while this module runs: late's, not ours


        @register("above")
        def above(value):
            return value > THRESHOLD
        """,
    "plugins.py": """\
        from registry import plugin

        GREETING = "hello"


        @plugin("greeter")
        class Greeter:
            word = GREETING

            def greet(self, name):
                return f"{self.word} {name}"
        """,
    "test_registry.py": """\
        import plugins
        import scorers
        from registry import HOOKS, SCORERS, Plugins


        def test_exact():
            assert SCORERS["exact"]("a ", "a")


        def test_above():
            assert SCORERS["above"](100) and not SCORERS["above"](-100)


        def test_order():
            assert list(SCORERS) == ["builtin", "exact", "late", "above"]
            assert [hook("Ab") for hook in HOOKS] == ["AB", "ab"]


        def test_plugin():
            assert Plugins.table["greeter"]().greet("bob").endswith("bob")
        """,
}


# A whole mutate run (seconds of wall time): in CI's slow step, not the README's run.
@pytest.mark.slow
def test_registries_refusing_duplicates_keep_their_mutants_in_the_fork(tmp_path: Path) -> None:
    # A dict filled by a decorator, a list, a class attribute: each refuses a second
    # registration, so executing scorers.py or plugins.py again raised and sent the
    # mutant to a process of its own. late.py registers while scorers.py runs: a
    # mutant of THRESHOLD survives only if late's entries stay, in their places.
    small_project(tmp_path, REGISTRY_PROJECT, [])
    (tmp_path / "pyproject.toml").write_text(dedent("""\
        [tool.pytest.ini_options]
        pythonpath = ['.']

        [tool.metaeval.mutate]
        targets = ["scorers.py", "plugins.py"]
        operators = ["shift_constant", "remove_decorator", "empty_string_literal"]
        """), encoding="utf-8")
    outputs = {}
    for isolation in ("fork", "subprocess"):
        done = subprocess.run([METAEVAL, "mutate", "--format", "json", "--no-cache",
                               "--isolation", isolation, "--report", str(tmp_path / "r.json")],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stdout + done.stderr  # survivors: exit 1
        outputs[isolation] = json.loads(done.stdout)
    fork, fresh = outputs["fork"], outputs["subprocess"]
    statuses = [(m["id"], m["status"], m["killed_by"]) for m in fork["mutants"]]
    assert statuses == [(m["id"], m["status"], m["killed_by"]) for m in fresh["mutants"]]
    assert fork["timing"]["deferred"] == 0
    assert fork["timing"]["reloaded"] == len(statuses)
    by_id = {mutant: status for mutant, status, _ in statuses}
    assert by_id["scorers.py::<module>::shift_constant::0"] == "Survived"
    assert by_id["plugins.py::Greeter::remove_decorator::0"] == "Killed"
    assert by_id["scorers.py::exact::empty_string_literal::0"] == "Killed"


# A whole mutate run (seconds of wall time): in CI's slow step, not the README's run.
@pytest.mark.slow
def test_a_registry_it_cannot_see_still_gets_a_process_of_its_own_with_a_note(
        tmp_path: Path) -> None:
    # The mirror: a registry held by an instance (as pluggy's plugin manager holds
    # its plugins) is nothing a child can withdraw, so executing scorers.py again
    # still raises; the mutant runs in a process of its own, as before, and the
    # note says what was tried, what it cost and what would keep it in the fork.
    small_project(tmp_path, {
        "manager.py": """\
            class Manager:
                def __init__(self):
                    self.names = {}

                def register(self, name):
                    def add(function):
                        if name in self.names:
                            raise ValueError(f"{name!r} is already registered")
                        self.names[name] = function
                        return function
                    return add


            MANAGER = Manager()
            """,
        "scorers.py": """\
            from manager import MANAGER

            LIMIT = 2


            @MANAGER.register("exact")
            def exact(a, b):
                return a == b
            """,
        "test_scorers.py": """\
            import scorers
            from manager import MANAGER


            def test_exact():
                assert MANAGER.names["exact"](1, 1) and scorers.LIMIT == 2
            """}, ["shift_constant"])
    (tmp_path / "pyproject.toml").write_text(
        (tmp_path / "pyproject.toml").read_text(encoding="utf-8").replace(
            '["manager.py", "scorers.py"]', '["scorers.py"]'), encoding="utf-8")
    outputs = {}
    for isolation in ("fork", "subprocess"):
        done = subprocess.run([METAEVAL, "mutate", "--format", "json", "--no-cache",
                               "--isolation", isolation, "--report", str(tmp_path / "r.json")],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        outputs[isolation] = json.loads(done.stdout)
    fork = outputs["fork"]
    assert [(m["id"], m["status"]) for m in fork["mutants"]] == [
        (m["id"], m["status"]) for m in outputs["subprocess"]["mutants"]]
    assert fork["timing"]["deferred"] == len(fork["mutants"]) > 0
    for mutant in fork["mutants"]:
        note = mutant["own_process"]
        assert note.startswith("executing scorers again raised ValueError: 'exact' is "
                               "already registered (its first import added nothing"), note
        assert "keeps such mutants in the fork" in note
        assert "a pytest process of its own took " in note and "starting and collecting" in note
