"""Find the rewrite mutants of a project: parse each target file, apply every operator.

Targets are resolved to files by ``resolve``; a qualname target keeps what is
nested in it. Each file is parsed once with libcst; every site an operator offers becomes one
``Mutant`` whose ``mutated_source`` is the whole module with exactly that fault.
A statement that is only a string (a docstring of any kind) is never mutated,
and a change to a string whose only use is a log, warning or exception message
(``metaeval.mutation.find.messages``) is left out unless ``message_strings`` asks.

This module only reads. It must never write, import or execute the code it
mutates: the user's source tree stays byte-identical.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import libcst as cst
from libcst.metadata import (
    CodeRange,
    MetadataWrapper,
    PositionProvider,
    WhitespaceInclusivePositionProvider,
)

from metaeval.errors import InputError
from metaeval.mutation.find.messages import is_message_string, logger_names
from metaeval.mutation.find.operators import (
    Context,
    Operator,
    Variant,
    is_structural_decorator,
    select_operators,
)
from metaeval.mutation.find.resolve import (
    Target,
    module_name,
    read_source,
    relative_path,
    resolve_targets,
    source_lines,
)
from metaeval.mutation.find.shapes import (
    is_bare_string_statement,
    is_boilerplate_if,
    is_string_literal,
)
from metaeval.mutation.find.splice import Splicer, code_of, path_below, span_of, text_at
from metaeval.mutation.model import Mutant, MutantKind

MODULE_QUALNAME = "<module>"
PRAGMA = "metaeval: skip"
NO_REASON = "skip pragma without a reason"



class Scanner(Protocol):
    """``_scan``'s signature: a cache may stand in front of it
    (``metaeval.mutation.find.scan_cache``)."""

    def __call__(self, source: str, *, path: str, module: str,
                 operators: Sequence[Operator] | None, message_strings: bool = False
                 ) -> tuple[list[Mutant], frozenset[str]]: ...


def find_mutants(
    specs: Sequence[str], root: Path, operators: Sequence[str] = (),
    scan: Scanner | None = None, message_strings: bool = False,
) -> list[Mutant]:
    """Every rewrite mutant of the targets, in a deterministic order (file, then position).

    ``operators`` restricts the operators by name (all when empty). A file that
    cannot be read or parsed is an ``InputError`` naming it. ``scan`` replaces
    the parse of one module (a cache of earlier parses). ``message_strings``
    keeps the mutants that change only a message string.
    """
    chosen = select_operators(operators)
    mutants: list[Mutant] = []
    by_path: dict[Path, list[Target]] = {}
    for target in resolve_targets(specs, root):
        by_path.setdefault(target.path, []).append(target)
    for path in sorted(by_path):
        targets = by_path[path]
        relative = relative_path(path, root)
        found, scopes = (scan or _scan)(
            read_source(path), path=relative, module=module_name(path, root), operators=chosen,
            message_strings=message_strings,
        )
        if all(t.qualname for t in targets):
            for target in targets:
                if target.qualname not in scopes:
                    raise InputError(f"mutate target {target.spec!r}: no function or class "
                                     f"{target.qualname!r} in {relative!r}")
            found = [mt for mt in found
                     if any(_within(mt.qualname, t.qualname or "") for t in targets)]
        mutants.extend(found)
    return mutants


def scan_module(source: str, *, path: str, module: str, operators: Sequence[Operator] | None,
                message_strings: bool = False) -> tuple[list[Mutant], frozenset[str]]:
    """The mutants of one module and the qualnames of its defs and classes (a ``Scanner``)."""
    return _scan(source, path=path, module=module, operators=operators,
                 message_strings=message_strings)


def _within(qualname: str, scope: str) -> bool:
    return qualname == scope or qualname.startswith(scope + ".")



def mutants_in_source(
    source: str,
    *,
    path: str,
    module: str,
    operators: Sequence[Operator] | None = None,
    message_strings: bool = False,
) -> list[Mutant]:
    """The rewrite mutants of one module's text; ``path`` and ``module`` go into ids."""
    return _scan(source, path=path, module=module, operators=operators,
                 message_strings=message_strings)[0]


def _scan(
    source: str,
    *,
    path: str,
    module: str,
    operators: Sequence[Operator] | None,
    message_strings: bool = False,
) -> tuple[list[Mutant], frozenset[str]]:
    """The mutants of one module, and the qualnames of every def and class in it."""
    try:
        tree = cst.parse_module(source)
    except cst.ParserSyntaxError as e:
        raise InputError(f"{path}:{e.raw_line}: cannot parse: {e.message}") from e
    wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
    collector = _SiteCollector(
        tuple(operators) if operators is not None else select_operators(),
        _pragmas(source),
        wrapper.resolve(PositionProvider),
        None if message_strings else logger_names(tree),
    )
    wrapper.visit(collector)
    lines = source_lines(source)
    splicer = Splicer(tree, source, wrapper.resolve(WhitespaceInclusivePositionProvider))
    counters: dict[tuple[str, str], int] = {}
    mutants: list[Mutant] = []
    for site in collector.sites:
        key = (site.qualname, site.operator)
        index = counters.get(key, 0)
        counters[key] = index + 1
        mutants.append(Mutant(
            id=f"{path}::{site.qualname}::{site.operator}::{index}",
            kind=MutantKind.REWRITE,
            operator=site.operator,
            path=path,
            module=module,
            qualname=site.qualname,
            span=span_of(site.position),
            original=text_at(lines, site.position),
            replacement=code_of(tree, site.variant.replacement, site.variant.insertion),
            mutated_source=splicer.apply(site.variant, site.chain),
            ignored_reason=site.ignored_reason,
        ))
    return mutants, frozenset(collector.qualnames)




@dataclass(frozen=True, slots=True)
class _Site:
    operator: str
    qualname: str
    variant: Variant
    chain: tuple[cst.CSTNode, ...]
    """Every node from the module down to the target, to prune and splice the rewrite."""
    position: CodeRange
    ignored_reason: str


def _pragmas(source: str) -> dict[int, str]:
    """Line number -> reason, for every ``# metaeval: skip <reason>`` comment."""
    found: dict[int, str] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return found
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        text = token.string.lstrip("#").strip()
        if text.startswith(PRAGMA):
            reason = text[len(PRAGMA):].strip()
            found[token.start[0]] = reason or NO_REASON
    return found


class _SiteCollector(cst.CSTVisitor):
    """Walks one module once, asking every operator at every node worth mutating."""

    def __init__(
        self,
        operators: tuple[Operator, ...],
        pragmas: dict[int, str],
        positions: Mapping[cst.CSTNode, CodeRange],
        loggers: frozenset[str] | None,
    ) -> None:
        super().__init__()
        self.operators = operators
        self.pragmas = pragmas
        self.positions = positions
        # The module's logger names, to leave message strings out; None keeps them.
        self.loggers = loggers
        self.stack: list[cst.CSTNode] = []
        # (qualname, pragma reason of its def/class header or "", id of the def/class)
        self.scopes: list[tuple[str, str, int]] = []
        self.sites: list[_Site] = []
        self.qualnames: set[str] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        descend = True
        # A docstring anywhere, or any string statement: no effect at run time. A
        # structural decorator's arguments shape the def, they guard nothing.
        if (isinstance(node, cst.Annotation) or is_boilerplate_if(node)
                or is_bare_string_statement(node) or is_structural_decorator(node)):
            descend = False
        else:
            if isinstance(node, cst.FunctionDef | cst.ClassDef):
                self._enter_scope(node)
            self._ask_operators(node)
        self.stack.append(node)
        return descend

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()
        if self.scopes and self.scopes[-1][2] == id(original_node):
            self.scopes.pop()

    def _enter_scope(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        outer, outer_reason, _ = self.scopes[-1] if self.scopes else ("", "", 0)
        enclosing = self._innermost_scope_node()
        # As Python spells ``__qualname__``: what a def holds is ``<locals>``.
        if enclosing is None:
            qualname = node.name.value
        elif isinstance(enclosing, cst.FunctionDef):
            qualname = f"{outer}.<locals>.{node.name.value}"
        else:
            qualname = f"{outer}.{node.name.value}"
        reason = outer_reason or self._header_pragma(node)
        self.scopes.append((qualname, reason, id(node)))
        self.qualnames.add(qualname)

    def _innermost_scope_node(self) -> cst.CSTNode | None:
        for node in reversed(self.stack):
            if isinstance(node, cst.FunctionDef | cst.ClassDef):
                return node
        return None

    def _header_pragma(self, node: cst.FunctionDef | cst.ClassDef) -> str:
        start = self.positions[node].start.line
        body = node.body
        if isinstance(body, cst.IndentedBlock) and body.body:
            first = body.body[0]
            leading = len(getattr(first, "leading_lines", ()))
            end = self.positions[first].start.line - 1 - leading
        else:
            end = self.positions[body].start.line
        for line in range(start, max(start, end) + 1):
            if line in self.pragmas:
                return self.pragmas[line]
        return ""

    def _ask_operators(self, node: cst.CSTNode) -> None:
        context = Context(tuple(self.stack))
        for operator in self.operators:
            for variant in operator.mutate(node, context):
                self._add(operator.name, node, variant)

    def _add(self, operator: str, node: cst.CSTNode, variant: Variant) -> None:
        chain = (*self.stack, *path_below(node, variant.target))
        if (self.loggers is not None and is_string_literal(variant.target)
                and is_message_string(chain, self.loggers)):
            return  # it changes only the text a person reads: noise, unless asked for
        qualname, scope_reason, _ = self.scopes[-1] if self.scopes else (MODULE_QUALNAME, "", 0)
        position = self.positions[variant.target]
        if variant.insertion:
            # Nothing on the target's line changes: the site is where the code goes in,
            # and a pragma for it sits on the line of the node that asked (the def).
            start = position.start
            position = CodeRange(start, start)
            line = self.positions[node].start.line
        else:
            line = position.start.line
        reason = self.pragmas.get(line, "") or scope_reason
        self.sites.append(_Site(operator, qualname, variant, chain, position, reason))


