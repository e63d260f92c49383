"""Patch mutants: faults a person declares in ``mutants/*.py``, applied at run time.

A mutants file is plain Python. It declares ``PatchMutant`` values, either in a
module-level ``MUTANTS`` list or by decorating a replacement function with
``@patch_mutant(...)``::

    from metaeval.mutation.patches import PatchMutant, patch_mutant

    MUTANTS = [
        PatchMutant(id="gate-and-is-average", target="myapp.gates:all_pass",
                    replacement="lambda results: sum(results) / len(results) >= 0.5",
                    breaks="A failed gate is averaged away by the other gates."),
    ]

    @patch_mutant("guard-allows-all", target="myapp.guards:allowed",
                  breaks="The guard lets every tool call through.")
    def allow_everything(call: object) -> bool:
        return True

Loading executes the file in memory (no bytecode is written next to it) and
turns each declaration into a ``Mutant``; every problem is an ``InputError``
naming the file, the line and the field. ``metaeval mutate`` executes the files
in a process of its own (``apart.load_patch_mutants``), so that a file calling
``os._exit`` cannot end it; that module imports this one, never the reverse.
This module never imports or patches the targets: the pytest plugin does that
in the child process.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import io
import re
import sys
import textwrap
import tokenize
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.errors import InputError
from metaeval.mutation.model import Mutant, MutantKind, Span

# What a mutants file imports (docs/mutate.md); the loading below is metaeval's own.
__all__ = ["PatchMutant", "patch_mutant"]

PATCH_OPERATOR = "patch"
_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

Replacement = str | Callable[..., object]


def _declaring_line() -> int:
    # Called from the dataclass __init__, itself called by the declaring file.
    frame = sys._getframe(2)
    return frame.f_lineno if frame is not None else 0


@dataclass(frozen=True, slots=True)
class PatchMutant:
    """One declared fault: replace ``target`` by ``replacement``.

    ``target`` is ``package.module:attr`` (``attr`` may be ``Class.method``).
    ``replacement`` is a Python expression, evaluated in the target module's
    namespace, or a callable defined in the mutants file. ``breaks`` is one
    sentence naming the control the fault switches off. ``skip``, when set, is
    why the mutant is left out: it is reported Ignored with that reason and
    never run (``metaeval init``'s example stays so until someone edits it).
    """

    id: str
    target: str
    replacement: Replacement
    breaks: str
    line: int = field(default_factory=_declaring_line, compare=False)
    skip: str = ""


def patch_mutant(id: str, *, target: str, breaks: str, skip: str = ""
                 ) -> Callable[[Callable[..., object]], PatchMutant]:
    """Declare the decorated function as the replacement of ``target``."""

    def declare(replacement: Callable[..., object]) -> PatchMutant:
        code = getattr(replacement, "__code__", None)
        line = code.co_firstlineno if code is not None else 0
        return PatchMutant(id, target, replacement, breaks, line, skip)

    return declare


@dataclass(frozen=True, slots=True)
class Declared:
    """A declaration with the file it came from."""

    file: Path
    mutant: PatchMutant


def shown(path: Path) -> Path:
    """``path`` as a user would type it: relative to the current directory when inside it."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def read_python(path: Path) -> str:
    """A Python file's text, in the encoding it declares (UTF-8 unless it says)."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(f"{shown(path)}: cannot read: {e}") from e
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError:  # undecodable first lines, or a cookie naming no codec: compile says
        encoding = "utf-8"
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        name = "UTF-8" if encoding.startswith("utf-8") else encoding
        raise InputError(f"{shown(path)}:{line}: not valid {name} (byte {raw[e.start]:#04x}); "
                         "save it as UTF-8, or declare its encoding on its first line "
                         "(# -*- coding: latin-1 -*-)") from e


def exec_mutants_file(path: Path) -> dict[str, object]:
    """Run a mutants file in a fresh namespace, never writing bytecode beside it."""
    source = read_python(path)
    name = "metaeval_mutants_" + re.sub(r"\W", "_", path.stem)
    namespace: dict[str, object] = {"__name__": name, "__file__": str(path)}
    try:
        code = compile(source, str(path), "exec")
        exec(code, namespace)
    except SyntaxError as e:
        raise InputError(f"{shown(path)}:{e.lineno}: not valid Python: {e.msg}") from e
    except SystemExit as e:  # exit() ends only this file's loading, never the caller
        raise InputError(f"{shown(path)}:{_error_line(e, path)}: called exit({e.code!r}) "
                         "while loading; a mutants file must only declare mutants") from e
    except Exception as e:  # the user's file failed while running: say where
        raise InputError(f"{shown(path)}:{_error_line(e, path)}: raised {e!r} while loading") from e
    return namespace


def _error_line(error: BaseException, path: Path) -> int:
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__)
             if f.filename == str(path) and f.lineno is not None]
    return lines[-1] if lines else 0


def declarations(path: Path) -> list[PatchMutant]:
    """The PatchMutant values one file declares, in line order."""
    namespace = exec_mutants_file(path)
    found: dict[int, PatchMutant] = {}
    listed = namespace.get("MUTANTS", [])
    if not isinstance(listed, list | tuple):
        raise InputError(f"{shown(path)}: MUTANTS: got {listed!r}; expected a list of PatchMutant")
    for i, item in enumerate(listed):
        if not isinstance(item, PatchMutant):
            raise InputError(f"{shown(path)}: MUTANTS[{i}]: got {item!r}; expected a PatchMutant")
        found[id(item)] = item
    for value in namespace.values():
        if isinstance(value, PatchMutant):
            found[id(value)] = value
    return sorted(found.values(), key=lambda m: m.line)


def _problems(m: PatchMutant) -> list[str]:
    problems = []
    if not isinstance(m.id, str) or not m.id.strip() or any(c.isspace() for c in m.id):
        problems.append(f"id: got {m.id!r}; expected a non-empty string without spaces")
    if not isinstance(m.target, str) or not _TARGET.match(m.target):
        problems.append(f"target: got {m.target!r}; expected 'package.module:attr'")
    if isinstance(m.replacement, str):
        try:
            compile(m.replacement, "<replacement>", "eval")
        except SyntaxError as e:
            problems.append(f"replacement: got {m.replacement!r}; not a Python expression "
                            f"({e.msg})")
    elif not callable(m.replacement):
        problems.append(f"replacement: got {m.replacement!r}; expected an expression string "
                        "or a callable")
    if not isinstance(m.breaks, str) or not m.breaks.strip():
        problems.append(f"breaks: got {m.breaks!r}; expected one sentence naming the control "
                        "this mutant switches off")
    if not isinstance(m.skip, str):
        problems.append(f"skip: got {m.skip!r}; expected a string: why this mutant is left "
                        "out (empty: it runs)")
    return problems


def mutants_files(directory: Path) -> list[Path]:
    """``directory/*.py`` in name order, skipping ``_private.py`` helpers."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("*.py") if not p.name.startswith("_"))


def load_declared(directory: Path, loading: Callable[[Path], None] | None = None
                  ) -> list[Declared]:
    """Every declaration under ``directory``; one InputError lists every problem.
    ``loading`` is told each file before it is executed."""
    found: list[Declared] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path in mutants_files(directory):
        if loading is not None:
            loading(path)
        for m in declarations(path):
            where = f"{shown(path)}:{m.line}"
            issues = _problems(m)
            if not issues and m.id in seen:
                issues.append(f"id: got {m.id!r}; already declared at {seen[m.id]}")
            problems.extend(f"{where}: {issue}" for issue in issues)
            if not issues:
                seen[m.id] = where
                found.append(Declared(path, m))
    if problems:
        raise InputError("bad patch mutant declaration(s):\n  " + "\n  ".join(problems))
    return found


@dataclass(frozen=True, slots=True)
class Described:
    """A declaration as text: what the runner needs of it, without the callable,
    which lives only in the process that executed the file."""

    file: Path
    id: str
    target: str
    breaks: str
    line: int
    replacement: str
    """What the target becomes (``replacement_source``)."""
    skip: str = ""
    """Why it is left out (reported Ignored); empty: it runs."""

    @staticmethod
    def of(declared: Declared) -> Described:
        m = declared.mutant
        return Described(declared.file, m.id, m.target, m.breaks, m.line,
                         replacement_source(m), m.skip.strip())


def find_declared(directory: Path, mutant_id: str) -> PatchMutant:
    """The declaration ``mutant_id`` under ``directory`` (the plugin's view, in the child)."""
    for d in load_declared(directory):
        if d.mutant.id == mutant_id:
            return d.mutant
    raise InputError(f"{directory}: no patch mutant with id {mutant_id!r}")


def replacement_source(m: PatchMutant) -> str:
    """What the target becomes, as text a reviewer can read in a diff."""
    if isinstance(m.replacement, str):
        return f"{m.target.partition(':')[2].rpartition('.')[2]} = {m.replacement}\n"
    try:
        source = textwrap.dedent(inspect.getsource(m.replacement))
    except (OSError, TypeError):
        return f"{m.target.partition(':')[2]} = {m.replacement!r}\n"
    # The @patch_mutant decorator is the declaration, not part of the fault.
    lines = source.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(("def ", "async def ")):
            return "".join(lines[i:])
    return source


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _module_file(module: str, root: Path) -> Path | None:
    """The project's own file for ``module`` (under root, root/src), else the one
    Python would import. Only the latter imports anything: the parent packages."""
    # Imported here: the plugin loads this module in every patch child, and the
    # children never locate anything, so they keep out of the finding side.
    from metaeval.mutation.find.resolve import find_module_file

    try:
        return find_module_file(module, root)
    except InputError:
        pass
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def locate(target: str, root: Path) -> tuple[Path, ast.AST] | None:
    """The file and the definition node of ``package.module:attr``, read with ``ast``;
    None when the module or the name cannot be found. Never imports the target."""
    module, _, attr = target.partition(":")
    path = _module_file(module, root)
    if path is None:
        return None
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, ValueError):  # ValueError: not UTF-8
        return None
    body: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for part in attr.split("."):
        node = _defined(body, part)
        if node is None:
            return None
        body = node.body if isinstance(node, ast.ClassDef) else []
    return (path, node) if node is not None else None


def _defined(body: list[ast.stmt], name: str) -> ast.stmt | None:
    found: ast.stmt | None = None
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if stmt.name == name:
                found = stmt
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                found = stmt
    return found


def first_line(node: ast.AST) -> int:
    """The line a definition's code object starts on (its first decorator, if any)."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    line: int = getattr(node, "lineno", 1)
    return min([line, *(d.lineno for d in decorators)])


def to_mutant(m: Described, root: Path) -> Mutant:
    module, _, attr = m.target.partition(":")
    found = locate(m.target, root)
    if found is None:
        path = _relative(m.file, root)
        span = Span(m.line, 1, m.line, 1)
        original = ""
    else:
        file, node = found
        path = _relative(file, root)
        start = first_line(node)
        end = getattr(node, "end_lineno", None) or start
        end_col = getattr(node, "end_col_offset", None) or 0
        span = Span(start, 1, end, end_col + 1)
        lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
        original = textwrap.dedent("".join(lines[start - 1 : end]))
    return Mutant(id=m.id, kind=MutantKind.PATCH, operator=PATCH_OPERATOR, path=path,
                  module=module, qualname=attr, span=span, original=original,
                  replacement=m.replacement, target=m.target, breaks=m.breaks,
                  ignored_reason=m.skip)
