"""A diff's ``---``/``+++`` names are quoted as git quotes them, so a file name with
a newline cannot split the header into a line of its own."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from metaeval.mutation.find.diffs import header_name, unified_diff


def test_a_plain_name_is_left_as_it_is() -> None:
    assert header_name("a/", "src/pkg/guard_1.py") == "a/src/pkg/guard_1.py"
    assert unified_diff("x = 1\n", "x = 2\n", "m.py").splitlines()[:2] == ["--- a/m.py",
                                                                          "+++ b/m.py"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("name", ['new\nline.py', 'tab\there.py', 'quote"d.py',
                                  'back\\slash.py', 'bell\x07.py', 'esc\x1b[31m.py'])
def test_an_awkward_name_is_quoted_as_git_quotes_it(tmp_path: Path, name: str) -> None:
    git = ["git", "-c", "core.quotePath=false", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / name).write_text("x = 1\n")
    subprocess.run([*git, "add", "--", name], check=True)
    (tmp_path / name).write_text("x = 2\n")
    shown = subprocess.run([*git, "diff"], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    ours = unified_diff("x = 1\n", "x = 2\n", name).splitlines()
    assert ours[:2] == [line for line in shown if line.startswith(("--- ", "+++ "))]
    assert len(ours) == 5  # the two headers, a hunk line, one line out, one in
