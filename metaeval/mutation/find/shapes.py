"""Shapes of libcst nodes that the scanner and the operators ask about.

Plain ``isinstance`` checks: libcst's matchers would say the same, but
importing ``libcst.matchers`` takes about a seventh of a second, which every
``metaeval mutate`` run would pay before its first mutant. Pure functions of
one node; nothing here changes a tree.
"""

from __future__ import annotations

import re

import libcst as cst

_DUNDER = re.compile(r"__\w+__")


def is_name(node: cst.CSTNode | None, value: str | None = None) -> bool:
    """A bare name, ``value`` when given."""
    return isinstance(node, cst.Name) and (value is None or node.value == value)


def is_docstring(statement: cst.CSTNode) -> bool:
    """A statement line that holds a string literal and nothing else."""
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, cst.SimpleString | cst.ConcatenatedString))


def is_string_literal(node: cst.CSTNode) -> bool:
    """A string literal: plain, an f-string, or an implicit concatenation of them."""
    return isinstance(node, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString)


def _is_plain_string(node: cst.CSTNode) -> bool:
    """A literal with no f-string part: evaluating it calls nothing."""
    if isinstance(node, cst.ConcatenatedString):
        return _is_plain_string(node.left) and _is_plain_string(node.right)
    return isinstance(node, cst.SimpleString)


def is_bare_string_statement(node: cst.CSTNode) -> bool:
    """A statement that is only a string literal: a docstring wherever it stands (a
    module's, a class's, a function's, or an attribute's under ``X = 1``), or any
    other string statement. It has no effect at run time, so nothing in it is a
    fault. An f-string statement is left out: formatting it calls code.
    """
    if isinstance(node, cst.SimpleStatementLine):
        return bool(node.body) and all(is_bare_string_statement(s) for s in node.body)
    return isinstance(node, cst.Expr) and _is_plain_string(node.value)


def is_stub_statement(statement: cst.CSTNode) -> bool:
    """``pass``, ``...`` or a bare string: a body with nothing to mutate."""
    return isinstance(statement, cst.Pass) or (
        isinstance(statement, cst.Expr)
        and isinstance(statement.value, cst.Ellipsis | cst.SimpleString))


def raises_not_implemented(node: cst.CSTNode) -> bool:
    """``raise NotImplementedError`` or ``raise NotImplementedError(...)``."""
    if not isinstance(node, cst.Raise):
        return False
    exc = node.exc
    return is_name(exc, "NotImplementedError") or (
        isinstance(exc, cst.Call) and is_name(exc.func, "NotImplementedError"))


def is_boilerplate_if(node: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":`` or ``if TYPE_CHECKING:`` (also through a module)."""
    if not isinstance(node, cst.If):
        return False
    test = node.test
    if is_name(test, "TYPE_CHECKING") or (
            isinstance(test, cst.Attribute) and is_name(test.attr, "TYPE_CHECKING")):
        return True
    return (isinstance(test, cst.Comparison) and is_name(test.left, "__name__")
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
            and isinstance(test.comparisons[0].comparator, cst.SimpleString))


def is_dunder_name(node: cst.CSTNode) -> bool:
    """A name such as ``__all__`` or ``__version__``."""
    return isinstance(node, cst.Name) and _DUNDER.fullmatch(node.value) is not None


def is_call(expr: cst.CSTNode) -> bool:
    """A call, awaited or not."""
    return isinstance(expr, cst.Call) or (
        isinstance(expr, cst.Await) and isinstance(expr.expression, cst.Call))
