"""--since REF: only the mutants on lines a pull request changed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.errors import InputError
from metaeval.mutation.find.since import changed_lines, touched
from metaeval.mutation.model import Mutant, MutantKind, Span
from tests.mutation.conftest import copy_shop, git

METAEVAL = str(Path(sys.executable).parent / "metaeval")
TEN_LINES = "".join(f"x{i} = {i}\n" for i in range(1, 11))


def repository(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text(TEN_LINES, encoding="utf-8")
    (tmp_path / "b.py").write_text(TEN_LINES, encoding="utf-8")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


def test_changed_lines_are_the_new_sides_lines_and_untracked_files(tmp_path: Path) -> None:
    root = repository(tmp_path)
    lines = TEN_LINES.splitlines(keepends=True)
    lines[2] = "x3 = 33\n"  # line 3 changed
    del lines[6]  # line 7 deleted: the code between new lines 6 and 7 changed
    (root / "a.py").write_text("".join(lines), encoding="utf-8")
    (root / "new.py").write_text("y = 1\n", encoding="utf-8")
    changes = changed_lines(root, "HEAD")
    assert changes == {"a.py": {3, 6, 7}, "new.py": None}  # b.py did not change


def test_an_unknown_ref_is_an_input_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no-such-branch"):
        changed_lines(repository(tmp_path), "no-such-branch")


def mutant(path: str, start: int, end: int, kind: MutantKind = MutantKind.REWRITE) -> Mutant:
    return Mutant(id="m", kind=kind, operator="op", path=path, module="a", qualname="f",
                  span=Span(start, 1, end, 2), original="", replacement="")


@pytest.mark.parametrize(("m", "expected"), [
    (mutant("a.py", 3, 3), True),
    (mutant("a.py", 1, 3), True),  # a span that ends on a changed line
    (mutant("a.py", 4, 5), False),
    (mutant("b.py", 3, 3), False),  # same line, unchanged file
    (mutant("new.py", 40, 40), True),  # untracked: every line is new
    (mutant("a.py", 9, 9, MutantKind.PATCH), True),  # its target's file changed
    (mutant("b.py", 3, 3, MutantKind.PATCH), False),
])
def test_touched(m: Mutant, expected: bool) -> None:
    changes: dict[str, set[int] | None] = {"a.py": {3, 6, 7}, "new.py": None}
    assert touched(m, changes) is expected


def test_since_head_mutates_only_the_changed_function(tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    pricing = project / "shop" / "pricing.py"
    text = pricing.read_text(encoding="utf-8")
    pricing.write_text(text.replace("    if quantity > limit:\n",
                                    "    if quantity > limit:  # the cap\n"), encoding="utf-8")
    (project / "no_patches").mkdir()
    done = subprocess.run([METAEVAL, "mutate", "--since", "HEAD", "--format", "json",
                           "--no-cache", "--mutants", "no_patches", "--report",
                           str(tmp_path / "r.json")], cwd=project, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout, done.stderr
    statuses = {m["id"]: m["status"] for m in json.loads(done.stdout)["mutants"]}
    assert statuses == {"shop/pricing.py::clamp_quantity::negate_condition::0": "Killed",
                        "shop/pricing.py::clamp_quantity::flip_comparison::0": "Survived"}
    assert "2 of 11 mutants on changed lines" in done.stderr


GUARD = """\
def allowed(command):
    if not command:
        return False
    if "\\t" in command:
        return False
    return True
"""


def test_a_survivor_has_one_fingerprint_in_a_pull_requests_run_and_the_full_run(
        tmp_path: Path) -> None:
    # Two identical faults in one function (each ``return False`` made True) are
    # told apart by their order; a run of the changed line alone counted only the
    # second, gave it the first's fingerprint, and a full run said it was new.
    (tmp_path / "pyproject.toml").write_text(
        "[tool.pytest.ini_options]\npythonpath = ['.']\n\n[tool.metaeval.mutate]\n"
        "targets = ['guard.py']\noperators = ['swap_bool_literal']\n", encoding="utf-8")
    (tmp_path / "guard.py").write_text(GUARD.replace('    if "\\t" in command:\n'
                                                     '        return False\n', ""),
                                       encoding="utf-8")
    (tmp_path / "test_guard.py").write_text(
        "from guard import allowed\n\n\ndef test_empty():\n    assert not allowed('')\n\n\n"
        "def test_word():\n    assert allowed('ls')\n\n\n"
        "def test_tab():\n    allowed('a\\tb')  # run, never checked\n", encoding="utf-8")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    (tmp_path / "guard.py").write_text(GUARD, encoding="utf-8")  # the untested tab check

    def survivors(*flags: str) -> dict[int, str]:
        done = subprocess.run([METAEVAL, "mutate", "--no-cache", *flags], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stdout + done.stderr
        last = json.loads((tmp_path / ".metaeval" / "last-run-findings.json").read_text())
        return {e["line"]: e["fingerprint"] for e in last["findings"]}

    pull_request = survivors("--since", "main")
    full = survivors()
    assert pull_request == full == {5: full[5]}  # line 3's fault is killed by test_empty
