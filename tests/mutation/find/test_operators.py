"""Each operator as a before/after table: source in, every mutated module out.

A case with an empty list is one where the operator must say no.
"""

from __future__ import annotations

import pytest

from metaeval.errors import InputError
from metaeval.mutation.find.operators import OPERATORS, select_operators
from metaeval.mutation.find.targets import mutants_in_source


def mutate(operator: str, source: str) -> list[str]:
    """Every mutated module one operator makes of ``source``, in site order."""
    mutants = mutants_in_source(
        source, path="m.py", module="m", operators=select_operators([operator])
    )
    return [mt.mutated_source for mt in mutants]


CASES: list[tuple[str, str, list[str]]] = [
    # negate_condition
    ("negate_condition", "if ok:\n    go()\n", ["if not ok:\n    go()\n"]),
    ("negate_condition", "if not ok:\n    go()\n", ["if ok:\n    go()\n"]),
    ("negate_condition", "while a and b:\n    go()\n", ["while not (a and b):\n    go()\n"]),
    ("negate_condition", "assert x < 3\n", ["assert not x < 3\n"]),
    ("negate_condition", "y = a if ok else b\n", ["y = a if not ok else b\n"]),
    ("negate_condition", "safe = [t for t in tools if t.allowed]\n",
     ["safe = [t for t in tools if not t.allowed]\n"]),
    ("negate_condition", "if a:\n    f()\nelif b:\n    g()\n",
     ["if not a:\n    f()\nelif b:\n    g()\n", "if a:\n    f()\nelif not b:\n    g()\n"]),
    # must say no: boilerplate no test runs, and expressions that are not tests
    ("negate_condition", 'if __name__ == "__main__":\n    main()\n', []),
    ("negate_condition", "if TYPE_CHECKING:\n    import x\n", []),
    ("negate_condition", "y = a and b\n", []),
    # ... and a test flip_comparison already negates (``a != b``); ``<`` is not one
    ("negate_condition", "if a == b:\n    go()\n", []),
    ("negate_condition", "while x is not None:\n    go()\n", []),
    ("negate_condition", "if a < b:\n    go()\n", ["if not a < b:\n    go()\n"]),
    # flip_comparison
    ("flip_comparison", "ok = n < limit\n", ["ok = n <= limit\n"]),
    ("flip_comparison", "ok = n >= limit\n", ["ok = n > limit\n"]),
    ("flip_comparison", "ok = a == b\n", ["ok = a != b\n"]),
    ("flip_comparison", "ok = a not in b\n", ["ok = a in b\n"]),
    ("flip_comparison", "ok = a is None\n", ["ok = a is not None\n"]),
    ("flip_comparison", "ok = 0 < n <= 9\n", ["ok = 0 <= n <= 9\n", "ok = 0 < n < 9\n"]),
    ("flip_comparison", "ok = n + 1\n", []),
    # swap_boolean_operator
    ("swap_boolean_operator", "ok = a and b\n", ["ok = a or b\n"]),
    ("swap_boolean_operator", "ok = a or b\n", ["ok = a and b\n"]),
    ("swap_boolean_operator", "ok = a & b\n", []),
    # swap_all_any
    ("swap_all_any", "ok = all(xs)\n", ["ok = any(xs)\n"]),
    ("swap_all_any", "ok = any(x > 1 for x in xs)\n", ["ok = all(x > 1 for x in xs)\n"]),
    ("swap_all_any", "ok = np.all(xs)\n", []),
    # swap_bool_literal
    ("swap_bool_literal", "strict = True\n", ["strict = False\n"]),
    ("swap_bool_literal", "def f(x=False):\n    pass\n", ["def f(x=True):\n    pass\n"]),
    # must say no: ``while True`` is negate_condition's fault; annotations are types
    ("swap_bool_literal", "while True:\n    go()\n", []),
    ("swap_bool_literal", "x: Literal[True] = y\n", []),
    # return_constant: the fail-open value comes from the annotation ...
    ("return_constant", "def ok(x) -> bool:\n    return x > 1\n",
     ["def ok(x) -> bool:\n    return True\n    return x > 1\n",
      "def ok(x) -> bool:\n    return False\n    return x > 1\n"]),
    ("return_constant", 'def ok(x) -> "bool":\n    """Doc."""\n    # why\n    return x\n',
     ['def ok(x) -> "bool":\n    """Doc."""\n    # why\n    return True\n    return x\n',
      'def ok(x) -> "bool":\n    """Doc."""\n    # why\n    return False\n    return x\n']),
    ("return_constant", "def v(x) -> list[str]:\n    return check(x)\n",
     ["def v(x) -> list[str]:\n    return []\n    return check(x)\n"]),
    ("return_constant", "def v(x) -> Mapping[str, int]:\n    return check(x)\n",
     ["def v(x) -> Mapping[str, int]:\n    return {}\n    return check(x)\n"]),
    ("return_constant", "def v(x) -> set[str]:\n    return check(x)\n",
     ["def v(x) -> set[str]:\n    return set()\n    return check(x)\n"]),
    ("return_constant", "def v(x) -> tuple[str, ...]:\n    return check(x)\n",
     ["def v(x) -> tuple[str, ...]:\n    return ()\n    return check(x)\n"]),
    ("return_constant", "def err(x) -> str | None:\n    return check(x)\n",
     ["def err(x) -> str | None:\n    return None\n    return check(x)\n"]),
    ("return_constant", "def err(x) -> typing.Optional[str]:\n    return check(x)\n",
     ["def err(x) -> typing.Optional[str]:\n    return None\n    return check(x)\n"]),
    # an equivalent variant (``return True`` before ``return True``) is left out
    ("return_constant", "def ok() -> bool: return True\n",
     ["def ok() -> bool: return False; return True\n"]),
    # ... or, without one, from return statements that all agree
    ("return_constant", "def ok(x):\n    if x:\n        return True\n    return x == 2\n",
     ["def ok(x):\n    return True\n    if x:\n        return True\n    return x == 2\n",
      "def ok(x):\n    return False\n    if x:\n        return True\n    return x == 2\n"]),
    ("return_constant", "def v(x):\n    return [y for y in x]\n",
     ["def v(x):\n    return []\n    return [y for y in x]\n"]),
    ("return_constant", "def err(x):\n    if x:\n        return None\n    return x.y\n",
     ["def err(x):\n    return None\n    if x:\n        return None\n    return x.y\n"]),
    ("return_constant", "def f():\n    def g():\n        return g\n    return x == 1\n",
     ["def f():\n    return True\n    def g():\n        return g\n    return x == 1\n",
      "def f():\n    return False\n    def g():\n        return g\n    return x == 1\n"]),
    # must say no: unclear or not fail-open types, generators, stubs
    ("return_constant", "def f(x):\n    return x.y\n", []),
    ("return_constant", "def f(x) -> None:\n    go(x)\n", []),
    ("return_constant", "def f(x) -> int:\n    return x\n", []),
    ("return_constant", "def f(x) -> tuple[bool, str]:\n    return x, ''\n", []),
    ("return_constant", "def f(x) -> list[int]:\n    yield x\n", []),
    ("return_constant", "def f(x) -> bool:\n    ...\n", []),
    ("return_constant", "def f(x) -> bool:\n    raise NotImplementedError\n", []),
    ("return_constant", "@abstractmethod\ndef f(x) -> bool:\n    return g(x)\n", []),
    # drop_guard_clause
    ("drop_guard_clause",
     "def pay(x):\n    if not approved(x):\n        raise Denied(x)\n    send(x)\n",
     ["def pay(x):\n    send(x)\n"]),
    ("drop_guard_clause", "def pay(x):\n    # guard\n    if x > LIMIT: return\n    send(x)\n",
     ["def pay(x):\n    send(x)\n"]),
    # must say no: not a guard (an else, nothing after it, a body that does not exit)
    ("drop_guard_clause",
     "def f(x):\n    if x:\n        raise E\n    else:\n        g()\n    h()\n", []),
    ("drop_guard_clause", "def f(x):\n    g()\n    if x:\n        raise E\n", []),
    ("drop_guard_clause", "def f(x):\n    if x:\n        y = 1\n    g()\n", []),
    ("drop_guard_clause", "for x in xs:\n    if x:\n        continue\n    g()\n", []),
    # shift_constant
    ("shift_constant", "if n > 3:\n    go()\n", ["if n > 4:\n    go()\n", "if n > 2:\n    go()\n"]),
    ("shift_constant", "limit = -1\n", ["limit = 0\n", "limit = -2\n"]),
    ("shift_constant", "ratio = 0.8\n", ["ratio = 1.8\n", "ratio = -0.2\n"]),
    # ``2.`` stays a float: ``1`` would be an int, another type and another fault
    ("shift_constant", "ratio = 2.\n", ["ratio = 3.0\n", "ratio = 1.0\n"]),
    ("shift_constant", "mask = 0xff\n", ["mask = 0x100\n", "mask = 0xfe\n"]),
    ("shift_constant", "budget = 1_000\n", ["budget = 1001\n", "budget = 999\n"]),
    # must say no: indexes and slices pick elements; metadata; types
    ("shift_constant", "x = a[0]\n", []),
    ("shift_constant", "x = a[1:-1]\n", []),
    ("shift_constant", "__version__ = (1, 2)\n", []),
    ("shift_constant", "x: Annotated[int, 3] = y\n", []),
    # swallow_exception
    ("swallow_exception", "def f():\n    raise ValueError('no')\n", ["def f():\n    pass\n"]),
    ("swallow_exception", "try:\n    go()\nexcept E:\n    log()\n    raise\n",
     ["try:\n    go()\nexcept E:\n    log()\n    pass\n"]),
    ("swallow_exception", "def f():\n    raise NotImplementedError('abstract')\n", []),
    # drop_call
    ("drop_call", "def f(x):\n    audit(x)\n    return x\n",
     ["def f(x):\n    pass\n    return x\n"]),
    ("drop_call", "async def f():\n    await confirm(); go()\n",
     ["async def f():\n    pass; go()\n", "async def f():\n    await confirm(); pass\n"]),
    ("drop_call", 'def f(x):\n    """Doc."""\n    y = redact(x)\n    ...\n', []),
    # empty_string_literal
    ("empty_string_literal", "ALLOWED = [\"admin\", 'owner']\n",
     ["ALLOWED = [\"\", 'owner']\n", "ALLOWED = [\"admin\", '']\n"]),
    ("empty_string_literal", 'PATTERN = r"\\d+"\n', ['PATTERN = r""\n']),
    ("empty_string_literal", "TOKEN = b'sk-'\n", ["TOKEN = b''\n"]),
    ("empty_string_literal", 'X = ("ab"\n     "cd")\n', ['X = ("")\n']),
    ("empty_string_literal", "X = '''many'''\n", ["X = ''\n"]),
    ("empty_string_literal", 'M = {"role": "admin"}\n', ['M = {"role": ""}\n']),
    # must say no: docstrings, keys, names, messages, metadata, types, already empty
    ("empty_string_literal",
     '"""Mod."""\nclass C:\n    """Cls."""\n    def f(self):\n        """Fn."""\n', []),
    ("empty_string_literal", 'x = d["key"] or d.get("other") or getattr(o, "name")\n', []),
    ("empty_string_literal", 'raise ValueError("bad")\n', []),
    ("empty_string_literal", 'assert ok, "why"\n', []),
    ("empty_string_literal", '__all__ = ["f"]\nT = TypeVar("T")\nx = ""\n', []),
    ("empty_string_literal", 'def f(x: "Thing") -> "bool":\n    pass\n', []),
    # remove_decorator
    ("remove_decorator", "@require_approval\ndef pay():\n    pass\n", ["def pay():\n    pass\n"]),
    ("remove_decorator",
     "class C:\n    @audited\n    @rate_limit(5)\n    def f(self):\n        pass\n",
     ["class C:\n    @rate_limit(5)\n    def f(self):\n        pass\n",
      "class C:\n    @audited\n    def f(self):\n        pass\n"]),
    # must say no: structural decorators, whose removal is a crash or an equivalent
    ("remove_decorator",
     "@dataclass(frozen=True)\nclass C:\n    @property\n    def f(self):\n        pass\n"
     "    @functools.lru_cache(maxsize=3)\n    def g(self):\n        pass\n", []),
]


@pytest.mark.parametrize(("operator", "before", "after"), CASES)
def test_operator_before_after(operator: str, before: str, after: list[str]) -> None:
    assert mutate(operator, before) == after


def test_every_operator_has_a_case_in_the_table() -> None:
    assert {operator for operator, _, _ in CASES} == set(OPERATORS)


def test_every_mutated_module_in_the_table_compiles() -> None:
    for _, _, after in CASES:
        for source in after:
            compile(source, "m.py", "exec")


def test_every_operator_has_a_one_line_description() -> None:
    for name, operator in OPERATORS.items():
        assert operator.name == name
        assert operator.description and "\n" not in operator.description


def test_select_operators_keeps_registry_order_and_restricts() -> None:
    chosen = select_operators(["swap_all_any", "negate_condition"])
    assert [o.name for o in chosen] == ["negate_condition", "swap_all_any"]
    assert len(select_operators()) == 12


def test_unknown_operator_is_an_input_error() -> None:
    with pytest.raises(InputError, match="'negate_conditions'"):
        select_operators(["negate_conditions"])
