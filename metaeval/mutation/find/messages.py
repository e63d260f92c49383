"""Message strings: string literals whose only use is the text of a log record, a
warning or an exception.

Blanking such a string changes what a person reads, never what the code
decides, so by default the scanner leaves out every mutant that changes only
such a string (``[tool.metaeval.mutate] message_strings = true`` or
``--message-strings`` keeps them). A string literal (plain, f-string, or an
implicit concatenation) is a message string when it lies inside an argument,
positional or keyword, of a *message call*:

- a logging call: ``debug``, ``info``, ``warning``, ``warn``, ``error``,
  ``exception``, ``critical``, ``fatal`` or ``log`` called on a logger. A logger
  is a name or the last attribute of a chain (``self.logger``) spelled like one
  (case aside and past leading underscores: ``log``, ``logging``, or a name
  ending in ``logger``, so ``LOG``, ``_logger``, ``audit_logger``), a name the
  module assigns from ``getLogger(...)`` or ``get_logger(...)`` in its top-level
  statements, or such a call itself (``logging.getLogger(__name__).info(...)``);
- ``warnings.warn(...)`` or ``warn(...)``;
- the call that constructs the exception of a ``raise`` statement:
  ``raise X(...)``, also as a branch of ``or``, ``and`` or ``a if c else b``
  (``raise err or X(...)``);

or inside the message of an ``assert``. "Inside" is at any depth of that
argument: a piece of an implicit concatenation or an f-string, an operand of
``+`` or ``%``, the receiver of ``"...".format(...)``, ``getattr(x, "name",
"<unknown>")`` in the message: whatever the argument evaluates to goes only into
the message. Nothing bound to a name counts: a string assigned first (``msg =
"..."`` then ``raise ValueError(msg)``) may be used elsewhere too, as may one
under a walrus (``(m := "...")``) or in a ``lambda``; those stay mutated.

Pure functions of nodes; nothing here changes a tree.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from metaeval.mutation.find.fail_open import last_name

LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical",
                         "fatal", "log"})
LOGGER_FACTORIES = frozenset({"getLogger", "get_logger"})


def looks_like_logger(name: str) -> bool:
    """``logger``, ``log``, ``logging``, ``LOG``, ``_logger``, ``audit_logger``."""
    bare = name.lower().lstrip("_")
    return bare in ("log", "logging") or bare.endswith("logger")


def logger_names(module: cst.Module) -> frozenset[str]:
    """Names the module's top-level statements assign from ``getLogger(...)`` or
    ``get_logger(...)``: loggers whatever they are called (``audit = getLogger("audit")``)."""
    found: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and _is_logger_factory(small.value):
                targets = [t.target for t in small.targets]
            elif isinstance(small, cst.AnnAssign) and _is_logger_factory(small.value):
                targets = [small.target]
            else:
                continue
            found.update(t.value for t in targets if isinstance(t, cst.Name))
    return frozenset(found)


def _is_logger_factory(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Call) and last_name(expr.func) in LOGGER_FACTORIES


def _is_logger(expr: cst.BaseExpression, loggers: frozenset[str]) -> bool:
    name = last_name(expr)
    if name:
        return looks_like_logger(name) or name in loggers
    return _is_logger_factory(expr)


def _is_message_call(call: cst.Call, chain: Sequence[cst.CSTNode], index: int,
                     loggers: frozenset[str]) -> bool:
    """Whether ``call`` (``chain[index]``) is a logging call, a warning, or the
    exception a ``raise`` constructs."""
    func = call.func
    if isinstance(func, cst.Name) and func.value == "warn":
        return True
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method == "warn" and isinstance(func.value, cst.Name) and func.value.value == "warnings":
            return True
        if method in LOG_METHODS and _is_logger(func.value, loggers):
            return True
    return _is_raised(chain, index)


def _is_raised(chain: Sequence[cst.CSTNode], index: int) -> bool:
    """``chain[index]`` is what a ``raise`` raises (or its ``from`` cause), or a branch of
    an ``or``, an ``and`` or a conditional expression that is."""
    node = chain[index]
    for parent in reversed(chain[:index]):
        if isinstance(parent, cst.Raise):
            return node is parent.exc or node is parent.cause
        if isinstance(parent, cst.IfExp) and node is parent.test:
            return False
        if not isinstance(parent, cst.BooleanOperation | cst.IfExp | cst.From):
            return False
        node = parent
    return False


def is_message_string(chain: Sequence[cst.CSTNode], loggers: frozenset[str] = frozenset()
                      ) -> bool:
    """Whether the last node of ``chain`` (the nodes from the module down to a string
    literal) is a message string, as the module docstring defines it. ``loggers``:
    the module's ``logger_names``."""
    for index in range(len(chain) - 2, -1, -1):
        parent, node = chain[index], chain[index + 1]
        if isinstance(parent, cst.Arg):
            call = chain[index - 1] if index else None
            if isinstance(call, cst.Call) and _is_message_call(call, chain, index - 1, loggers):
                return True
        elif isinstance(parent, cst.Assert):
            return node is parent.msg
        elif isinstance(parent, cst.NamedExpr | cst.Lambda | cst.BaseSmallStatement
                        | cst.BaseStatement | cst.Module):
            return False  # bound to a name, or out of the statement: not only a message
    return False
