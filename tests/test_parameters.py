"""No function in the package takes more than ``MOST`` parameters, read with ast.

A long parameter list is a value that was never named: the request, the plan or
the settings a phase hands the next (issue 46: ``run_judge_audit`` took 19). The
click callbacks are the one exception: they mirror their command's options, and
turn them into a request value straight away.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "metaeval"
MOST = 10
"""The anchors this project reads (mutmut, cosmic-ray, inspect_ai) have none over it."""


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = node.args
    named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if named and named[0].arg in ("self", "cls"):
        named = named[1:]  # the receiver is no parameter a caller passes
    return len(named) + (args.vararg is not None) + (args.kwarg is not None)


def _click_callback(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Decorated as a click command or with a click option or argument."""
    for decorator in node.decorator_list:
        called = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = ast.unparse(called)
        if name.endswith((".command", ".group", "click.option", "click.argument")):
            return True
    return False


def too_long(source: str, where: str) -> list[str]:
    """Each function of ``source`` over ``MOST`` parameters, click callbacks apart."""
    return [f"{where}:{node.lineno} {node.name} takes {_parameters(node)} parameters "
            f"(at most {MOST}; pass a request, plan or settings value)"
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and _parameters(node) > MOST and not _click_callback(node)]


def test_no_function_takes_more_than_ten_parameters() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "scaffold" in path.relative_to(PACKAGE).parts:
            continue  # templates with placeholders, not package code
        found += too_long(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    assert found == []


ELEVEN = ", ".join(f"p{n}" for n in range(11))
TEN = ", ".join(f"p{n}" for n in range(10))


def test_the_walk_finds_a_long_list_wherever_it_stands() -> None:
    source = (f"def f({ELEVEN}): ...\n"
              f"class C:\n    def m(self, *, {ELEVEN}): ...\n"
              f"async def g({TEN}, *rest): ...\n"
              f"def outer():\n    def inner({TEN}, **more): ...\n")
    assert sorted(line.split(" ")[1] for line in too_long(source, "x.py")) == [
        "f", "g", "inner", "m"]


def test_ten_parameters_a_receiver_and_click_callbacks_pass() -> None:
    source = (f"def f({TEN}): ...\n"
              f"class C:\n    def m(self, {TEN}): ...\n"
              f"@main.command()\n@click.option('--x')\ndef cmd({ELEVEN}): ...\n"
              f"@click.option('--x')\ndef cb({ELEVEN}): ...\n")
    assert too_long(source, "x.py") == []
    # A decorator that is not click's does not excuse a long list.
    assert len(too_long(f"@functools.cache\ndef f({ELEVEN}): ...\n", "x.py")) == 1
