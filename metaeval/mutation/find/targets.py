"""Find the rewrite mutants of a project: resolve targets, parse, apply every operator.

A target is a file, a directory (searched recursively for ``*.py``, leaving out
tests, hidden directories and virtual environments), ``file.py:qualname`` or
``package.module:qualname`` (found on disk under the project root, its ``src/``
or ``sys.path``, never imported); a qualname target keeps what is nested in it.
Each file is parsed once with libcst; every site an operator offers becomes one
``Mutant`` whose ``mutated_source`` is the whole module with exactly that fault.
A statement that is only a string (a docstring of any kind) is never mutated,
and a change to a string whose only use is a log, warning or exception message
(``metaeval.mutation.find.messages``) is left out unless ``message_strings`` asks.

This module only reads. It must never write, import or execute the code it
mutates: the user's source tree stays byte-identical.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import sys
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

try:
    from libcst._nodes.internal import CodegenState
except ImportError:  # libcst moved its internals: every mutant regenerates its whole module
    CodegenState = None  # type: ignore[assignment,misc]

from metaeval.errors import InputError
from metaeval.mutation.find.messages import is_message_string, logger_names
from metaeval.mutation.find.operators import (
    Context,
    Operator,
    Replacement,
    Variant,
    select_operators,
)
from metaeval.mutation.find.shapes import (
    is_bare_string_statement,
    is_boilerplate_if,
    is_string_literal,
)
from metaeval.mutation.model import Mutant, MutantKind, Span

MODULE_QUALNAME = "<module>"
PRAGMA = "metaeval: skip"
NO_REASON = "skip pragma without a reason"

# Directories a recursive search never enters: they hold tests, tooling or
# someone else's code, never the project's controls.
_SKIPPED_DIRS = frozenset({
    "tests", "test", "testing", "__pycache__", "venv", "env", "site-packages",
    "node_modules", "build", "dist",
})


@dataclass(frozen=True, slots=True)
class Target:
    """One resolved target: a file, optionally narrowed to one qualname and what it holds."""

    path: Path
    qualname: str | None = None
    spec: str = ""
    """The target as the user wrote it, for messages."""


# --- resolving targets ---------------------------------------------------------------


def resolve_targets(specs: Sequence[str], root: Path) -> list[Target]:
    """Turn CLI arguments or ``[tool.metaeval.mutate] targets`` into files.

    Relative paths are taken from ``root``. Raises ``InputError`` naming the
    target when it is neither an existing path nor a resolvable ``module:qualname``.
    """
    targets: list[Target] = []
    seen: set[tuple[Path, str | None]] = set()
    for spec in specs:
        for target in _resolve_one(spec, root):
            key = (target.path, target.qualname)
            if key not in seen:
                seen.add(key)
                targets.append(target)
    return targets


_EXPECTED = "expected a .py file, a directory, 'package.module:qualname' or 'file.py:qualname'"


def _resolve_one(spec: str, root: Path) -> list[Target]:
    path = _under(root, spec)
    if path.is_file():
        if path.suffix != ".py":
            raise InputError(f"mutate target {spec!r} is not a Python file; {_EXPECTED}")
        return [Target(path.resolve(), None, spec)]
    if path.is_dir():
        return [Target(p, None, spec) for p in python_files(path.resolve())]
    # ``rpartition``: a Windows path (``C:\\src\\gate.py:check``) has its own colon.
    where, sep, qualname = spec.rpartition(":")
    if not sep or not where:
        raise InputError(f"mutate target {spec!r} does not exist; {_EXPECTED}")
    if not qualname:
        raise InputError(f"mutate target {spec!r}: empty qualname; {_EXPECTED}")
    if not all(part.isidentifier() or part == "<locals>" for part in qualname.split(".")):
        raise InputError(f"mutate target {spec!r}: {qualname!r} is not a qualname; {_EXPECTED}")
    if where.endswith(".py") or "/" in where or "\\" in where:
        file = _under(root, where)
        if not file.is_file() or file.suffix != ".py":
            raise InputError(f"mutate target {spec!r}: {where!r} is not a Python file; "
                             f"{_EXPECTED}")
        return [Target(file.resolve(), qualname, spec)]
    return [Target(find_module_file(where, root, spec), qualname, spec)]


def _under(root: Path, text: str) -> Path:
    path = Path(text)
    return path if path.is_absolute() else root / path


def find_module_file(module: str, root: Path, spec: str = "") -> Path:
    """The file of dotted ``module``, looked up under ``root``, ``root/src``, then ``sys.path``."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        raise InputError(f"mutate target {spec or module!r}: {module!r} is not a module name; "
                         "expected 'package.module:qualname'")
    bases = [root, root / "src", *(Path(p) for p in sys.path if p)]
    for base in bases:
        candidate = base.joinpath(*parts)
        for path in (candidate.with_suffix(".py"), candidate / "__init__.py"):
            if path.is_file():
                return path.resolve()
    raise InputError(f"mutate target {spec or module!r}: module {module!r} not found under "
                     f"{str(root)!r}, its src/ or sys.path")


def python_files(directory: Path) -> list[Path]:
    """``*.py`` under ``directory`` in sorted order, without tests, hidden dirs or venvs."""
    found: list[Path] = []
    for current, dirs, files in os.walk(directory):
        here = Path(current)
        dirs[:] = sorted(
            d for d in dirs
            if not d.startswith(".") and d not in _SKIPPED_DIRS
            and not (here / d / "pyvenv.cfg").exists()
        )
        found.extend(here / f for f in sorted(files) if f.endswith(".py") and not _is_test_file(f))
    return sorted(found)


def _is_test_file(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def module_name(path: Path, root: Path) -> str:
    """The dotted name ``path`` is imported as: walk up while ``__init__.py`` marks a package."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    directory = path.parent
    while (directory / "__init__.py").is_file() and directory != directory.parent:
        parts.insert(0, directory.name)
        directory = directory.parent
    return ".".join(parts) if parts else path.parent.name


def relative_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in posix form; absolute when it lies outside."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


# --- finding mutants -----------------------------------------------------------------


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


def read_source(path: Path) -> str:
    try:
        # utf-8-sig: a byte-order mark is not code, and libcst would refuse it.
        return path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from e


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
    lines = _lines(source)
    splicer = _Splicer(tree, source, wrapper.resolve(WhitespaceInclusivePositionProvider))
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
            span=_span(site.position),
            original=_text_at(lines, site.position),
            replacement=_code(tree, site.variant.replacement, site.variant.insertion),
            mutated_source=splicer.apply(site.variant, site.chain),
            ignored_reason=site.ignored_reason,
        ))
    return mutants, frozenset(collector.qualnames)


def mutant_diff(mutant: Mutant, root: Path) -> str:
    """The unified diff from the file on disk to the mutant, headed with its relative path."""
    original = read_source(root / mutant.path)
    return unified_diff(original, mutant.mutated_source, mutant.path)


def unified_diff(original: str, mutated: str, path: str) -> str:
    return "".join(difflib.unified_diff(
        _lines(original),
        _lines(mutated),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    ))


# --- internals -----------------------------------------------------------------------


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
        # A docstring anywhere, or any string statement: no effect at run time.
        if (isinstance(node, cst.Annotation) or is_boilerplate_if(node)
                or is_bare_string_statement(node)):
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
        chain = (*self.stack, *_path_below(node, variant.target))
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


def _path_below(node: cst.CSTNode, target: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes from ``node`` down to ``target`` (empty when not found)."""
    if node is target:
        return [node]
    for child in node.children:
        below = _path_below(child, target)
        if below:
            return [node, *below]
    return []


class _Replace(cst.CSTTransformer):
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


class _Splicer:
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
                new = unit.visit(_Replace(variant, path))
                return self.source[:start] + self._generate(new, indents) + self.source[end:]
        return self.tree.visit(_Replace(variant, path)).code

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


def _span(position: CodeRange) -> Span:
    # libcst columns are 0-based; the report schema wants 1-based.
    return Span(position.start.line, position.start.column + 1,
                position.end.line, position.end.column + 1)


def _lines(source: str) -> list[str]:
    # Only the newlines Python itself knows: str.splitlines would also split on
    # form feeds and U+2028, and put libcst's line numbers off by one.
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", source)


def _text_at(lines: list[str], position: CodeRange) -> str:
    start, end = position.start, position.end
    if start.line == end.line:
        return lines[start.line - 1][start.column:end.column]
    chunk = [lines[start.line - 1][start.column:]]
    chunk.extend(lines[start.line:end.line - 1])
    chunk.append(lines[end.line - 1][:end.column])
    return "".join(chunk)


def _code(tree: cst.Module, replacement: Replacement, insertion: bool = False) -> str:
    if isinstance(replacement, cst.RemovalSentinel):
        return ""
    if isinstance(replacement, cst.FlattenSentinel):
        nodes = replacement.nodes[:-1] if insertion else replacement.nodes
        return "\n".join(_code(tree, node) for node in nodes)
    if isinstance(replacement, cst.SimpleStatementLine | cst.BaseCompoundStatement):
        replacement = replacement.with_changes(leading_lines=[])
    return tree.code_for_node(replacement).strip()
