"""The caches know what the tests read (issue 45, item 1): a data file a baseline test
opened is a dependency of the results its tests decided, and of their coverage
records; a ``pyproject.toml`` table no run and no test reads (a gate bar) is not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

from metaeval.mutation.caches.config_digest import RUN_CONFIG, config_digest
from metaeval.mutation.caches.coverage_cache import CoverageMap, load_reuse
from metaeval.mutation.caches.result_cache import ResultCache
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.isolation.options import Isolation
from metaeval.mutation.model import MutantResult, Status
from metaeval.mutation.wire import CodeRun, read_record
from tests.mutation.caches.test_result_cache import mutant, project
from tests.mutation.conftest import METAEVAL, SUBPROCESS_SLOW, mutate_json

# --- which opens are recorded --------------------------------------------------------

# Run in a process of its own: an audit hook, once added, cannot be removed.
RECORD = """
import json, os, sys
from pathlib import Path
from types import SimpleNamespace
from metaeval.mutation.child.reads import FileReads

root = Path(sys.argv[1])
reads = FileReads(root)
reads.start()
open(root / "cases.json").read()              # collection: every test's
reads.begin("t.py::a")
(root / "fixture.txt").read_text()            # a fixture's setup: every test's
reads.pytest_runtest_call(SimpleNamespace(nodeid="t.py::a"))
(root / "labels.csv").read_text()             # the test's own body
os.close(os.open(root / "raw.bin", os.O_RDONLY))
(root / "out.txt").write_text("written")      # written, not read
(root / "helper.py").read_text()              # a module: hashed as one already
(root / ".metaeval" / "c.json").read_text()   # metaeval's own
(root.parent / "outside.txt").read_text()     # not the project's
os.chdir(root / "data")
open("rel.csv").read()                        # relative to the directory then
reads.pytest_runtest_teardown(SimpleNamespace(nodeid="t.py::a"))
reads.end()
reads.begin("t.py::b")
reads.pytest_runtest_call(SimpleNamespace(nodeid="t.py::b"))
open(root / "labels.csv").read()
reads.end()
reads.pause()
open(root / "after.txt").read()               # a mutant's: nobody's dependency
print(json.dumps([[r.file, list(r.tests)] for r in reads.runs()]))
"""


def test_a_baseline_records_the_data_files_each_test_reads(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".metaeval").mkdir(parents=True)
    (root / "data").mkdir()
    for name in ("cases.json", "fixture.txt", "labels.csv", "raw.bin", "helper.py",
                 ".metaeval/c.json", "data/rel.csv", "after.txt"):
        (root / name).write_text("x", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("x", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", RECORD, str(root)], capture_output=True,
                          text=True, check=True)
    assert json.loads(done.stdout) == [
        ["cases.json", []], ["data/rel.csv", ["t.py::a"]], ["fixture.txt", []],
        ["labels.csv", ["t.py::a", "t.py::b"]], ["raw.bin", ["t.py::a"]]]


# --- what of pyproject.toml a result depends on --------------------------------------

PYPROJECT = """\
[tool.pytest.ini_options]
pythonpath = ['.']

[tool.metaeval.mutate]
targets = ["grader.py"]

[tool.metaeval.meta_eval]
min_tpr = 0.8

[tool.metaeval.gate]
"mutate:counts.Survived" = { max = 0 }
"""


@pytest.mark.parametrize(("old", "new", "run_changes", "data_changes"), [
    ("max = 0", "max = 3", False, False),                  # a gate bar: nobody's
    ("[tool.metaeval.gate]", "# bars\n[tool.metaeval.gate]", False, False),
    ("min_tpr = 0.8", "min_tpr = 0.9", False, True),       # a test may read it
    ("pythonpath = ['.']", "pythonpath = ['src']", True, True),  # pytest's own
    ('targets = ["grader.py"]', 'targets = ["other.py"]', True, True),
    ("[tool.metaeval.gate]", "[tool.metaeval.gate", True, True),  # no TOML: whole
])
def test_pyproject_is_hashed_by_the_tables_read(tmp_path: Path, old: str, new: str,
                                                run_changes: bool, data_changes: bool) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(PYPROJECT, encoding="utf-8")
    before = (config_digest(tmp_path, RUN_CONFIG, "deps"),
              config_digest(tmp_path, "pyproject.toml", "deps"))
    assert old in PYPROJECT
    path.write_text(PYPROJECT.replace(old, new), encoding="utf-8")
    after = (config_digest(tmp_path, RUN_CONFIG, "deps"),
             config_digest(tmp_path, "pyproject.toml", "deps"))
    assert (before[0] != after[0], before[1] != after[1]) == (run_changes, data_changes)


def test_no_pyproject_is_missing_and_another_file_is_hashed_whole(tmp_path: Path) -> None:
    assert config_digest(tmp_path, RUN_CONFIG, "deps") == "missing"
    (tmp_path / "labels.csv").write_text("a,b\n", encoding="utf-8")
    first = config_digest(tmp_path, "labels.csv", "deps")
    (tmp_path / "labels.csv").write_text("a,b \n", encoding="utf-8")
    assert config_digest(tmp_path, "labels.csv", "deps") not in (first, "missing")


# --- the coverage cache: a changed data file retraces its readers ----------------------

TESTS = ("test_a.py::test_a", "test_b.py::test_b")


def coverage_project(root: Path) -> Path:
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    (root / "calc.py").write_text("def calc():\n    return 1\n", encoding="utf-8")
    for name in ("a", "b"):
        (root / f"test_{name}.py").write_text(f"def test_{name}():\n    pass\n",
                                              encoding="utf-8")
    for name in ("labels.csv", "cases.json"):
        (root / name).write_text("1\n", encoding="utf-8")
    ran = (CodeRun("calc", "calc.py", 1, "calc", TESTS, (((2,), (0, 1)),)),
           read_record("labels.csv", (TESTS[0],)), read_record("cases.json", ()))
    CoverageMap(("calc",), (), ran, dict.fromkeys(TESTS, 0.1), TESTS).save(
        root / "map.json", root)
    return root


def test_a_data_file_changed_retraces_the_tests_that_read_it(tmp_path: Path) -> None:
    root = coverage_project(tmp_path)
    reuse, _ = load_reuse(root / "map.json", root, ("calc",), ())
    assert reuse is not None and set(reuse.tests) == set(TESTS)  # the mirror: unchanged
    (root / "labels.csv").write_text("2\n", encoding="utf-8")
    reuse, _ = load_reuse(root / "map.json", root, ("calc",), ())
    assert reuse is not None and set(reuse.tests) == {TESTS[1]} and reuse.stale == 1
    assert read_record("cases.json", ()) in reuse.ran  # still every test's


def test_a_file_every_test_read_changed_retraces_them_all(tmp_path: Path) -> None:
    root = coverage_project(tmp_path)
    (root / "cases.json").write_text("2\n", encoding="utf-8")
    assert load_reuse(root / "map.json", root, ("calc",), ())[0] is None


# --- end to end: a relabelled row, a gate bar -----------------------------------------

GRADER_TEST = """\
import csv
from pathlib import Path

from grader import passes


def test_grader_agrees_with_the_labels():
    with open(Path(__file__).parent / "labels.csv", newline="") as f:
        for score, bar, label in csv.reader(f):
            assert passes(float(score), float(bar)) == (label == "pass")


def test_a_low_score_fails():
    assert not passes(0.1, 0.5)
"""


def grader_project(root: Path) -> Path:
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "grader.py").write_text("def passes(score, bar):\n    return score >= bar\n",
                                    encoding="utf-8")
    (root / "labels.csv").write_text("0.9,0.5,pass\n0.5,0.5,pass\n0.2,0.5,fail\n",
                                     encoding="utf-8")
    (root / "test_grader.py").write_text(dedent(GRADER_TEST), encoding="utf-8")
    return root


@pytest.mark.parametrize("isolation", [Isolation.FORK, SUBPROCESS_SLOW])
def test_a_relabelled_row_fails_a_cached_run_and_a_gate_bar_reuses_it(
        tmp_path: Path, isolation: Isolation) -> None:
    root = grader_project(tmp_path)
    flags = ("--isolation", isolation.value)
    first, done = mutate_json(root, *flags, cache=True)
    assert done.returncode == 0, done.stderr
    assert (first["timing"]["ran"], first["counts"]["Killed"]) == (3, 3)
    # A gate bar is read by `metaeval gate` alone: every result is reused.
    pyproject = root / "pyproject.toml"
    pyproject.write_text(PYPROJECT.replace("max = 0", "max = 2"), encoding="utf-8")
    again, done = mutate_json(root, *flags, cache=True)
    assert done.returncode == 0, done.stderr
    assert (again["timing"]["cached"], again["timing"]["ran"]) == (3, 0)
    # The row relabelled: the grader's test fails without any mutant, and a run
    # with every result cached must say so, not reuse them.
    labels = root / "labels.csv"
    labels.write_text(labels.read_text(encoding="utf-8").replace("0.5,0.5,pass",
                                                                 "0.5,0.5,fail"),
                      encoding="utf-8")
    failed = subprocess.run([METAEVAL, "mutate", *flags, "--report", str(root / "r.json")],
                            cwd=root, capture_output=True, text=True, timeout=60)
    assert failed.returncode == 3, failed.stdout + failed.stderr
    assert "test_grader.py::test_grader_agrees_with_the_labels" in failed.stderr
    # the mirror: pytest's own configuration changed, and nothing is reused
    labels.write_text("0.9,0.5,pass\n0.5,0.5,pass\n0.2,0.5,fail\n", encoding="utf-8")
    pyproject.write_text(PYPROJECT.replace("pythonpath = ['.']", "pythonpath = ['.', 'x']"),
                         encoding="utf-8")
    rerun, done = mutate_json(root, *flags, cache=True)
    assert done.returncode == 0, done.stderr
    assert (rerun["timing"]["cached"], rerun["timing"]["ran"]) == (0, 3)


# --- a data file that cannot be read is never unchanged -------------------------------


@pytest.mark.parametrize("special", [False, True])
def test_a_data_file_that_cannot_be_read_is_changed_every_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], special: bool) -> None:
    root = project(tmp_path)
    if special:
        os.mkfifo(root / "labels.csv")  # a read of it would never end
    else:
        (root / "labels.csv").write_text("a\n", encoding="utf-8")
    test = "tests/test_calc.py::test_double"
    coverage = Coverage.from_runs(root, (read_record("labels.csv", (test,)),))
    cache = ResultCache(root, ())
    cache.store(MutantResult(mutant(), Status.KILLED, killed_by=(test,), covered_by=(test,)),
                coverage)
    cache.save(1.0, 8.0)
    found = ResultCache(root, ()).lookup(mutant())
    assert (found is None) is special
    assert ("counted as changed" in capsys.readouterr().err) is special
