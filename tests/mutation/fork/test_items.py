"""Which tests a child runs after a reload, and when their modules are collected again."""

from __future__ import annotations

import sys
from textwrap import dedent
from types import SimpleNamespace
from typing import cast

import pytest

from metaeval.mutation.fork.items import CollectAgainError, Recollected, run_order

TEST_A = dedent("""\
    import pytest

    N = 1


    @pytest.mark.parametrize("v", [N])
    def test_v(v):
        pass


    def test_other():
        pass
    """)


class Reloaded:
    """A plugin that, once the session has collected (and is live, as in a warm
    child), runs test_a's file changed by ``edit`` in test_a's namespace, as a
    reload does, and lists what ``Recollected`` gives, up to its first error."""

    def __init__(self, edit: tuple[str, str], pick: list[int], everything: bool) -> None:
        self.edit, self.pick, self.everything = edit, pick, everything
        self.old: list[pytest.Item] = []
        self.run: list[pytest.Item] = []
        self.error: Exception | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        self.old = list(session.items)
        module = self.old[0].getparent(pytest.Module)
        assert module is not None
        source = module.path.read_text(encoding="utf-8").replace(*self.edit)
        exec(compile(source, str(module.path), "exec"), vars(module.obj))
        selected = tuple(self.old[i] for i in self.pick)
        try:
            for item in Recollected(selected, frozenset({"test_a"}), self.everything):
                self.run.append(item)
        except CollectAgainError as e:
            self.error = e
        return True


def reloaded(pytester: pytest.Pytester, edit: tuple[str, str], pick: list[int],
             everything: bool) -> Reloaded:
    pytester.makepyfile(test_a=TEST_A, test_b="def test_b():\n    pass\n")
    plugin = Reloaded(edit, pick, everything)
    try:
        pytester.inline_run(plugins=[plugin])
    finally:
        for name in ("test_a", "test_b"):
            sys.modules.pop(name, None)
    assert [i.nodeid for i in plugin.old] == [
        "test_a.py::test_v[1]", "test_a.py::test_other", "test_b.py::test_b"]
    return plugin


def ids(found: list[pytest.Item]) -> list[str]:
    return [item.nodeid for item in found]


def test_a_selected_test_whose_id_is_gone_does_not_run(pytester: pytest.Pytester) -> None:
    # A pytest process of its own keeps the selected ids of its collection: the
    # parameter is now 2, so test_v[1] no longer exists there either.
    got = reloaded(pytester, ("N = 1", "N = 2"), [0, 1, 2], everything=False)
    assert ids(got.run) == ["test_a.py::test_other", "test_b.py::test_b"]
    assert got.run[0] is not got.old[1]  # collected again
    assert got.run[1] is got.old[2]  # its module was not executed again


def test_with_every_test_selected_the_new_ids_run_last(pytester: pytest.Pytester) -> None:
    got = reloaded(pytester, ("N = 1", "N = 2"), [0, 1, 2], everything=True)
    assert ids(got.run) == ["test_a.py::test_other", "test_b.py::test_b",
                            "test_a.py::test_v[2]"]
    assert got.error is None


def test_a_module_is_collected_again_only_when_the_run_reaches_it(
        pytester: pytest.Pytester) -> None:
    # Collecting test_a again now fails (a parameter for an argument test_v lacks);
    # the test before it is given first, and a mutant it kills never meets the error.
    got = reloaded(pytester, ('parametrize("v"', 'parametrize("w"'), [2, 1],
                   everything=False)
    assert ids(got.run) == ["test_b.py::test_b"]
    assert isinstance(got.error, CollectAgainError)


@pytest.mark.parametrize("flags", [("--deselect", "test_a.py::test_other"),
                                   ("-k", "not other"), ("-m", "not slow")])
def test_a_test_the_options_left_out_is_no_new_id(pytester: pytest.Pytester,
                                                  flags: tuple[str, ...]) -> None:
    # As in a pytest process of its own, the options that chose the session's tests
    # choose among those collected again: a test the user left out stays out. (On
    # inspect_ai a deselected test killed a mutant in the fork that a pytest process
    # of its own, running the user's selection, let survive.)
    marked = TEST_A.replace("def test_other", "@pytest.mark.slow\ndef test_other")
    pytester.makepyfile(test_a=marked, test_b="def test_b():\n    pass\n")
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n")
    plugin = Reloaded(("N = 1", "N = 2"), [0, 1], everything=True)
    try:
        pytester.inline_run(*flags, plugins=[plugin])
    finally:
        for name in ("test_a", "test_b"):
            sys.modules.pop(name, None)
    assert ids(plugin.old) == ["test_a.py::test_v[1]", "test_b.py::test_b"]
    assert ids(plugin.run) == ["test_b.py::test_b", "test_a.py::test_v[2]"]
    assert plugin.error is None


def test_a_child_runs_the_last_killer_then_the_covering_tests_then_the_rest() -> None:
    ids = ["a::slow", "a::fast", "b::covers_slow", "b::covers_fast", "c::killer", "c::other"]
    items = [cast(pytest.Item, SimpleNamespace(nodeid=i)) for i in ids]
    position = {i: n for n, i in enumerate(ids)}
    durations = {"a::slow": 0.5, "b::covers_slow": 0.5, "c::killer": 0.5}
    order = run_order(list(reversed(items)), position, durations, killers=("c::killer",),
                      first=("b::covers_slow", "b::covers_fast"))
    assert [i.nodeid for i in order] == ["c::killer", "b::covers_fast", "b::covers_slow",
                                         "a::fast", "c::other", "a::slow"]
    # Knowing nothing, fastest first in collection order, as before.
    plain = run_order(list(reversed(items)), position, durations)
    assert [i.nodeid for i in plain] == ["a::fast", "b::covers_fast", "c::other", "a::slow",
                                         "b::covers_slow", "c::killer"]
