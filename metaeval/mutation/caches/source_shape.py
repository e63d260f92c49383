"""Which functions of a source file changed between two versions, and where the
lines of the others moved, so that a test that ran none of the changed ones keeps
its coverage record.

A file is its *skeleton* (every line outside a function body: imports, constants,
class bodies, ``def`` lines and decorators, all of which run at import) and its
*functions* (the outermost ``def`` statements, methods included). When the
skeleton reads the same, a function whose text reads the same runs the same
code in the same tests; only its line numbers may have moved, by as much as the
functions above it grew or shrank. A test that never called a changed function
ran exactly what it ran before, since nothing it ran changed. When the skeleton
changed, every record of the file is stale (a constant, a default value or a
decorator can change what any of its functions does).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Function:
    start: int
    """The first line: the first decorator's, or the ``def`` line (``co_firstlineno``)."""
    end: int
    digest: str


@dataclass(frozen=True, slots=True)
class Shape:
    skeleton: str
    """Digest of the lines outside every function body, in order, without their numbers."""
    functions: dict[str, Function]
    """Outermost functions by qualified name (``Class.method``; ``name#2`` for the
    second definition of a name)."""

    def to_json(self) -> dict[str, object]:
        return {"skeleton": self.skeleton,
                "functions": {n: [f.start, f.end, f.digest] for n, f in self.functions.items()}}

    @staticmethod
    def from_json(data: dict[str, object]) -> Shape:
        functions = data["functions"]
        if not isinstance(functions, dict):
            raise TypeError("functions")
        return Shape(str(data["skeleton"]), {str(n): Function(int(s), int(e), str(d))
                                             for n, (s, e, d) in functions.items()})


def shape_of(text: str) -> Shape | None:
    """The file's shape; None when it does not parse (every record of it goes stale)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = text.splitlines()
    found: dict[str, Function] = {}
    in_body: set[int] = set()
    for name, node in _outermost_functions(tree, ""):
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        end = node.end_lineno or node.lineno
        in_body.update(range(node.body[0].lineno, end + 1))
        key, n = name, 1
        while key in found:  # defined again (a conditional or an overload): by its order
            n += 1
            key = f"{name}#{n}"
        found[key] = Function(start, end, _digest(key, lines[start - 1:end]))
    skeleton = [line for number, line in enumerate(lines, 1) if number not in in_body]
    return Shape(_digest("", skeleton), found)


def _outermost_functions(node: ast.AST, prefix: str
                         ) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + child.name, child
        elif isinstance(child, ast.ClassDef):
            yield from _outermost_functions(child, f"{prefix}{child.name}.")
        elif not isinstance(child, ast.Lambda):
            yield from _outermost_functions(child, prefix)


def _digest(name: str, lines: list[str]) -> str:
    return hashlib.sha256("\n".join([name, *lines]).encode("utf-8", "surrogatepass")).hexdigest()


class LineMap:
    """Old line numbers of a file to new ones, for code that did not change."""

    def __init__(self, old: Shape, new: Shape) -> None:
        self.same_skeleton = old.skeleton == new.skeleton
        self.spans = sorted((f.start, f.end, name) for name, f in old.functions.items())
        self.old, self.new = old.functions, new.functions

    def owner(self, line: int) -> str | None:
        """The outermost function whose lines hold ``line`` in the old file."""
        for start, end, name in self.spans:
            if start <= line <= end:
                return name
        return None

    def unchanged(self, line: int) -> bool:
        """Whether the code at this old line is the same in the new file."""
        if not self.same_skeleton:
            return False
        name = self.owner(line)
        if name is None:
            return True
        new = self.new.get(name)
        return new is not None and new.digest == self.old[name].digest

    def moved(self, line: int) -> int:
        """Where an unchanged old line is now."""
        name = self.owner(line)
        if name is not None:
            return line + self.new[name].start - self.old[name].start
        # Outside every function: moved as much as the last function above it.
        above = [n for start, end, n in self.spans if end < line]
        if not above:
            return line
        return line + self.new[above[-1]].end - self.old[above[-1]].end
