"""Each operator as a before/after table: dedented source in, every mutated module out."""

from __future__ import annotations

from textwrap import dedent

import pytest

from metaeval.errors import InputError
from metaeval.mutation.operators import OPERATORS, select_operators
from metaeval.mutation.targets import mutants_in_source


def mutate(operator: str, source: str) -> list[str]:
    """Every mutated module one operator makes of ``source``, in site order."""
    mutants = mutants_in_source(
        dedent(source), path="m.py", module="m", operators=select_operators([operator])
    )
    return [mt.mutated_source for mt in mutants]


CASES: list[tuple[str, str, list[str]]] = [
    # negate_condition
    ("negate_condition", "if ok:\n    go()\n", ["if not ok:\n    go()\n"]),
    ("negate_condition", "if not ok:\n    go()\n", ["if ok:\n    go()\n"]),
    ("negate_condition", "while a and b:\n    go()\n", ["while not (a and b):\n    go()\n"]),
    ("negate_condition", "assert x < 3\n", ["assert not x < 3\n"]),
    ("negate_condition", "y = a if ok else b\n", ["y = a if not ok else b\n"]),
    ("negate_condition", "if a:\n    f()\nelif b:\n    g()\n",
     ["if not a:\n    f()\nelif b:\n    g()\n", "if a:\n    f()\nelif not b:\n    g()\n"]),
    # must say no: boilerplate that no test runs, and plain expressions
    ("negate_condition", 'if __name__ == "__main__":\n    main()\n', []),
    ("negate_condition", "if TYPE_CHECKING:\n    import x\n", []),
    ("negate_condition", "y = a and b\n", []),
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
]


@pytest.mark.parametrize(("operator", "before", "after"), CASES)
def test_operator_before_after(operator: str, before: str, after: list[str]) -> None:
    assert mutate(operator, before) == after


def test_every_operator_has_a_one_line_description() -> None:
    for name, operator in OPERATORS.items():
        assert operator.name == name
        assert operator.description and "\n" not in operator.description


def test_unknown_operator_is_an_input_error() -> None:
    with pytest.raises(InputError, match="'negate_conditions'"):
        select_operators(["negate_conditions"])
