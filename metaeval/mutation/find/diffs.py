"""What a mutant changed, as a unified diff against the file as it is on disk.

Reads the user's source (never imports or runs it); a file that cannot be read
falls back to the mutant's own before and after text.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Literal

from metaeval.mutation.find.resolve import read_source, source_lines
from metaeval.mutation.model import Mutant, MutantKind, MutantResult


def rewrite_diff(result: MutantResult, root: Path) -> str:
    """A unified diff of the fault: the module for a rewrite mutant, the target's
    definition against its replacement for a patch mutant."""
    m = result.mutant
    try:
        original = (root / m.path).read_text(encoding="utf-8")
    except OSError:
        return unified_diff(m.original, m.replacement, m.path)
    if m.kind is MutantKind.REWRITE:
        return unified_diff(original, m.mutated_source, m.path, m.span.start_line,
                            m.span.end_line)
    if not m.original:  # the target was not found: show the declaration alone
        return unified_diff("", m.replacement, m.path)
    # The whole file with the definition swapped, so the hunk shows real line numbers.
    lines = original.splitlines(keepends=True)
    start, end = m.span.start_line, m.span.end_line
    indent = lines[start - 1][: len(lines[start - 1]) - len(lines[start - 1].lstrip())]
    swapped = "".join(indent + line if line.strip() else line
                      for line in m.replacement.splitlines(keepends=True))
    return unified_diff(original, "".join([*lines[: start - 1], swapped, *lines[end:]]), m.path)


def mutant_diff(mutant: Mutant, root: Path) -> str:
    """The unified diff from the file on disk to the mutant, headed with its relative path."""
    original = read_source(root / mutant.path)
    return unified_diff(original, mutant.mutated_source, mutant.path,
                        mutant.span.start_line, mutant.span.end_line)


def unified_diff(original: str, mutated: str, path: str, start_line: int | None = None,
                 end_line: int | None = None) -> str:
    """``difflib``'s unified diff; with the mutant's lines (``start_line`` to
    ``end_line`` of ``original``), the change is placed there: dropping the second
    of two ``if ...: return False`` clauses is a diff of the second, though
    ``difflib`` alone would as well match the text by removing the first's end."""
    a, b = source_lines(original), source_lines(mutated)
    if start_line is None or end_line is None:
        return "".join(difflib.unified_diff(a, b, fromfile=header_name("a/", path),
                                            tofile=header_name("b/", path)))
    return _unified(a, b, _anchored(a, b, start_line, end_line), header_name("a/", path),
                    header_name("b/", path))


_C_ESCAPES = {"\\": "\\\\", '"': '\\"', "\a": "\\a", "\b": "\\b", "\t": "\\t",
              "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r"}


def header_name(prefix: str, path: str) -> str:
    """``prefix + path`` for a ``---``/``+++`` line, quoted as git quotes it when the
    name holds a quote, a backslash or a control character: a newline in a file
    name would otherwise split the header into a line of its own."""
    name = prefix + path
    if not any(c in _C_ESCAPES or ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return name
    quoted = "".join(_C_ESCAPES.get(c) or (f"\\{ord(c):03o}" if ord(c) < 0x20 or ord(c) == 0x7F
                                          else c) for c in name)
    return f'"{quoted}"'


# --- internals -----------------------------------------------------------------------


Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]
"""``difflib.SequenceMatcher.get_opcodes``'s (tag, i1, i2, j1, j2)."""


def _anchored(a: list[str], b: list[str], start_line: int, end_line: int) -> list[Opcode]:
    """Opcodes that keep every line before ``start_line`` and after ``end_line`` equal
    where both texts agree there, and let ``difflib`` align only what lies between."""
    prefix = 0
    limit = min(start_line - 1, len(a), len(b))
    while prefix < limit and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    limit = min(len(a) - max(end_line, prefix), len(b) - prefix)
    while suffix < limit and a[len(a) - 1 - suffix] == b[len(b) - 1 - suffix]:
        suffix += 1
    middle = difflib.SequenceMatcher(None, a[prefix:len(a) - suffix],
                                     b[prefix:len(b) - suffix], autojunk=False)
    codes: list[Opcode] = [("equal", 0, prefix, 0, prefix)] if prefix else []
    codes += [(tag, i1 + prefix, i2 + prefix, j1 + prefix, j2 + prefix)
              for tag, i1, i2, j1, j2 in middle.get_opcodes()]
    if suffix:
        codes.append(("equal", len(a) - suffix, len(a), len(b) - suffix, len(b)))
    # One run of equal lines is one opcode, as difflib gives it: the hunks' context
    # is trimmed from the first and last opcode only.
    merged: list[Opcode] = []
    for code in codes:
        if merged and code[0] == merged[-1][0] == "equal":
            merged[-1] = ("equal", merged[-1][1], code[2], merged[-1][3], code[4])
        elif code[1] != code[2] or code[3] != code[4]:
            merged.append(code)
    return merged


class _Fixed(difflib.SequenceMatcher[str]):
    """A matcher whose opcodes are given, for ``get_grouped_opcodes``'s hunks."""

    def __init__(self, a: list[str], b: list[str], codes: list[Opcode]) -> None:
        super().__init__(None, a, b, autojunk=False)
        self.fixed = codes

    def get_opcodes(self) -> list[Opcode]:
        return list(self.fixed)


def _range(start: int, stop: int) -> str:
    """A hunk's range as ``difflib.unified_diff`` writes it."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if not length else start + 1},{length}"


def _unified(a: list[str], b: list[str], codes: list[Opcode], fromfile: str,
             tofile: str) -> str:
    """``difflib.unified_diff``'s text (three lines of context) from given opcodes."""
    out: list[str] = []
    for group in _Fixed(a, b, codes).get_grouped_opcodes(3):
        if not out:
            out += [f"--- {fromfile}\n", f"+++ {tofile}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            out += ["-" + line for line in a[i1:i2]]
            out += ["+" + line for line in b[j1:j2]]
    return "".join(out)
