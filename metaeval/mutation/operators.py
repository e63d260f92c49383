"""Rewrite-mutant operators: small pure functions that turn one libcst node into faults.

Each operator is aimed at the code that must say no (guards, validators,
approval gates, budgets, graders) and has a stable name, because the name is
part of every mutant id. An operator looks at one node and the chain of its
ancestors and returns the ``Variant`` values it would inject there; it never
reads files, never keeps state, and never returns a variant it knows to be
equivalent to the original (a fault nobody can detect is noise, not a finding).

What to walk (skipping annotations, docstrings, ``if __name__ == "__main__"``)
is decided by the caller, ``metaeval.mutation.targets``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from metaeval.errors import InputError

Replacement = cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]


@dataclass(frozen=True, slots=True)
class Context:
    """Where a node sits: its ancestors, outermost (the ``Module``) first."""

    ancestors: tuple[cst.CSTNode, ...] = ()

    @property
    def parent(self) -> cst.CSTNode | None:
        return self.ancestors[-1] if self.ancestors else None


@dataclass(frozen=True, slots=True)
class Variant:
    """One fault: put ``replacement`` where ``target`` is (found by identity)."""

    target: cst.CSTNode
    replacement: Replacement


@dataclass(frozen=True, slots=True)
class Operator:
    """A named rewrite: ``mutate(node, context)`` gives the variants at that node."""

    name: str
    description: str
    mutate: Callable[[cst.CSTNode, Context], tuple[Variant, ...]]


# --- helpers -----------------------------------------------------------------


def _block_of(ctx: Context) -> Sequence[cst.CSTNode] | None:
    """The statements of the block the node is a statement of, if it is one."""
    parent = ctx.parent
    if isinstance(parent, cst.Module | cst.IndentedBlock):
        return parent.body
    return None


def _is_followed(node: cst.CSTNode, ctx: Context) -> bool:
    """True when other statements come after ``node`` in its block."""
    block = _block_of(ctx)
    if block is None:
        return False
    for index, statement in enumerate(block):
        if statement is node:
            return index < len(block) - 1
    return False


def _inside(ctx: Context, *types: type[cst.CSTNode]) -> bool:
    return any(isinstance(a, types) for a in ctx.ancestors)


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    if expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _is_stub_body(body: Sequence[cst.BaseStatement | cst.BaseSmallStatement]) -> bool:
    """``...``, ``pass`` or ``raise NotImplementedError``: a protocol or abstract stub."""
    small: list[cst.BaseSmallStatement] = []
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            small.extend(statement.body)
        elif isinstance(statement, cst.BaseSmallStatement):
            small.append(statement)
        else:
            return False
    return all(
        m.matches(s, m.Expr(m.Ellipsis()) | m.Pass() | m.Expr(m.SimpleString()))
        or _raises_not_implemented(s)
        for s in small
    )


def _raises_not_implemented(node: cst.CSTNode) -> bool:
    return m.matches(
        node,
        m.Raise(exc=m.Name("NotImplementedError") | m.Call(func=m.Name("NotImplementedError"))),
    )


# --- negate_condition ----------------------------------------------------------


def _negated(test: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = test.expression
        # ``not (a and b)`` negates back to ``a and b``: the parentheses are kept
        # because they are harmless and dropping them could change precedence.
        return inner.with_changes(lpar=test.lpar, rpar=test.rpar) if test.lpar else inner
    operand = test
    if isinstance(test, cst.BooleanOperation | cst.IfExp | cst.Lambda | cst.NamedExpr):
        operand = _parenthesized(test)
    return cst.UnaryOperation(operator=cst.Not(), expression=operand)


def negate_condition(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """The test of an ``if``, ``while``, ``assert`` or conditional expression is negated."""
    if isinstance(node, cst.If | cst.While | cst.Assert | cst.IfExp):
        return (Variant(node.test, _negated(node.test)),)
    return ()


# --- flip_comparison -------------------------------------------------------------

_Whitespace = cst.BaseParenthesizableWhitespace
_CompOpFactory = Callable[[_Whitespace, _Whitespace], cst.BaseCompOp]

_FLIPS: dict[type[cst.BaseCompOp], _CompOpFactory] = {
    cst.LessThan: lambda b, a: cst.LessThanEqual(whitespace_before=b, whitespace_after=a),
    cst.LessThanEqual: lambda b, a: cst.LessThan(whitespace_before=b, whitespace_after=a),
    cst.GreaterThan: lambda b, a: cst.GreaterThanEqual(whitespace_before=b, whitespace_after=a),
    cst.GreaterThanEqual: lambda b, a: cst.GreaterThan(whitespace_before=b, whitespace_after=a),
    cst.Equal: lambda b, a: cst.NotEqual(whitespace_before=b, whitespace_after=a),
    cst.NotEqual: lambda b, a: cst.Equal(whitespace_before=b, whitespace_after=a),
    cst.In: lambda b, a: cst.NotIn(whitespace_before=b, whitespace_after=a),
    cst.NotIn: lambda b, a: cst.In(whitespace_before=b, whitespace_after=a),
    cst.Is: lambda b, a: cst.IsNot(whitespace_before=b, whitespace_after=a),
    cst.IsNot: lambda b, a: cst.Is(whitespace_before=b, whitespace_after=a),
}


def flip_comparison(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """Flips ``<``/``<=``, ``>``/``>=``, ``==``/``!=``, ``in``/``not in``, ``is``/``is not``."""
    if not isinstance(node, cst.Comparison):
        return ()
    variants: list[Variant] = []
    for index, target in enumerate(node.comparisons):
        op = target.operator
        factory = _FLIPS.get(type(op))
        if factory is None:
            continue
        before: _Whitespace = op.whitespace_before  # type: ignore[attr-defined]
        after: _Whitespace = op.whitespace_after  # type: ignore[attr-defined]
        flipped = target.with_changes(operator=factory(before, after))
        comparisons = [*node.comparisons[:index], flipped, *node.comparisons[index + 1:]]
        variants.append(Variant(node, node.with_changes(comparisons=comparisons)))
    return tuple(variants)


# --- swap_boolean_operator ---------------------------------------------------------


def swap_boolean_operator(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """``and`` becomes ``or`` and ``or`` becomes ``and``."""
    if not isinstance(node, cst.BooleanOperation):
        return ()
    op = node.operator
    swapped: cst.BaseBooleanOp
    if isinstance(op, cst.And):
        swapped = cst.Or(whitespace_before=op.whitespace_before,
                         whitespace_after=op.whitespace_after)
    else:
        swapped = cst.And(whitespace_before=op.whitespace_before,
                          whitespace_after=op.whitespace_after)
    # and/or are each associative and bind tighter/looser than each other, so the
    # swapped text re-parses to the intended tree without new parentheses.
    return (Variant(node, node.with_changes(operator=swapped)),)


# --- swap_all_any ---------------------------------------------------------------


def swap_all_any(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """A call of ``all(...)`` becomes ``any(...)`` and the other way round."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        other = {"all": "any", "any": "all"}.get(node.func.value)
        if other is not None:
            return (Variant(node, node.with_changes(func=node.func.with_changes(value=other))),)
    return ()


# --- swap_bool_literal --------------------------------------------------------------


def swap_bool_literal(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """``True`` becomes ``False`` and ``False`` becomes ``True``."""
    if not (isinstance(node, cst.Name) and node.value in ("True", "False")):
        return ()
    parent = ctx.parent
    # ``while True`` -> ``while False`` is the same fault negate_condition injects.
    if isinstance(parent, cst.If | cst.While | cst.Assert | cst.IfExp) and parent.test is node:
        return ()
    other = "False" if node.value == "True" else "True"
    return (Variant(node, node.with_changes(value=other)),)


OPERATORS: dict[str, Operator] = {}


def _register(function: Callable[[cst.CSTNode, Context], tuple[Variant, ...]]) -> None:
    doc = (function.__doc__ or "").strip().splitlines()[0]
    OPERATORS[function.__name__] = Operator(function.__name__, doc, function)


for _function in (
    negate_condition,
    flip_comparison,
    swap_boolean_operator,
    swap_all_any,
    swap_bool_literal,
):
    _register(_function)


def select_operators(names: Sequence[str] = ()) -> tuple[Operator, ...]:
    """The operators named (all of them, in registry order, when ``names`` is empty)."""
    if not names:
        return tuple(OPERATORS.values())
    unknown = [n for n in names if n not in OPERATORS]
    if unknown:
        raise InputError(f"unknown mutation operator {unknown[0]!r}; "
                         f"expected one of {', '.join(OPERATORS)}")
    return tuple(OPERATORS[n] for n in OPERATORS if n in names)
