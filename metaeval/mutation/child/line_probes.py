"""The baseline's recorder on Python 3.11 without a trace function: the recorded
packages' code compiled again with a probe before each statement.

Any trace function, even coverage.py's in C, puts CPython 3.11 on its slow path
for every frame of every library a test runs (rich rendering a traceback,
pydantic validating a model): on inspect_ai's scorers the traced baseline took
2.3 times the plain tests. A probe costs one call of a C method, and only in
the recorded packages' own code.

In a baseline child, ``prepare`` compiles each loaded module of the packages
again from its source with ``__metaeval_probe__(n)`` before every statement
(after a docstring and ``from __future__`` imports), the children sharing the
work (``Share``); ``start`` gives every live function of those modules its
probed code, and an import hook probes a module imported (or imported again)
while the tests run, pytest's assertion rewriter's included. Probe ``n`` names
the lines its statement can run: a simple statement's every line, a compound
statement's header, the headers of the loops around it (they run again after
their body, in a later test too when a generator resumes), a lone docstring's
``def`` line (where CPython returns), and, on the safe side, the types of a
``try``'s handlers and a ``match``'s patterns and guards. The lines each test
ran go through ``ctrace.fill``, so the record is the one coverage.py's tracer
gives, with more lines at most: a mutant runs as many tests or more, never
fewer.

What it cannot see, where a trace function does: a generator suspended before
the swap and resumed by a test (it keeps its unprobed code), and code whose
function no object holds when the swap walks the heap. Chosen by
``fork.baseline.baseline_recorder``; ``METAEVAL_RECORDER=ctrace`` keeps coverage.py's
tracer.
"""

from __future__ import annotations

import ast
import builtins
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import time
import types
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.ctrace import file_modules, fill
from metaeval.mutation.child.live import live_functions
from metaeval.mutation.wire import CodeRun

PROBE = "__metaeval_probe__"
WAIT = 5.0
"""Seconds a baseline child waits at least for another's share of the probes."""
_BODIES = ("body", "orelse", "finalbody")


class Probes:
    """The probes handed out so far: probe ``n`` is ``table[n]``, the real path of
    its file and the lines its statement can run. Numbered from ``base``, so the
    probes that children compiled apart never share a number (``Share``)."""

    def __init__(self, base: int = 0) -> None:
        self.table: dict[int, tuple[str, tuple[int, ...]]] = {}
        self.next = base

    def read(self, filename: str, real: str) -> types.CodeType | None:
        """The file's source compiled with probes; None when it cannot be."""
        try:
            return self.code(importlib.util.decode_source(Path(real).read_bytes()),
                             filename, real)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            return None

    def code(self, source: str, filename: str, real: str) -> types.CodeType:
        """``source`` compiled with probes; SyntaxError or ValueError as ``compile``."""
        tree = ast.parse(source, filename)
        tree.body = self._body(tree.body, real, top=True)
        return compile(tree, filename, "exec", dont_inherit=True)

    def _probe(self, at: ast.stmt, lines: set[int], real: str) -> ast.stmt:
        self.table[self.next] = (real, tuple(sorted(lines)))
        call = ast.Call(ast.Name(PROBE, ast.Load()), [ast.Constant(self.next)], [])
        self.next += 1
        probe = ast.Expr(call)
        for node in (probe, call, call.func, call.args[0]):
            node.lineno = node.end_lineno = at.lineno
            node.col_offset = node.end_col_offset = at.col_offset
        return probe

    def _body(self, body: list[ast.stmt], real: str, top: bool = False,
              loop: frozenset[int] = frozenset(), defined: int = 0) -> list[ast.stmt]:
        """``body`` with its probes; ``loop``: the header lines of the loops it is in,
        which run again whenever their body has run (a tracer sees them at each
        turn, and when a generator resumed by a later test goes round again);
        ``defined``: the ``def`` line of the function it is the body of."""
        lead = 1 if body and _docstring(body[0]) else 0
        while top and lead < len(body) and _future(body[lead]):
            lead += 1
        out = body[:lead]
        if lead:
            lines = {n for s in body[:lead] for n in _lines(s)} | loop
            if lead == len(body) and defined:
                lines.add(defined)  # a docstring alone: CPython returns on the def line
            out.append(self._probe(body[lead - 1], lines, real))
        for statement in body[lead:]:
            lines = _lines(statement)
            out.append(self._probe(statement, lines | loop, real))
            self._inside(statement, real, loop)
            out.append(statement)
        return out

    def _inside(self, statement: ast.stmt, real: str, loop: frozenset[int]) -> None:
        defined = 0
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            loop = frozenset()  # a body of its own, run by a call
            defined = 0 if isinstance(statement, ast.ClassDef) else statement.lineno
        elif isinstance(statement, ast.For | ast.AsyncFor | ast.While):
            loop = loop | _lines(statement)
        for name in _BODIES:
            inner = getattr(statement, name, None)
            if inner:
                setattr(statement, name, self._body(inner, real, loop=loop, defined=defined))
        for part in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
            part.body = self._body(part.body, real, loop=loop)


def _docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def _future(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.ImportFrom) and statement.module == "__future__"


def _span(node: ast.AST) -> range:
    """The lines of ``node`` and all it holds; of a node with no position (a
    function's arguments, a ``with`` item), from the first to the last line of
    the nodes it holds."""
    first: int | None = getattr(node, "lineno", None)
    if first is not None:
        last: int | None = getattr(node, "end_lineno", None)
        return range(first, (last or first) + 1)
    spans = [r for n in ast.iter_child_nodes(node) if (r := _span(n))]
    return range(min(r.start for r in spans), max(r.stop for r in spans)) if spans else range(0)


def _lines(statement: ast.stmt) -> set[int]:
    """The lines ``statement`` itself can run (not those of the statements in it)."""
    if not any(getattr(statement, name, None) for name in (*_BODIES, "handlers", "cases")):
        return set(_span(statement))
    lines = {statement.lineno}
    for name, value in ast.iter_fields(statement):
        if name in _BODIES:
            continue
        for node in value if isinstance(value, list) else [value]:
            if isinstance(node, ast.ExceptHandler):
                lines.update(_span(node.type) if node.type else ())
                lines.add(node.lineno)
            elif isinstance(node, ast.match_case):
                lines.update(_span(node.pattern))
                lines.update(_span(node.guard) if node.guard else ())
            elif isinstance(node, ast.AST):
                lines.update(_span(node))
    return lines


class ProbeLoader(importlib.abc.Loader):
    """Executes a module's probed code (``ProbeFinder``)."""

    def __init__(self, code: types.CodeType) -> None:
        self.code = code

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        exec(self.code, vars(module))


class ProbeFinder(importlib.abc.MetaPathFinder):
    """Gives a module of the recorded packages imported while the tests run its
    probed code; a module it cannot probe is left to the other finders."""

    def __init__(self, packages: frozenset[str], probes: Probes, skip: frozenset[str]) -> None:
        self.packages = packages
        self.probes = probes
        self.skip = skip
        self.blind = False
        """Whether a module of the packages was imported unprobed."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] not in self.packages:
            return None
        spec = self._others(fullname, path, target)
        origin = spec.origin if spec is not None else None
        if spec is None or origin is None or os.path.realpath(origin) in self.skip:
            return None
        code = None
        if origin.endswith(".py") and _from_source(spec.loader):
            code = self.probes.read(origin, os.path.realpath(origin))
        if code is None:
            # Not from a source file (or not one it can compile): what this module
            # runs goes unseen from now on.
            self.blind = True
            return None
        return importlib.util.spec_from_file_location(
            fullname, origin, loader=ProbeLoader(code),
            submodule_search_locations=spec.submodule_search_locations)

    def _others(self, fullname: str, path: Sequence[str] | None,
                target: types.ModuleType | None) -> importlib.machinery.ModuleSpec | None:
        """The spec the import would get without this finder."""
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                return spec  # type: ignore[no-any-return]
        return None


@dataclass(frozen=True, slots=True)
class Share:
    """Baseline child ``n`` of ``jobs`` compiles every ``jobs``-th module from the
    ``n``-th and writes them to ``prefix-n``; it reads the others' from theirs.
    Compiling is most of what probing costs (2.7 s a child for inspect_ai's 539
    modules), and the children start together. A share that does not come in time
    (three times this child's own, at least ``WAIT`` s) is compiled here."""

    n: int
    jobs: int
    prefix: str

    def path(self, k: int) -> Path:
        return Path(f"{self.prefix}-{k}")

    def compile(self, modules: list[tuple[str, str, str]], probes: Probes
                ) -> dict[str, types.CodeType | None]:
        started = time.monotonic()
        mine = {real: probes.read(filename, real)
                for real, _, filename in modules[self.n::self.jobs]}
        written = self.path(self.n).with_suffix(".part")
        written.write_bytes(marshal.dumps((mine, probes.table)))
        os.replace(written, self.path(self.n))
        deadline = time.monotonic() + max(WAIT, 3 * (time.monotonic() - started))
        probed = dict(mine)
        for k in range(self.jobs):
            if k == self.n:
                continue
            theirs = _read_share(self.path(k), deadline)
            if theirs is None:
                theirs = ({real: probes.read(filename, real)
                           for real, _, filename in modules[k::self.jobs]}, {})
            probed.update(theirs[0])
            probes.table.update(theirs[1])
        return probed


def _read_share(path: Path, deadline: float
                ) -> tuple[dict[str, types.CodeType | None],
                           dict[int, tuple[str, tuple[int, ...]]]] | None:
    while not path.exists():
        if time.monotonic() > deadline:
            return None
        time.sleep(0.005)
    try:
        codes, table = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return (codes, table) if isinstance(codes, dict) and isinstance(table, dict) else None


def _from_source(loader: object) -> bool:
    """Whether ``loader`` runs a module's source file: a plain one, or pytest's
    assertion rewriter, which takes the modules of every package that ships a
    pytest plugin (metaeval's own). Probed, such a module keeps its behaviour
    and loses only the rewritten messages of its own asserts, in the baseline."""
    if isinstance(loader, importlib.machinery.SourceFileLoader):
        return True
    kind = type(loader)
    return (kind.__module__, kind.__name__) == ("_pytest.assertion.rewrite",
                                                 "AssertionRewritingHook")


def _pairs(old: types.CodeType, new: types.CodeType,
           into: dict[types.CodeType, types.CodeType]) -> bool:
    """Each code object in ``old``'s tree with its probed counterpart in ``new``'s
    (probes add statements, never code objects); False when the trees differ."""
    into[old] = new
    a = [c for c in old.co_consts if isinstance(c, types.CodeType)]
    b = [c for c in new.co_consts if isinstance(c, types.CodeType)]
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if (x.co_qualname, x.co_firstlineno) != (y.co_qualname, y.co_firstlineno):
            return False
        if not _pairs(x, y, into):
            return False
    return True


class ProbeRecorder:
    """``CallRecorder``'s record of the tests, from probes (``ctrace.LineRecorder``'s
    interface)."""

    def __init__(self, into: CallRecorder, skip: frozenset[str], base: int = 0) -> None:
        self.into = into
        self.skip = skip
        """Real paths never probed: the recorders' own files."""
        self.probes = Probes(base)
        self.hits: set[int] = set()
        self.current = ""
        self.ran: dict[str, dict[int, set[str]]] = {}
        self.finder = ProbeFinder(into.packages, self.probes, skip)
        self.swaps: dict[str, dict[types.CodeType, types.CodeType]] = {}
        self.started = False

    def prepare(self, share: Share | None = None) -> str:
        """Compile every loaded module of the packages with probes (this child's
        ``share`` of them, the others' read from their files); the first module
        whose live code has no probed counterpart ("" when none): then a trace
        function must record instead."""
        modules = sorted((real, module, filename) for real, (module, filename)
                         in file_modules(self.into.packages).items() if real not in self.skip)
        if share is None or share.jobs <= 1:
            probed = {real: self.probes.read(filename, real) for real, _, filename in modules}
        else:
            probed = share.compile(modules, self.probes)
        for real, module, filename in modules:
            original = self.into.module_codes.get(module) or _compiled(real, filename)
            pairs: dict[types.CodeType, types.CodeType] = {}
            code = probed.get(real)
            if code is None or original is None or not _pairs(original, code, pairs):
                return module
            self.swaps[filename] = pairs
        return ""

    def start(self) -> None:
        if self.started:
            return
        self.started = True
        setattr(builtins, PROBE, self.hits.add)
        sys.meta_path.insert(0, self.finder)
        _swap(self.swaps)

    def stop(self) -> None:
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)

    def intact(self) -> bool:
        """False once a module of the packages was imported without probes: what
        every test runs from then on is partly unseen (nothing a test does to the
        trace function stops a probe)."""
        return not self.finder.blind

    def begin(self, nodeid: str) -> None:
        self.hits.clear()
        self.current = nodeid

    def end(self) -> None:
        table = self.probes.table
        for n in self.hits:
            real, lines = table[n]
            ran = self.ran.setdefault(real, {})
            for line in lines:
                ran.setdefault(line, set()).add(self.current)
        self.hits.clear()
        self.current = ""

    def runs(self) -> tuple[CodeRun, ...]:
        return fill(self.into, self.ran)


def _compiled(real: str, filename: str) -> types.CodeType | None:
    try:
        source = importlib.util.decode_source(Path(real).read_bytes())
        return compile(source, filename, "exec", dont_inherit=True)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None


def _swap(swaps: dict[str, dict[types.CodeType, types.CodeType]]) -> None:
    """Every live function running code of ``swaps``'s files given its probed code
    (``live.live_functions``: a registry or a decorator's wrapper may hold one no
    module attribute reaches)."""
    for (file, code), functions in live_functions(swaps).items():
        probed = swaps[file].get(code)
        if probed is not None:
            for function in functions:
                function.__code__ = probed
