"""A mutant's module text: one libcst replacement spliced into the source.

Generating a whole module for every mutant costs far more than finding the
mutants, so only the innermost statement holding the fault is generated again
and spliced into the text (``Splicer``); also the mutant's span, its original
text and its replacement as code, for the report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import libcst as cst
from libcst.metadata import CodeRange

try:
    from libcst._nodes.internal import CodegenState
except ImportError:  # libcst moved its internals: every mutant regenerates its whole module
    CodegenState = None  # type: ignore[assignment,misc]

from metaeval.mutation.find.operators import Replacement, Variant
from metaeval.mutation.model import Span


def path_below(node: cst.CSTNode, target: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes from ``node`` down to ``target`` (empty when not found)."""
    if node is target:
        return [node]
    for child in node.children:
        below = path_below(child, target)
        if below:
            return [node, *below]
    return []


class Replace(cst.CSTTransformer):
    """Puts one replacement in place of one node, visiting only the path to it."""

    def __init__(self, variant: Variant, path: frozenset[int]) -> None:
        super().__init__()
        self.variant = variant
        self.path = path

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) in self.path

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> Replacement:
        if original_node is self.variant.target:
            return self.variant.replacement
        return updated_node


class Splicer:
    """Regenerates only the innermost statement that holds the fault.

    Generating a whole large module for every mutant costs far more than finding
    the mutants, so the statement around the fault is generated alone, with the
    indentation of the blocks around it, and spliced into the source text. This
    uses libcst's codegen state, which is internal; so each splice is checked:
    the statement as it was must regenerate to exactly its slice of the source,
    or the whole module is generated instead.
    """

    def __init__(
        self, tree: cst.Module, source: str, ranges: Mapping[cst.CSTNode, CodeRange]
    ) -> None:
        self.tree = tree
        self.source = source
        self.ranges = ranges
        self.line_starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", source))]

    def apply(self, variant: Variant, chain: tuple[cst.CSTNode, ...]) -> str:
        path = frozenset(id(node) for node in chain)
        # An ``elif`` is an If inside an If, and only its parent writes ``elif``.
        units = [i for i, n in enumerate(chain)
                 if isinstance(n, cst.SimpleStatementLine | cst.BaseCompoundStatement)
                 and not (isinstance(n, cst.If) and isinstance(chain[i - 1], cst.If))]
        if units and CodegenState is not None:
            unit = chain[units[-1]]
            indents = [n.indent if n.indent is not None else self.tree.default_indent
                       for n in chain[:units[-1]] if isinstance(n, cst.IndentedBlock | cst.Match)]
            start, end = self._offsets(self.ranges[unit])
            if self.source[start:end] == self._generate(unit, indents):
                new = unit.visit(Replace(variant, path))
                return self.source[:start] + self._generate(new, indents) + self.source[end:]
        return self.tree.visit(Replace(variant, path)).code

    def _offsets(self, where: CodeRange) -> tuple[int, int]:
        def offset(line: int, column: int) -> int:
            index = min(line - 1, len(self.line_starts) - 1)
            return self.line_starts[index] + column
        return offset(where.start.line, where.start.column), offset(where.end.line,
                                                                     where.end.column)

    def _generate(self, result: Replacement, indents: list[str]) -> str:
        if isinstance(result, cst.RemovalSentinel):
            return ""
        nodes = result.nodes if isinstance(result, cst.FlattenSentinel) else [result]
        state = CodegenState(default_indent=self.tree.default_indent,
                             default_newline=self.tree.default_newline,
                             indent_tokens=list(indents))
        for node in nodes:
            node._codegen(state)
        return "".join(state.tokens)


def span_of(position: CodeRange) -> Span:
    # libcst columns are 0-based; the report schema wants 1-based.
    return Span(position.start.line, position.start.column + 1,
                position.end.line, position.end.column + 1)

def text_at(lines: list[str], position: CodeRange) -> str:
    start, end = position.start, position.end
    if start.line == end.line:
        return lines[start.line - 1][start.column:end.column]
    chunk = [lines[start.line - 1][start.column:]]
    chunk.extend(lines[start.line:end.line - 1])
    chunk.append(lines[end.line - 1][:end.column])
    return "".join(chunk)


def code_of(tree: cst.Module, replacement: Replacement, insertion: bool = False) -> str:
    if isinstance(replacement, cst.RemovalSentinel):
        return ""
    if isinstance(replacement, cst.FlattenSentinel):
        nodes = replacement.nodes[:-1] if insertion else replacement.nodes
        return "\n".join(code_of(tree, node) for node in nodes)
    if isinstance(replacement, cst.SimpleStatementLine | cst.BaseCompoundStatement):
        replacement = replacement.with_changes(leading_lines=[])
    return tree.code_for_node(replacement).strip()
