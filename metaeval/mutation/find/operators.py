"""Rewrite-mutant operators: small pure functions that turn one libcst node into faults.

Each operator is aimed at the code that must say no (guards, validators,
approval gates, budgets, graders) and has a stable name, because the name is
part of every mutant id. An operator looks at one node and the chain of its
ancestors and returns the ``Variant`` values it would inject there; it never
reads files, never keeps state, and never returns a variant it knows to be
equivalent to the original (a fault nobody can detect is noise, not a finding).

What to walk (skipping annotations, docstrings and every other string statement,
``if __name__ == "__main__"``) and which string mutants are noise (a log, warning
or exception message) is decided by the caller, ``metaeval.mutation.find.targets``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

import libcst as cst

from metaeval.config import MutateSection
from metaeval.errors import InputError
from metaeval.keys import did_you_mean
from metaeval.mutation.find.fail_open import fail_open_constants, last_name, own_nodes
from metaeval.mutation.find.shapes import (
    is_call,
    is_docstring,
    is_dunder_name,
    is_stub_statement,
    raises_not_implemented,
)

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
    insertion: bool = False
    """The replacement is new code followed by the target: code is added, none changed."""


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
        is_stub_statement(s) or raises_not_implemented(s)
        for s in small
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
    """The test of an ``if``, ``while``, ``assert``, ``x if c else y`` or filter is negated."""
    if not isinstance(node, cst.If | cst.While | cst.Assert | cst.IfExp | cst.CompIf):
        return ()
    if _is_invertible_comparison(node.test):
        return ()  # ``not a == b`` is ``a != b``: flip_comparison's mutant, run twice
    return (Variant(node.test, _negated(node.test)),)


def _is_invertible_comparison(test: cst.BaseExpression) -> bool:
    """A single ``==``, ``!=``, ``in``, ``not in``, ``is`` or ``is not``: flipping negates it."""
    return (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator,
                       cst.Equal | cst.NotEqual | cst.In | cst.NotIn | cst.Is | cst.IsNot)
    )


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


# --- return_constant ------------------------------------------------------------------

def _decorator_name(decorator: cst.Decorator) -> str:
    expr = decorator.decorator
    return last_name(expr.func if isinstance(expr, cst.Call) else expr)


def return_constant(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """A function returning a bool, collection or optional returns its fail-open value at once."""
    if not isinstance(node, cst.FunctionDef):
        return ()
    if any(_decorator_name(d) in ("overload", "abstractmethod") for d in node.decorators):
        return ()
    if any(isinstance(n, cst.Yield) for n in own_nodes(node)):
        return ()  # a generator's ``return`` ends the iteration: another fault entirely
    body: Sequence[cst.BaseStatement | cst.BaseSmallStatement] = node.body.body
    if isinstance(node.body, cst.IndentedBlock) and _docstring(body):
        body = body[1:]
    if not body or _is_stub_body(body):
        return ()
    first = body[0]
    variants: list[Variant] = []
    for constant in fail_open_constants(node):
        value = cst.parse_expression(constant)
        returned = cst.Return(value=value)
        if _already_returns(first, returned):
            continue
        nodes: list[cst.CSTNode]
        if isinstance(first, cst.SimpleStatementLine | cst.BaseCompoundStatement):
            # Comments above the first statement stay above the inserted return.
            line = cst.SimpleStatementLine([returned], leading_lines=first.leading_lines)
            moved = first.with_changes(leading_lines=[])
            nodes = [line, moved]
        else:
            nodes = [returned, first]
        variants.append(Variant(first, cst.FlattenSentinel(nodes), insertion=True))
    return tuple(variants)


def _docstring(body: Sequence[cst.CSTNode]) -> bool:
    return bool(body) and is_docstring(body[0])


def _already_returns(first: cst.CSTNode, returned: cst.Return) -> bool:
    """True when the body already starts with that very ``return``: an equivalent mutant."""
    if isinstance(first, cst.SimpleStatementLine):
        first = first.body[0]
    return (
        isinstance(first, cst.Return)
        and first.value is not None
        and returned.value is not None
        and first.value.deep_equals(returned.value)
    )


# --- drop_guard_clause ----------------------------------------------------------------


def _exits(body: cst.BaseSuite) -> bool:
    last: cst.CSTNode | None = body.body[-1] if body.body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    return isinstance(last, cst.Raise | cst.Return)


def drop_guard_clause(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """An ``if ...: raise`` or ``if ...: return`` that guards the rest of its block is removed."""
    if (
        isinstance(node, cst.If)
        and node.orelse is None
        and _exits(node.body)
        and _is_followed(node, ctx)
    ):
        return (Variant(node, cst.RemovalSentinel.REMOVE),)
    return ()


# --- shift_constant -------------------------------------------------------------------


def _number(node: cst.Integer | cst.Float) -> Decimal:
    text = node.value.replace("_", "")
    if isinstance(node, cst.Integer):
        return Decimal(int(text, 0))
    return Decimal(text)


def _literal(value: Decimal, like: cst.Integer | cst.Float) -> cst.BaseExpression:
    magnitude = abs(value)
    literal: cst.BaseExpression
    if isinstance(like, cst.Integer):
        hexadecimal = like.value.lower().startswith("0x")
        literal = cst.Integer(format(int(magnitude), "#x") if hexadecimal else str(int(magnitude)))
    else:
        text = str(magnitude)
        if not any(c in text for c in ".eE"):
            text += ".0"  # stay a float: ``2.`` - 1 must not become the int ``1``
        literal = cst.Float(text)
    return cst.UnaryOperation(cst.Minus(), literal) if value < 0 else literal


def shift_constant(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """A number (a threshold, limit or budget) is shifted by one, up and down."""
    negative = False
    literal: cst.Integer | cst.Float
    if isinstance(node, cst.Integer | cst.Float):
        parent = ctx.parent
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Minus):
            return ()  # ``-1`` is one number, shifted where the minus is
        literal = node
    elif (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer | cst.Float)
        and not node.lpar
    ):
        literal, negative = node.expression, True
    else:
        return ()
    # Indexes and slice bounds pick elements, they are not thresholds; shifting
    # them mostly makes noise (an IndexError, or the same slice of a short list).
    if _inside(ctx, cst.SubscriptElement) or _in_dunder_assignment(ctx):
        return ()
    value = -_number(literal) if negative else _number(literal)
    variants: list[Variant] = []
    for shifted in (value + 1, value - 1):
        replacement = _literal(shifted, literal)
        if isinstance(node, cst.BaseExpression):
            replacement = replacement.with_changes(lpar=node.lpar, rpar=node.rpar)
        variants.append(Variant(node, replacement))
    return tuple(variants)


def _in_dunder_assignment(ctx: Context) -> bool:
    """Inside ``__all__ = ...``, ``__version__ = ...``: metadata, not behaviour."""
    for ancestor in ctx.ancestors:
        if isinstance(ancestor, cst.Assign):
            return any(is_dunder_name(t.target) for t in ancestor.targets)
    return False


# --- swallow_exception ------------------------------------------------------------------


def swallow_exception(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """A ``raise`` (also a handler's re-raise) becomes ``pass``, so the error is swallowed."""
    if isinstance(node, cst.Raise) and not raises_not_implemented(node):
        return (Variant(node, cst.Pass(semicolon=node.semicolon)),)
    return ()


# --- drop_call -------------------------------------------------------------------------


def drop_call(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """A call made as a statement (an audit log, a confirmation, a redaction) is removed."""
    if isinstance(node, cst.Expr) and is_call(node.value):
        return (Variant(node, cst.Pass(semicolon=node.semicolon)),)
    return ()


# --- empty_string_literal -----------------------------------------------------------------

_KEY_METHODS = frozenset({"get", "pop", "setdefault", "getenv"})
_NAME_FUNCTIONS = frozenset({"getattr", "hasattr", "setattr", "delattr"})
_TYPING_CALLS = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple", "NewType", "cast",
                           "namedtuple", "NamedTuple", "TypedDict"})


def _is_noise_string(node: cst.CSTNode, ctx: Context) -> bool:
    """Strings where emptiness is not a fault worth finding: keys, names, types.

    Messages (log, warning, exception, assert) are left out by the scanner, for
    every operator, unless ``message_strings`` keeps them: ``metaeval.mutation.find.messages``.
    """
    parent = ctx.parent
    if isinstance(parent, cst.DictElement) and parent.key is node:
        return True
    for ancestor in ctx.ancestors:
        if isinstance(ancestor, cst.SubscriptElement):
            return True
        if isinstance(ancestor, cst.Call) and last_name(ancestor.func) in _TYPING_CALLS:
            return True
    if _is_key_argument(ctx):
        return True
    return _in_dunder_assignment(ctx)


def _is_key_argument(ctx: Context) -> bool:
    """The first argument of ``d.get("key")``, ``getattr(o, "name")``: a name, not a pattern."""
    if len(ctx.ancestors) < 2:
        return False
    arg, call = ctx.ancestors[-1], ctx.ancestors[-2]
    if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and arg.keyword is None):
        return False
    name = last_name(call.func)
    if name in _KEY_METHODS:
        return call.args[0] is arg
    return name in _NAME_FUNCTIONS and len(call.args) > 1 and call.args[1] is arg


def empty_string_literal(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """A non-empty string (a pattern, an allow-list entry) becomes the empty string."""
    if isinstance(ctx.parent, cst.ConcatenatedString):
        return ()  # the whole concatenation is one site
    if isinstance(node, cst.SimpleString):
        first = node
    elif isinstance(node, cst.ConcatenatedString) and isinstance(node.left, cst.SimpleString):
        first = node.left
    else:
        return ()
    value = node.evaluated_value
    if not value or _is_noise_string(node, ctx):
        return ()
    quote = first.quote[0]
    replacement = cst.SimpleString(f"{first.prefix}{quote}{quote}", lpar=node.lpar, rpar=node.rpar)
    return (Variant(node, replacement),)


# --- remove_decorator -------------------------------------------------------------------


# Decorators that shape what a def is rather than guard it: removing one is a
# crash at import or call (killed by any test) or changes nothing (a cache).
_STRUCTURAL_DECORATORS = frozenset({
    "property", "setter", "getter", "deleter", "cached_property", "staticmethod",
    "classmethod", "overload", "abstractmethod", "dataclass", "runtime_checkable", "final",
    "override", "wraps", "cache", "lru_cache", "contextmanager", "asynccontextmanager",
    "total_ordering", "fixture", "unique",
})


def is_structural_decorator(node: cst.CSTNode) -> bool:
    """A decorator that shapes what a def is (``@dataclass(frozen=True)``,
    ``@lru_cache(maxsize=3)``): no operator mutates it, its arguments included.
    Its arguments set the shape too (``frozen=False`` only lets a test assign a
    field no code assigns: a survivor no test should have to kill). The arguments
    of any other decorator stay mutated: ``@requires_role("admin")`` or
    ``@rate_limit(5)`` hold the guard's value."""
    return isinstance(node, cst.Decorator) and _decorator_name(node) in _STRUCTURAL_DECORATORS


def remove_decorator(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
    """A decorator (a permission check, a rate limit, a retry) is removed from its def."""
    if not isinstance(node, cst.FunctionDef | cst.ClassDef):
        return ()
    return tuple(
        Variant(d, cst.RemovalSentinel.REMOVE)
        for d in node.decorators
        if not is_structural_decorator(d)
    )


# --- registry ----------------------------------------------------------------------------

OPERATORS: dict[str, Operator] = {}


def _register(function: Callable[[cst.CSTNode, Context], tuple[Variant, ...]]) -> None:
    doc = (function.__doc__ or "").strip().splitlines()[0]
    OPERATORS[function.__name__] = Operator(function.__name__, doc, function)


for _function in (
    return_constant,
    negate_condition,
    drop_guard_clause,
    flip_comparison,
    swap_boolean_operator,
    swap_all_any,
    swap_bool_literal,
    shift_constant,
    swallow_exception,
    drop_call,
    empty_string_literal,
    remove_decorator,
):
    _register(_function)


def configured_operators(mutate: MutateSection) -> tuple[str, ...]:
    """``[tool.metaeval.mutate] operators``, each the name of a registered operator;
    raises InputError naming the file, the key and the first unknown name."""
    return checked_operators(mutate.operators, f"{mutate.where}.operators")


def checked_operators(names: Sequence[str], where: str) -> tuple[str, ...]:
    """``names``, each that of a registered operator; else an InputError naming
    ``where`` (a key or a flag), the first unknown name and the closest ones."""
    for name in names:
        if name not in OPERATORS:
            raise InputError(f"{where}: got {name!r}; expected one of "
                             f"{', '.join(OPERATORS)}{did_you_mean(name, OPERATORS)}")
    return tuple(names)


def operators_flag(text: str) -> tuple[str, ...]:
    """``--operators a,b``: the names, checked; an empty list is an error, not
    "every operator" (that is the flag left out)."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise InputError(f"--operators: got {text!r}; expected operator names separated "
                         f"by commas, from {', '.join(OPERATORS)}")
    return checked_operators(names, "--operators")


def select_operators(names: Sequence[str] = ()) -> tuple[Operator, ...]:
    """The operators named (all of them, in registry order, when ``names`` is empty)."""
    if not names:
        return tuple(OPERATORS.values())
    unknown = [n for n in names if n not in OPERATORS]
    if unknown:
        raise InputError(f"unknown mutation operator {unknown[0]!r}; "
                         f"expected one of {', '.join(OPERATORS)}")
    return tuple(OPERATORS[n] for n in OPERATORS if n in names)
