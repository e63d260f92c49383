"""A mutant's diff shows the lines the mutant changed, not other lines with the
same text that ``difflib`` alone might match instead."""

from __future__ import annotations

import difflib
from pathlib import Path

from metaeval.mutation.find.diffs import mutant_diff, unified_diff
from metaeval.mutation.find.targets import find_mutants

GUARD = """\
def allowed(command):
    if len(command) > 200:
        return False
    if "\\t" in command:
        return False
    if ";" in command:
        return False
    return bool(command)
"""


def test_a_dropped_second_clause_is_shown_as_the_second(tmp_path: Path) -> None:
    (tmp_path / "guard.py").write_text(GUARD, encoding="utf-8")
    mutants = find_mutants(["guard.py"], tmp_path, operators=["drop_guard_clause"])
    (second,) = [m for m in mutants if m.span.start_line == 4]
    diff = mutant_diff(second, tmp_path).splitlines()
    assert [line for line in diff if line.startswith("-") and not line.startswith("---")] == [
        '-    if "\\t" in command:', "-        return False"]
    # The first clause is context, whole: its ``return False`` is not taken away.
    assert diff[diff.index("     if len(command) > 200:") + 1] == "         return False"
    # difflib on its own matches the text by removing the first clause's end: the
    # case above must be one where the two differ.
    plain = list(difflib.unified_diff(GUARD.splitlines(), second.mutated_source.splitlines(),
                                      lineterm=""))
    assert [line for line in plain if line.startswith("-")][1] == "-        return False"


def test_a_change_with_one_place_it_can_be_is_the_plain_unified_diff() -> None:
    before = "".join(f"x{i} = {i}\n" for i in range(20))
    after = before.replace("x9 = 9\n", "x9 = 10\n")
    assert unified_diff(before, after, "m.py", 10, 10) == "".join(difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), "a/m.py", "b/m.py"))
    # A change at the first and at the last line, where a hunk's range is short.
    for line, old, new in ((1, "x0 = 0\n", "x0 = 1\n"), (20, "x19 = 19\n", "x19 = 0\n")):
        changed = before.replace(old, new)
        assert unified_diff(before, changed, "m.py", line, line) == "".join(
            difflib.unified_diff(before.splitlines(keepends=True),
                                 changed.splitlines(keepends=True), "a/m.py", "b/m.py"))
    assert unified_diff(before, before, "m.py", 3, 3) == ""
