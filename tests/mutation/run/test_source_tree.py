"""A mutate run whose tests write into the source tree proves nothing, and says so."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from metaeval.errors import ExitCode
from metaeval.mutation.run.source_tree import snapshot, tree_written, written
from tests.mutation.conftest import METAEVAL, copy_shop, git


def test_a_write_to_a_tracked_file_is_seen_and_tool_directories_are_not(
        tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    (project / ".metaeval").mkdir()
    before = snapshot(project)
    assert "shop/pricing.py" in before.files and "pyproject.toml" in before.files
    assert written(before) == ()  # the "no": nothing written, nothing said
    assert tree_written(before) == ""
    # Where a run writes by design: caches, metaeval's reports, untracked outputs.
    (project / ".metaeval" / "mutation-report.json").write_text("{}", encoding="utf-8")
    (project / "shop" / "__pycache__").mkdir()
    (project / "shop" / "__pycache__" / "pricing.pyc").write_bytes(b"\0")
    (project / "out.txt").write_text("a test's output\n", encoding="utf-8")
    assert written(before) == ()
    source = project / "shop" / "pricing.py"
    source.write_text(source.read_text(encoding="utf-8") + "# a test was here\n",
                      encoding="utf-8")
    (project / "tests" / "test_pricing.py").unlink()
    assert written(before) == ("shop/pricing.py", "tests/test_pricing.py")
    assert "shop/pricing.py, tests/test_pricing.py changed" in tree_written(before)


def test_a_file_written_back_as_it_was_still_counts(tmp_path: Path) -> None:
    # Other mutants' tests ran while it was different.
    project = copy_shop(tmp_path)
    source = project / "shop" / "pricing.py"
    before = snapshot(project)
    text = source.read_text(encoding="utf-8")
    source.write_text("broken\n", encoding="utf-8")
    source.write_text(text, encoding="utf-8")
    os.utime(source, ns=(1, 1))  # an older mtime, as a careless restore leaves
    assert written(before) == ("shop/pricing.py",)


def test_outside_git_the_python_sources_are_watched(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("a = 1\n", encoding="utf-8")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "b.py").write_text("b = 1\n", encoding="utf-8")
    before = snapshot(tmp_path)
    assert sorted(before.files) == ["pkg/a.py"]
    (tmp_path / "pkg" / "a.py").write_text("a = 22\n", encoding="utf-8")
    assert written(before) == ("pkg/a.py",)


WRITER = '''\
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "shop" / "pricing.py"


def test_writes_into_the_source():
    SOURCE.write_text(SOURCE.read_text(encoding="utf-8") + "# written by a test\\n",
                      encoding="utf-8")
'''


def test_mutate_is_void_when_a_test_writes_into_a_source_file(tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    (project / "tests" / "test_writer.py").write_text(WRITER, encoding="utf-8")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "a test that writes into the source")
    (project / "no_patches").mkdir()
    done = subprocess.run([METAEVAL, "mutate", "shop/pricing.py:discount_cents", "--mutants",
                           "no_patches", "--no-cache"], cwd=project, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == ExitCode.VOID, done.stdout + done.stderr
    assert ("error: the tests wrote into the source tree while the mutants ran, so the run "
            "proves nothing: shop/pricing.py changed.") in done.stderr
    assert not (project / ".metaeval" / "mutation-report.json").exists()


def test_mutate_of_the_same_project_without_the_writer_is_not_void(tmp_path: Path) -> None:
    # The mirror: the same run, no test writing; the tree is left as it was.
    project = copy_shop(tmp_path)
    (project / "no_patches").mkdir()
    done = subprocess.run([METAEVAL, "mutate", "shop/pricing.py:discount_cents", "--mutants",
                           "no_patches", "--no-cache"], cwd=project, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert "source tree" not in done.stderr
