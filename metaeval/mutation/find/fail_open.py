"""The fail-open value of a function: what ``return_constant`` makes it return at once.

A safety check fails open when it answers "allowed" without looking: ``True``
for a bool, an empty collection for "the violations found", ``None`` for "the
error, if any". The value is read from the return annotation, or inferred
from the function's own ``return`` statements when they all agree.

Pure functions over libcst nodes; nothing here reads files or imports code.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from metaeval.mutation.find.shapes import is_name

# The fail-open value of each return type: the answer that lets everything through.
_EMPTY_BY_TYPE: dict[str, str] = {
    **dict.fromkeys(("list", "List", "Sequence", "MutableSequence", "Iterable", "Collection"),
                    "[]"),
    **dict.fromkeys(("dict", "Dict", "Mapping", "MutableMapping"), "{}"),
    **dict.fromkeys(("set", "Set", "MutableSet", "AbstractSet"), "set()"),
    **dict.fromkeys(("frozenset", "FrozenSet"), "frozenset()"),
    **dict.fromkeys(("tuple", "Tuple"), "()"),
}
_BOOL = ("True", "False")
_NONE = ("None",)
_BOOL_CALLS = frozenset({"all", "any", "isinstance", "issubclass", "callable", "hasattr", "bool"})


def last_name(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return ""


def _constants_for_annotation(expr: cst.BaseExpression) -> tuple[str, ...]:
    if isinstance(expr, cst.SimpleString):
        # ``-> "bool"``: a forward reference is still a type.
        value = expr.evaluated_value
        try:
            inner = cst.parse_expression(value if isinstance(value, str) else "")
        except cst.ParserSyntaxError:
            return ()
        return _constants_for_annotation(inner)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        if is_name(expr.left, "None") or is_name(expr.right, "None"):
            return _NONE
        left, right = (_constants_for_annotation(e) for e in (expr.left, expr.right))
        return _NONE if _NONE in (left, right) else ()
    if isinstance(expr, cst.Subscript):
        outer = last_name(expr.value)
        if outer == "Optional":
            return _NONE
        if outer == "Union":
            members = [e.slice.value for e in expr.slice if isinstance(e.slice, cst.Index)]
            return _NONE if any(is_name(e, "None") for e in members) else ()
        last = expr.slice[-1].slice
        variadic = isinstance(last, cst.Index) and isinstance(last.value, cst.Ellipsis)
        if outer in ("tuple", "Tuple") and not variadic:
            return ()  # ``tuple[bool, str]`` has a fixed length: ``()`` would just crash
        return (_EMPTY_BY_TYPE[outer],) if outer in _EMPTY_BY_TYPE else ()
    name = last_name(expr)
    if name == "bool":
        return _BOOL
    return (_EMPTY_BY_TYPE[name],) if name in _EMPTY_BY_TYPE else ()


def own_nodes(function: cst.FunctionDef) -> list[cst.CSTNode]:
    """The nodes of ``function``'s body that belong to it, not to a nested def or lambda."""
    found: list[cst.CSTNode] = []
    pending: list[cst.CSTNode] = [function.body]
    while pending:
        node = pending.pop()
        found.append(node)
        if not isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Lambda):
            pending.extend(reversed(node.children))
    return found


def _is_boolish(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value in _BOOL
    if isinstance(expr, cst.Comparison):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return isinstance(expr.operator, cst.Not)
    if isinstance(expr, cst.BooleanOperation):
        return _is_boolish(expr.left) and _is_boolish(expr.right)
    if isinstance(expr, cst.Call):
        return is_name(expr.func) and last_name(expr.func) in _BOOL_CALLS
    return False


_EMPTY_BY_LITERAL: tuple[tuple[tuple[type[cst.CSTNode], ...], str], ...] = (
    ((cst.List, cst.ListComp), "[]"),
    ((cst.Dict, cst.DictComp), "{}"),
    ((cst.Set, cst.SetComp), "set()"),
    ((cst.Tuple,), "()"),
)


def _constants_from_returns(returns: Sequence[cst.Return]) -> tuple[str, ...]:
    """The fail-open constants when every ``return`` agrees on a kind of value, else none."""
    values = [r.value for r in returns
              if r.value is not None and not is_name(r.value, "None")]
    if not values:
        return ()
    if len(values) < len(returns):
        return _NONE
    if all(_is_boolish(v) for v in values):
        return _BOOL
    for types, empty in _EMPTY_BY_LITERAL:
        if all(isinstance(v, types) for v in values):
            return (empty,)
    return ()


def fail_open_constants(function: cst.FunctionDef) -> tuple[str, ...]:
    """The constants (as source text) that make ``function`` fail open; empty when unclear."""
    if function.returns is not None:
        return _constants_for_annotation(function.returns.annotation)
    own = own_nodes(function)
    return _constants_from_returns([n for n in own if isinstance(n, cst.Return)])
