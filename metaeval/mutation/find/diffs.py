"""What a mutant changed, as a unified diff against the file as it is on disk.

Reads the user's source (never imports or runs it); a file that cannot be read
falls back to the mutant's own before and after text.
"""

from __future__ import annotations

import difflib
from pathlib import Path

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
        return unified_diff(original, m.mutated_source, m.path)
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
    return unified_diff(original, mutant.mutated_source, mutant.path)


def unified_diff(original: str, mutated: str, path: str) -> str:
    return "".join(difflib.unified_diff(
        source_lines(original),
        source_lines(mutated),
        fromfile=header_name("a/", path),
        tofile=header_name("b/", path),
    ))


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
