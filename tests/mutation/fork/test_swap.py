"""The warm runner's fast path: a rewrite mutant swapped in as code objects."""

from __future__ import annotations

import functools
import importlib.util
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from textwrap import dedent

import pytest

from metaeval.mutation.fork.planner import Planner
from metaeval.mutation.fork.protocol import WarmMutant
from metaeval.mutation.fork.reload import ReloadPlan
from metaeval.mutation.fork.swap import (
    OUTSIDE_FUNCTIONS,
    SwapPlan,
    apply_swap,
    changed_functions,
    original_code,
    plan_swap,
    swap_code,
)
from metaeval.mutation.model import MutantKind

SOURCE = dedent("""\
    from __future__ import annotations

    import base64
    import functools

    LIMIT = 3


    def allowed(n):
        return n <= LIMIT


    def evens(items):
        return [i for i in items if i % 2 == 0]


    class Gate:
        def open(self, n):
            return allowed(n)

        @staticmethod
        def name():
            return "gate"


    @functools.lru_cache(maxsize=None)
    def cached(n):
        return n + 1


    def with_default(n=LIMIT):
        return n


    def encode(data: bytes) -> bytes:
        return base64.b64encode(data)


    def added(n):
        def inner(x: int) -> int:
            return x + n
        return inner(1)
    """)


def mutated(old: str, new: str) -> str:
    assert old in SOURCE
    return SOURCE.replace(old, new, 1)


@pytest.mark.parametrize(("old", "new", "changed"), [
    ("return n <= LIMIT", "return n < LIMIT", ["allowed"]),
    # The comprehension's own code, and its def's (whose constants hold it); from
    # Python 3.12 the comprehension is inlined in its def (PEP 709).
    ("if i % 2 == 0]", "if i % 2 != 0]",
     ["evens"] + ["evens.<locals>.<listcomp>"] * (sys.version_info < (3, 12))),
    ("return allowed(n)", "return not allowed(n)", ["Gate.open"]),
    ('return "gate"', 'return ""', ["Gate.name"]),
    ("return n + 1", "return n + 2", ["cached"]),
    # Outside any def body: only re-executing the module puts these in place.
    ("LIMIT = 3", "LIMIT = 4", None),
    ("def with_default(n=LIMIT)", "def with_default(n=0)", None),
    ("@functools.lru_cache(maxsize=None)\n", "", None),
])
def test_changed_functions(old: str, new: str, changed: list[str] | None) -> None:
    pairs = changed_functions(compile(SOURCE, "m.py", "exec"),
                              compile(mutated(old, new), "m.py", "exec"))
    assert (None if pairs is None else [a.co_qualname for a, _ in pairs]) == changed


def test_an_unchanged_module_changes_no_function() -> None:
    assert changed_functions(compile(SOURCE, "m.py", "exec"),
                             compile(SOURCE, "m.py", "exec")) == []


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[str, types.ModuleType]]:
    name = f"swap_target_{abs(hash(tmp_path))}"
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    yield str(path), module
    del sys.modules[name]


def test_swapping_changes_every_reference_to_the_function(
        live: tuple[str, types.ModuleType]) -> None:
    file, module = live
    alias = module.allowed  # as `from m import allowed` would hold it
    assert alias(3) and module.Gate().open(3)
    assert swap_code(module.__name__, file, mutated("return n <= LIMIT", "return n < LIMIT"),
                     original_code(module.__name__))
    assert not alias(3) and not module.Gate().open(3)


def test_swapping_reaches_through_decorators(live: tuple[str, types.ModuleType]) -> None:
    file, module = live
    assert swap_code(module.__name__, file, mutated('return "gate"', 'return ""'),
                     original_code(module.__name__))
    assert module.Gate.name() == ""
    assert swap_code(module.__name__, file, mutated("return n + 1", "return n + 2"),
                     original_code(module.__name__))
    assert isinstance(module.cached, functools._lru_cache_wrapper)
    assert module.cached(1) == 3


def test_a_change_outside_a_function_is_not_swapped(live: tuple[str, types.ModuleType]
                                                    ) -> None:
    file, module = live
    assert not swap_code(module.__name__, file, mutated("LIMIT = 3", "LIMIT = 4"),
                         original_code(module.__name__))
    assert module.LIMIT == 3 and module.allowed(3)


def warm_mutant(file: str, module: types.ModuleType, source: str, line: int) -> WarmMutant:
    return WarmMutant(0, "m", MutantKind.REWRITE, module.__name__, file, file, "",
                      (line, 0, line, 1), source)


def test_the_planner_swaps_and_reruns_what_an_import_computed(
        live: tuple[str, types.ModuleType]) -> None:
    # allowed() untouched at import: a swap. Called by the top level of a user module
    # at import: a swap, then that module executed again. Called by code that is not
    # the user's (pytest collecting): its own module executed again, as for a change
    # outside a function.
    file, module = live
    mutant = warm_mutant(file, module, mutated("return n <= LIMIT", "return n < LIMIT"),
                         line_of("return n <= LIMIT"))
    code = module.allowed.__code__
    key = (module.__name__, code.co_firstlineno, code.co_qualname)

    def planner(callers: frozenset[str] | None) -> Planner:
        import_time = {} if callers is None else {key: callers}
        return Planner(Path(file).parent, (), [module.__name__], import_time, {}, {})

    swaps = planner(None).plan(mutant)
    assert isinstance(swaps, list) and [f for f, _ in swaps] == [module.allowed]
    sys.modules["swap_user"] = user = types.ModuleType("swap_user")
    user.__file__ = str(Path(file).parent / "swap_user.py")
    Path(user.__file__).write_text("X = 1\n", encoding="utf-8")
    try:
        rerun = planner(frozenset({"swap_user"})).plan(mutant)
        assert isinstance(rerun, ReloadPlan) and rerun.served is None
        assert rerun.modules == {"swap_user"} and [f for f, _ in rerun.swaps] == [module.allowed]
    finally:
        del sys.modules["swap_user"]
    whole = planner(frozenset({"__main__"})).plan(mutant)
    assert isinstance(whole, ReloadPlan) and whole.served is not None
    assert whole.modules == {module.__name__} and not whole.swaps
    assert module.allowed(3)  # planning changes nothing


def test_a_module_not_imported_is_not_swapped(tmp_path: Path) -> None:
    assert original_code("metaeval_no_such_module") is None
    assert not swap_code("metaeval_no_such_module", str(tmp_path / "x.py"), SOURCE, None)


def test_a_mutant_that_does_not_compile_raises(live: tuple[str, types.ModuleType]) -> None:
    file, module = live
    with pytest.raises(SyntaxError):
        swap_code(module.__name__, file, "def f(:\n", original_code(module.__name__))


def line_of(text: str) -> int:
    return SOURCE[:SOURCE.index(text)].count("\n") + 1


def test_a_mutant_compiled_as_its_statement_alone_is_swapped_in(
        live: tuple[str, types.ModuleType]) -> None:
    # Alone, the statement must compile to the code the module runs: with the
    # module's __future__ features (annotations as strings) and its imports (CPython
    # compiles a call on an imported module differently).
    file, module = live
    source = mutated("return base64.b64encode(data)", "return base64.b64encode(data[1:])")
    assert swap_code(module.__name__, file, source, original_code(module.__name__),
                     line=line_of("return base64.b64encode"))
    assert module.encode(b"ab") == b"Yg=="
    assert swap_code(module.__name__, file, mutated("return x + n", "return x - n"),
                     original_code(module.__name__), line=line_of("return x + n"))
    assert module.added(3) == -2
    assert swap_code(module.__name__, file, mutated("return allowed(n)", "return False"),
                     original_code(module.__name__), line=line_of("return allowed(n)"))
    assert not module.Gate().open(1)


def test_a_mutant_that_shortens_its_function_swaps_only_that_function(
        live: tuple[str, types.ModuleType]) -> None:
    # Compiled whole, every function below a shorter one moves up a line and would be
    # swapped too (wrong line numbers in its tracebacks); compiled alone, it stays.
    file, module = live
    source = mutated("def allowed(n):\n    return n <= LIMIT\n",
                     "def allowed(n): return n < LIMIT\n")
    original = original_code(module.__name__)
    plan = plan_swap(module.__name__, file, source, original, line=line_of("def allowed"))
    assert isinstance(plan, SwapPlan)
    assert [function for function, _ in plan.swaps] == [module.allowed]
    whole = plan_swap(module.__name__, file, source, original)
    assert isinstance(whole, SwapPlan)
    assert module.encode in [function for function, _ in whole.swaps]


def test_a_mutant_changing_more_than_its_statement_is_compiled_whole(
        live: tuple[str, types.ModuleType]) -> None:
    file, module = live
    original = original_code(module.__name__)
    assert original is not None
    source = mutated("return n <= LIMIT", "return n < LIMIT").replace("LIMIT = 3", "LIMIT = 4")
    old, new = original.pair(source, line_of("return n <= LIMIT"))
    assert old is original.code and new.co_consts != old.co_consts
    assert plan_swap(module.__name__, file, source, original,
                     line=line_of("return n <= LIMIT")) == OUTSIDE_FUNCTIONS


HARNESS = dedent("""\
    REGISTRY = {}


    def register(factory):
        # A wrapper that keeps the factory in its closure, with no __wrapped__:
        # the way registries of metrics and scorers are written.
        def wrapper(*args, **kwargs):
            return factory(*args, **kwargs)
        REGISTRY[factory.__name__] = wrapper
        return wrapper


    @register
    def threshold(limit=3):
        def check(n):
            return n <= limit
        return check


    BUILT_AT_IMPORT = [threshold()]
    double = lambda n: n * 2
    """)


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[tuple[str, types.ModuleType]]:
    name = f"swap_harness_{abs(hash(tmp_path))}"
    path = tmp_path / f"{name}.py"
    path.write_text(HARNESS, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    yield str(path), module
    del sys.modules[name]


def harness_line(text: str) -> int:
    return HARNESS[:HARNESS.index(text)].count("\n") + 1


def test_a_closure_made_at_import_gets_the_mutant(harness: tuple[str, types.ModuleType]
                                                  ) -> None:
    # The check built at import is held by a list, and its factory only by the
    # wrapper's closure: no module attribute leads to either, their code does.
    file, module = harness
    built = module.BUILT_AT_IMPORT[0]
    assert built(3)
    source = HARNESS.replace("return n <= limit", "return n < limit")
    plan = plan_swap(module.__name__, file, source, original_code(module.__name__),
                     line=harness_line("return n <= limit"))
    assert isinstance(plan, SwapPlan)
    # The factory's code (whose constants hold the check's) and the check's; only
    # the check's own body changed, so what the import made needs no recomputing.
    assert [(c.old.co_qualname, c.own, c.root) for c in plan.changes] == [
        ("threshold", False, True), ("threshold.<locals>.check", True, False)]
    assert module.threshold()(3)  # planning changes nothing
    apply_swap(plan.swaps)
    assert not built(3)
    assert not module.threshold()(3) and not module.REGISTRY["threshold"]()(3)


def test_a_lambda_bound_at_module_level_is_swapped(harness: tuple[str, types.ModuleType]
                                                   ) -> None:
    file, module = harness
    assert swap_code(module.__name__, file, HARNESS.replace("n * 2", "n * 3"),
                     original_code(module.__name__), line=harness_line("double ="))
    assert module.double(2) == 6


def test_a_closure_that_would_lose_a_variable_is_not_swapped(
        harness: tuple[str, types.ModuleType]) -> None:
    # The check made at import closes over ``limit``; code that no longer reads it
    # cannot be given to that closure (CPython checks the number of free variables).
    file, module = harness
    source = HARNESS.replace("return n <= limit", "return n <= 3")
    why = plan_swap(module.__name__, file, source, original_code(module.__name__),
                    line=harness_line("return n <= limit"))
    assert why == ("threshold.<locals>.check: a closure made earlier holds other variables "
                   "than the mutant's code uses")
    assert module.BUILT_AT_IMPORT[0](3)


def test_a_function_no_live_object_runs_is_not_swapped(harness: tuple[str, types.ModuleType]
                                                       ) -> None:
    # Were the decorator to copy the code into a new function, nothing alive would
    # run the original: swapping nothing would let the mutant survive unseen.
    file, module = harness
    original = original_code(module.__name__)
    assert original is not None
    source = HARNESS.replace("return check", "return None")
    line = harness_line("return check")
    assert isinstance(plan_swap(module.__name__, file, source, original, line=line), SwapPlan)
    assert plan_swap(module.__name__, file, source, original, line=line, live={}) == (
        "no live function runs the code of threshold (a decorator may have copied it)")
