"""Issue 6 end to end, in a temporary git repository, as a user would run it:
commit 1 has a survivor, accepted with a reason; commit 2 adds a new survivor
and the run fails naming only it; commit 3 adds the test that kills it, and the
run passes and lists it as fixed."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.mutation.find.targets import find_mutants
from metaeval.mutation.findings_file import fingerprints, load
from tests.builders import git

PYPROJECT = """
[tool.metaeval]
findings = "mutants/findings.json"

[tool.metaeval.mutate]
targets = ["shop/guards.py"]
operators = ["flip_comparison"]
jobs = 2
"""

GUARDS_1 = '''
def refund_allowed(age_days: int, window: int = 30) -> bool:
    """A refund is allowed within the window."""
    return age_days <= window
'''

GUARDS_2 = GUARDS_1 + '''

def amount_allowed(amount: float, cap: float = 100.0) -> bool:
    """A refund above the cap needs a human."""
    return amount < cap
'''

TESTS_1 = '''
from shop.guards import refund_allowed


def test_refund_inside_the_window() -> None:
    assert refund_allowed(10)


def test_no_refund_long_after() -> None:
    assert not refund_allowed(90)
'''

TESTS_2 = TESTS_1 + '''

from shop.guards import amount_allowed


def test_small_amounts_pass_and_large_ones_do_not() -> None:
    assert amount_allowed(20.0)
    assert not amount_allowed(500.0)
'''

TESTS_3 = TESTS_2 + '''

def test_the_cap_itself_needs_a_human() -> None:
    assert not amount_allowed(100.0)
'''


def commit(root: Path, guards: str, tests: str, message: str) -> None:
    (root / "shop" / "guards.py").write_text(textwrap.dedent(guards).lstrip())
    (root / "tests" / "test_guards.py").write_text(textwrap.dedent(tests).lstrip())
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "shop").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / ".gitignore").write_text(".metaeval/\n__pycache__/\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.name", "Dana")
    git(tmp_path, "config", "user.email", "dana@example.com")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def metaeval(*args: str) -> tuple[int, str]:
    out = CliRunner().invoke(main, list(args))
    return out.exit_code, out.output


def test_a_pull_request_fails_only_on_its_new_survivor(repo: Path) -> None:
    findings = "mutants/findings.json"
    commit(repo, GUARDS_1, TESTS_1, "refund window")
    code, text = metaeval("mutate", "--baseline", findings, "--update-baseline")
    # The window's boundary (<= vs <) is untested: new, and recorded by the update,
    # which accepts the run as it is.
    assert code == 0, text
    assert "1 new, 0 expired" in text and "new survivors (recorded as open):" in text
    (entry,) = load(repo / findings).entries
    assert entry.qualname == "refund_allowed"
    code, text = metaeval("findings", "accept", entry.fingerprint[:10], "--reason",
                          "day 30 is decided by support, not by this guard")
    assert code == 0, text
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "accept the window boundary")
    code, text = metaeval("mutate", "--baseline", findings)
    assert code == 0, text
    assert "0 new, 0 expired, 0 known open, 1 accepted, 0 fixed" in text

    commit(repo, GUARDS_2, TESTS_2, "amount cap")
    code, text = metaeval("mutate", "--baseline", findings)
    assert code == 1, text  # a pull request's new survivor fails it
    assert "1 new, 0 expired, 0 known open, 1 accepted, 0 fixed" in text
    code, text = metaeval("mutate", "--baseline", findings, "--update-baseline",
                          "--sarif", "out/metaeval.sarif")
    assert code == 0, text
    assert "1 new, 0 expired, 0 known open, 1 accepted, 0 fixed" in text
    new_lines = [line for line in text.splitlines() if line.startswith("  + ")]
    assert len(new_lines) == 1 and "shop/guards.py:8 flip_comparison" in new_lines[0]
    sarif = json.loads((repo / "out" / "metaeval.sarif").read_text())
    (result,) = sarif["runs"][0]["results"]  # the accepted one is not reported
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 8
    cap = next(e for e in load(repo / findings).entries if e.qualname == "amount_allowed")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "track the cap's survivor")

    commit(repo, GUARDS_2, TESTS_3, "test the cap")
    code, text = metaeval("mutate", "--baseline", findings)
    assert code == 0, text
    assert "0 new, 0 expired, 0 known open, 1 accepted, 1 fixed" in text
    assert f"  - {cap.fingerprint[:12]} shop/guards.py:8" in text.split("fixed (tracked, ")[1]
    code, text = metaeval("mutate", "--baseline", findings, "--update-baseline")
    assert [e.qualname for e in load(repo / findings).entries] == ["refund_allowed"]
    assert subprocess.run(["git", "status", "--porcelain", "shop", "tests"], cwd=repo,
                          capture_output=True, text=True).stdout == ""


def test_twenty_blank_lines_on_top_change_no_fingerprint(tmp_path: Path) -> None:
    source = (Path(__file__).resolve().parents[2] / "metaeval" / "graders"
              / "trajectory_rules.py").read_text()
    (tmp_path / "rules.py").write_text(source)
    before = fingerprints(find_mutants(["rules.py"], tmp_path))
    (tmp_path / "rules.py").write_text("\n" * 20 + source)
    moved = find_mutants(["rules.py"], tmp_path)
    after = fingerprints(moved)
    assert len(before) > 40
    assert sorted(before.values()) == sorted(after.values())
    assert min(m.span.start_line for m in moved) > 20  # the lines really moved
