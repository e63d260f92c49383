"""The parent side of the mutation runner reads as the protocol it speaks: no
function there runs past ``LIMIT`` lines (issue 37: a 97-line polling loop with a
dozen running totals was where the fork runner's bugs hid)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 60
PARENT_SIDE = (
    "metaeval/mutation/fork/parent.py",
    "metaeval/mutation/subprocess/parent.py",
    "metaeval/mutation/run/runner.py",
    "metaeval/mutation/isolation/outcome.py",
)
"""What runs in ``metaeval mutate`` to run the mutants: each isolation's parent, the
run's order, the status ladder both isolations share."""


def too_long(source: str, limit: int = LIMIT) -> list[tuple[str, int]]:
    """Each function (methods and nested ones included) longer than ``limit`` lines,
    decorators and docstring counted, with its length."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > limit:
                found.append((node.name, length))
    return found


def test_no_function_of_the_parent_side_is_over_the_limit() -> None:
    long = {path: too_long((ROOT / path).read_text(encoding="utf-8")) for path in PARENT_SIDE}
    assert {path: found for path, found in long.items() if found} == {}


def _function(name: str, lines: int) -> str:
    body = "".join(f"    x{i} = {i}\n" for i in range(lines - 2))
    return f"@staticmethod\ndef {name}() -> None:\n{body}"


def test_a_function_one_line_over_is_found_and_one_at_the_limit_is_not() -> None:
    at_limit, over = _function("fits", LIMIT), _function("sprawls", LIMIT + 1)
    assert len(at_limit.splitlines()) == LIMIT  # the decorator counts
    nested = "class Loop:\n" + "".join(f"    {line}\n" for line in over.splitlines())
    assert too_long(at_limit) == []
    assert too_long(over) == [("sprawls", LIMIT + 1)]
    assert too_long(nested) == [("sprawls", LIMIT + 1)]
