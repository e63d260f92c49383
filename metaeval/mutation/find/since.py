"""Which mutants a pull request touches: those on lines changed against a git ref.

``metaeval mutate --since REF`` keeps a rewrite mutant when its span overlaps a
line that ``git diff REF`` shows as added or changed (or sits in a file git
does not track yet), and a patch mutant when the module file of its target
changed at all. This module only reads git's view of the repository; it never
changes the repository, the index or the work tree.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from metaeval.errors import InputError
from metaeval.mutation.model import Mutant, MutantKind

WHOLE_FILE = None
"""The value for a file whose every line counts as changed (a file git does not track)."""

_FILE = re.compile(r"^\+\+\+ b/(.+)$")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise InputError(f"--since: cannot run git in {root}: {e}") from e
    if done.returncode != 0:
        raise InputError(f"--since: `git {' '.join(args)}` failed in {root}: "
                         f"{done.stderr.strip()}")
    return done.stdout


def changed_lines(root: Path, ref: str) -> dict[str, set[int] | None]:
    """Per file (relative to ``root``), the new-side line numbers changed against
    ``ref``; ``WHOLE_FILE`` for a file git does not track. InputError naming the
    ref when git cannot answer (not a repository, no such ref)."""
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except InputError as e:
        raise InputError(f"--since: got {ref!r}; expected a git commit, branch or tag "
                         f"known in {root}") from e
    changes: dict[str, set[int] | None] = {}
    current: set[int] | None = None
    for line in _git(root, "diff", "-U0", "--no-color", "--no-ext-diff", "--relative",
                     ref, "--").splitlines():
        if (found := _FILE.match(line)) is not None:
            current = changes.setdefault(found.group(1), set())
        elif (hunk := _HUNK.match(line)) is not None and current is not None:
            start = int(hunk.group(1))
            count = 1 if hunk.group(2) is None else int(hunk.group(2))
            # A pure deletion changes the code between two lines: count both.
            current.update(range(start, start + count) if count else (start, start + 1))
    for name in _git(root, "ls-files", "--others", "--exclude-standard").splitlines():
        changes[name] = WHOLE_FILE
    return changes


def touched(mutant: Mutant, changes: dict[str, set[int] | None]) -> bool:
    """Whether the change set reaches the mutant (see the module docstring)."""
    if mutant.path not in changes:
        return False
    lines = changes[mutant.path]
    if lines is WHOLE_FILE or mutant.kind is MutantKind.PATCH:
        return lines is WHOLE_FILE or bool(lines)
    span = range(mutant.span.start_line, mutant.span.end_line + 1)
    return any(line in lines for line in span)


def since(mutants: Sequence[Mutant], root: Path, ref: str) -> list[Mutant]:
    """The mutants on lines changed against ``ref``, in their order."""
    changes = changed_lines(root, ref)
    return [m for m in mutants if touched(m, changes)]
