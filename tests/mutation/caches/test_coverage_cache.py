"""The baseline's coverage map kept between runs: which records still hold."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from textwrap import dedent

import pytest

from metaeval.mutation.caches.coverage_cache import CoverageMap, load_reuse
from metaeval.mutation.wire import CodeRun

METAEVAL = str(Path(sys.executable).parent / "metaeval")


def project(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\npythonpath = ['.']\n",
                                         encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "conftest.py").write_text("", encoding="utf-8")
    for name in ("prices", "stock"):
        (root / f"{name}.py").write_text(f"def {name}():\n    return 1\n", encoding="utf-8")
        (root / "tests" / f"test_{name}.py").write_text(
            f"from {name} import {name}\n\n\ndef test_{name}():\n    assert {name}() == 1\n",
            encoding="utf-8")
    return root


def record(root: Path) -> list[CodeRun]:
    # prices() ran in test_prices only; stock() in both tests (two line groups).
    return [CodeRun("prices", str(root / "prices.py"), 1, "prices",
                    ("tests/test_prices.py::test_prices",), (((2,), (0,)),)),
            CodeRun("stock", str(root / "stock.py"), 1, "stock",
                    ("tests/test_prices.py::test_prices", "tests/test_stock.py::test_stock"),
                    (((2,), (0, 1)),))]


TESTS = ("tests/test_prices.py::test_prices", "tests/test_stock.py::test_stock")


def saved(root: Path, packages: tuple[str, ...] = ("prices", "stock")) -> Path:
    path = root / ".metaeval" / "mutate-coverage.json"
    CoverageMap(packages, ("-q",), tuple(record(root)), {TESTS[0]: 0.5, TESTS[1]: 0.25},
                TESTS).save(path, root)
    return path


def test_a_skipped_test_is_never_reused_but_its_time_is_kept(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = root / ".metaeval" / "mutate-coverage.json"
    skipped = "tests/test_stock.py::test_skipped"
    CoverageMap(("prices", "stock"), ("-q",), tuple(record(root)),
                {TESTS[0]: 0.5, TESTS[1]: 0.25, skipped: 0.125}, TESTS).save(path, root)
    reuse, _ = load_reuse(path, root, ("prices", "stock"), ("-q",))
    assert reuse is not None
    assert reuse.tests == {TESTS[0]: 0.5, TESTS[1]: 0.25} and reuse.old == {skipped: 0.125}


def test_an_unchanged_project_reuses_every_record(tmp_path: Path) -> None:
    root = project(tmp_path)
    reuse, warning = load_reuse(saved(root), root, ("prices", "stock"), ("-q",))
    assert warning == "" and reuse is not None
    assert reuse.tests == {TESTS[0]: 0.5, TESTS[1]: 0.25}
    # Kept by their path in the project (traced with absolute ones).
    assert reuse.ran == tuple(replace(r, file=Path(r.file).name) for r in record(root))
    assert reuse.stale == 0 and reuse.old == {}


def test_a_changed_source_file_retraces_only_the_tests_that_ran_it(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = saved(root)
    (root / "prices.py").write_text("def prices():\n    return 2\n", encoding="utf-8")
    reuse, _ = load_reuse(path, root, ("prices", "stock"), ("-q",))
    assert reuse is not None and reuse.stale == 1
    assert reuse.tests == {TESTS[1]: 0.25}
    assert reuse.old == {TESTS[0]: 0.5}  # the stale test's earlier time, for its limits
    # What test_prices ran is traced again: its share of stock's record is dropped.
    assert reuse.ran == (CodeRun("stock", "stock.py", 1, "stock", (TESTS[1],),
                                 (((2,), (0,)),)),)


def test_a_copy_of_the_project_elsewhere_sees_its_own_files_change(tmp_path: Path) -> None:
    # Traced in one place (records carry that place's absolute paths), then copied:
    # a change in the copy makes its tests stale, though the first place is as it was.
    first = project(tmp_path / "first")
    saved(first)
    copy = tmp_path / "copy"
    shutil.copytree(first, copy)
    (copy / "prices.py").write_text("def prices():\n    return 2\n", encoding="utf-8")
    reuse, _ = load_reuse(copy / ".metaeval" / "mutate-coverage.json", copy,
                          ("prices", "stock"), ("-q",))
    assert reuse is not None and reuse.stale == 1 and reuse.tests == {TESTS[1]: 0.25}


def test_a_changed_function_retraces_only_the_tests_that_ran_that_function(
        tmp_path: Path) -> None:
    root = project(tmp_path)
    # stock.py gains a function above stock(): test_stock ran only stock(), which
    # reads the same two lines lower; test_prices ran restock(), which changes.
    (root / "stock.py").write_text("def restock():\n    return 0\n\n\ndef stock():\n"
                                   "    return 1\n", encoding="utf-8")
    path = root / ".metaeval" / "mutate-coverage.json"
    runs = (CodeRun("stock", str(root / "stock.py"), 1, "restock", (TESTS[0],),
                    (((2,), (0,)),)),
            CodeRun("stock", str(root / "stock.py"), 5, "stock", (TESTS[1],),
                    (((6,), (0,)),)))
    CoverageMap(("stock",), ("-q",), runs, {TESTS[0]: 0.5, TESTS[1]: 0.25},
                TESTS).save(path, root)
    (root / "stock.py").write_text("def restock():\n    n = 0\n    return n\n\n\n"
                                   "def stock():\n    return 1\n", encoding="utf-8")
    reuse, _ = load_reuse(path, root, ("stock",), ("-q",))
    assert reuse is not None and reuse.stale == 1 and reuse.tests == {TESTS[1]: 0.25}
    assert reuse.ran == (CodeRun("stock", "stock.py", 6, "stock", (TESTS[1],),
                                 (((7,), (0,)),)),)
    # A constant outside the functions: every test that ran the file is traced again.
    (root / "stock.py").write_text("N = 1\ndef restock():\n    n = 0\n    return n\n\n\n"
                                   "def stock():\n    return 1\n", encoding="utf-8")
    assert load_reuse(path, root, ("stock",), ("-q",)) == (None, "")


def test_a_changed_test_file_retraces_its_tests(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = saved(root)
    test_file = root / "tests" / "test_stock.py"
    test_file.write_text(test_file.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    reuse, _ = load_reuse(path, root, ("prices", "stock"), ("-q",))
    assert reuse is not None and set(reuse.tests) == {TESTS[0]}


def test_what_every_test_depends_on_or_other_settings_reuse_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = saved(root)
    assert load_reuse(path, root, ("prices",), ("-q",)) == (None, "")
    assert load_reuse(path, root, ("prices", "stock"), ("-x",)) == (None, "")
    (root / "tests" / "conftest.py").write_text("X = 1\n", encoding="utf-8")
    assert load_reuse(path, root, ("prices", "stock"), ("-q",)) == (None, "")
    assert load_reuse(root / "nothing.json", root, ("prices",), ()) == (None, "")


def test_an_unreadable_map_is_a_cold_cache_with_a_warning(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = saved(root)
    path.write_text("{not json", encoding="utf-8")
    reuse, warning = load_reuse(path, root, ("prices", "stock"), ("-q",))
    assert reuse is None and warning.startswith(f"warning: {path}: cannot read")
    path.write_text(json.dumps({"tests": {}}), encoding="utf-8")
    reuse, warning = load_reuse(path, root, ("prices", "stock"), ("-q",))
    assert reuse is None and "not a coverage map" in warning


def run(root: Path, *args: str) -> dict[str, object]:
    done = subprocess.run([METAEVAL, "mutate", "--format", "json", *args], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    output: dict[str, object] = json.loads(done.stdout)
    return output


def test_a_rerun_traces_only_the_tests_of_what_changed(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "pyproject.toml").write_text(dedent("""\
        [tool.pytest.ini_options]
        pythonpath = ['.']

        [tool.metaeval.mutate]
        targets = ["prices.py", "stock.py"]
        """), encoding="utf-8")
    first = run(root)
    timing = first["timing"]
    assert isinstance(timing, dict)
    assert (timing["traced_tests"], timing["reused_tests"]) == (2, 0)
    # A new line in stock.py: its test is traced again, the other reused; the result
    # cache keeps prices' mutants, so only stock's run.
    (root / "stock.py").write_text("def stock():\n    x = 1\n    return x\n", encoding="utf-8")
    second = run(root)
    timing = second["timing"]
    assert isinstance(timing, dict)
    assert (timing["traced_tests"], timing["reused_tests"]) == (1, 1)
    fresh = run(root, "--no-cache")
    assert statuses(second) == statuses(fresh)
    timing = fresh["timing"]
    assert isinstance(timing, dict)
    assert (timing["traced_tests"], timing["reused_tests"]) == (2, 0)


def statuses(output: dict[str, object]) -> dict[str, str]:
    mutants = output["mutants"]
    assert isinstance(mutants, list)
    return {m["id"]: m["status"] for m in mutants}


def test_saving_again_takes_unchanged_files_shapes_from_the_map_there(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = saved(root)
    document = json.loads(path.read_text())
    # Mark both stored shapes: an unchanged file's is carried over as it is (not
    # parsed again), a changed file's is parsed from its new text.
    for name in ("prices.py", "stock.py"):
        document["shapes"][name]["skeleton"] = "from the map"
    path.write_text(json.dumps(document))
    (root / "stock.py").write_text("def stock():\n    return 2\n", encoding="utf-8")
    saved(root)
    shapes = json.loads(path.read_text())["shapes"]
    assert shapes["prices.py"]["skeleton"] == "from the map"
    assert shapes["stock.py"]["skeleton"] != "from the map"
    # No map there, or not one: every file is parsed.
    path.write_text("[1, 2]")
    saved(root)
    assert json.loads(path.read_text())["shapes"]["prices.py"]["skeleton"] != "from the map"


def test_a_map_naming_a_special_file_counts_it_as_changed_and_never_reads_it(
        tmp_path: Path) -> None:
    # The map comes from another job or a branch: its digests name files to hash.
    root = project(tmp_path)
    path = saved(root)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["digests"]["/dev/zero"] = "0" * 64
    document["digests"]["stock.py"] = document["digests"].pop(next(
        name for name in document["digests"] if name.endswith("stock.py")))
    path.write_text(json.dumps(document), encoding="utf-8")
    reuse, warning = load_reuse(path, root, ("prices", "stock"), ("-q",))
    assert "digests: '/dev/zero'" in warning and "a character device" in warning
    assert "counted as changed" in warning
    assert reuse is not None and reuse.tests == {TESTS[0]: 0.5, TESTS[1]: 0.25}


def test_a_map_whose_source_became_a_fifo_retraces_its_tests(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = saved(root)
    (root / "prices.py").unlink()
    os.mkfifo(root / "prices.py")  # read_text would wait for a writer forever
    reuse, warning = load_reuse(path, root, ("prices", "stock"), ("-q",))
    assert "'prices.py'" in warning and "a fifo" in warning
    assert reuse is not None and reuse.tests == {TESTS[1]: 0.25}
@pytest.mark.parametrize(("where", "value", "field"), [
    # Each was read as it was: NaN and 1e308 seconds made every mutant's limit
    # unreachable ("no tests ran", exit 3), -1e9 made survivors detected Timeouts.
    ("tests", float("nan"), "tests.tests/test_prices.py::test_prices"),
    ("tests", 1e308, "tests.tests/test_prices.py::test_prices"),
    ("tests", -1e9, "tests.tests/test_prices.py::test_prices"),
    ("tests", "0.5", "tests.tests/test_prices.py::test_prices"),
    ("others", 1e308, "others.tests/test_prices.py::test_prices"),
    ("line", -5, "ran[0].line"),
    pytest.param("line", 10**400, "ran[0].line", id="line-400-digits"),
    ("index", 7, "ran[0].lines[0][1][0]"),
])
def test_a_number_out_of_range_is_a_cold_cache_with_one_warning_naming_it(
        tmp_path: Path, where: str, value: object, field: str) -> None:
    root = project(tmp_path)
    path = saved(root)
    document = json.loads(path.read_text())
    if where in ("tests", "others"):
        document.setdefault(where, {})[TESTS[0]] = value
    elif where == "line":
        document["ran"][0]["line"] = value
    else:
        document["ran"][0]["lines"][0][1][0] = value
    # allow_nan: the file holds NaN as Python's json writes it, as the old reader took it.
    path.write_text(json.dumps(document, allow_nan=True))
    reuse, warning = load_reuse(path, root, ("prices", "stock"), ("-q",))
    assert reuse is None
    assert warning.startswith(f"warning: {path}: ") and warning.count("warning") == 1
    assert "tracing every test" in warning
    if where != "tests" or value == value:  # NaN is refused by the JSON reader itself
        assert f"{field}:" in warning


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                   check=True, capture_output=True)


def test_a_map_git_tracks_is_never_read_and_an_ignored_one_is(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = saved(root)
    _git(root, "init", "-q")
    # In the repository but not tracked (as .metaeval/ is, git-ignored): read.
    reuse, warning = load_reuse(path, root, ("prices", "stock"), ("-q",))
    assert reuse is not None and warning == ""
    # Committed with the branch: whoever wrote the branch wrote the map.
    _git(root, "add", "-f", str(path))
    reuse, warning = load_reuse(path, root, ("prices", "stock"), ("-q",))
    assert reuse is None and warning.startswith(f"warning: {path}: tracked by git")
    # A --coverage file the command line names is the user's choice, tracked or not.
    reuse, warning = load_reuse(path, root, ("prices", "stock"), ("-q",), cache=False)
    assert reuse is not None and warning == ""
