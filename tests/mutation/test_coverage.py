"""Line-level test selection: which tests ran a mutant's lines, and when no test did."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from textwrap import dedent

import pytest

from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.model import Mutant, MutantKind, Span
from metaeval.mutation.wire import CodeRun

METAEVAL = str(Path(sys.executable).parent / "metaeval")

LIMITS = dedent("""\
    def clamp(quantity, limit=10):
        if quantity > limit:
            return limit
        return quantity
    """)


def mutant(line: int, end_line: int | None = None, start_column: int = 5) -> Mutant:
    return Mutant(id=f"limits.py::clamp::op::{line}", kind=MutantKind.REWRITE, operator="op",
                  path="limits.py", module="limits", qualname="clamp",
                  span=Span(line, start_column, end_line or line, 20), original="",
                  replacement="", mutated_source="")


def traced(tmp_path: Path) -> Coverage:
    """Coverage from a real CallRecorder: test_small never reaches ``return limit``,
    test_large does."""
    (tmp_path / "limits.py").write_text(LIMITS, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("limits", tmp_path / "limits.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    recorder = CallRecorder(("limits",))
    recorder.start()
    try:
        recorder.begin("t.py::test_small")
        module.clamp(3)
        recorder.end()
        recorder.begin("t.py::test_large")
        module.clamp(30)
        recorder.end()
    finally:
        recorder.stop()
    return Coverage.from_runs(tmp_path, recorder.runs())


def test_the_recorder_groups_the_lines_each_test_ran(tmp_path: Path) -> None:
    (run,) = traced(tmp_path).ran.items()
    assert run == (("limits", 1, "clamp"), ("t.py::test_large", "t.py::test_small"))
    coverage = traced(tmp_path)
    assert coverage.lines[("limits", 2)] == {"t.py::test_small", "t.py::test_large"}
    assert coverage.lines[("limits", 3)] == {"t.py::test_large"}
    assert coverage.lines[("limits", 4)] == {"t.py::test_small"}


def test_a_mutant_runs_only_the_tests_that_ran_its_lines(tmp_path: Path) -> None:
    coverage = traced(tmp_path)
    assert coverage.select(mutant(3)).tests == ("t.py::test_large",)
    assert coverage.select(mutant(4)).tests == ("t.py::test_small",)
    # A span over several lines: every test that ran any of them.
    assert coverage.select(mutant(2, 4)).tests == ("t.py::test_large", "t.py::test_small")


def test_a_mutant_on_a_line_no_test_ran_is_unseen_but_reached(tmp_path: Path) -> None:
    (tmp_path / "limits.py").write_text(LIMITS, encoding="utf-8")
    # test_small alone ran clamp: line 3 never ran.
    coverage = Coverage.from_runs(tmp_path, (
        CodeRun("limits", "limits.py", 1, "clamp", ("t.py::test_small",),
                (((2, 4), (0,)),)),))
    selection = coverage.select(mutant(3))
    assert selection.unseen and selection.reached and selection.tests == ()
    # Its neighbour is not unseen: the selector must be able to say no.
    assert not coverage.select(mutant(4)).unseen


def test_threads_selecting_at_once_see_what_one_thread_sees(tmp_path: Path) -> None:
    # The subprocess runner selects from its worker threads. Each once compiled the
    # file for itself, and one thread's code objects, measured against another's,
    # all looked like other code on the mutant's line: every test was selected.
    padding = "".join(f"def pad{i}(x):\n    return x + {i}\n\n" for i in range(3000))
    (tmp_path / "limits.py").write_text(LIMITS + padding, encoding="utf-8")
    runs = (CodeRun("limits", "limits.py", 1, "clamp", ("t.py::test_small",),
                    (((2, 4), (0,)),)),)

    def select(coverage: Coverage, start: threading.Barrier) -> tuple[str, ...] | None:
        start.wait()
        return coverage.select(mutant(3)).tests

    for _ in range(3):
        coverage, start = Coverage.from_runs(tmp_path, runs), threading.Barrier(4)
        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(select, [coverage] * 4, [start] * 4)) == [(), (), (), ()]


def test_a_default_value_on_the_def_line_keeps_the_functions_tests(tmp_path: Path) -> None:
    # ``limit=10`` is evaluated by the module body at import: no line event of
    # clamp's own frame ever names line 1, so line selection must not apply.
    coverage = traced(tmp_path)
    default = dataclasses.replace(mutant(1, start_column=28), span=Span(1, 28, 1, 30))
    assert coverage.select(default).tests == ("t.py::test_large", "t.py::test_small")
    assert not coverage.select(default).unseen


def test_without_line_records_the_functions_tests_are_kept(tmp_path: Path) -> None:
    # A record from a recorder that traced calls only (an older result cache).
    (tmp_path / "limits.py").write_text(LIMITS, encoding="utf-8")
    coverage = Coverage.from_runs(tmp_path, (
        CodeRun("limits", "limits.py", 1, "clamp", ("t.py::test_small",)),))
    assert coverage.select(mutant(3)).tests == ("t.py::test_small",)


def test_a_function_no_test_ran_is_not_reached(tmp_path: Path) -> None:
    (tmp_path / "limits.py").write_text(LIMITS, encoding="utf-8")
    selection = Coverage.from_runs(tmp_path, ()).select(mutant(3))
    assert not selection.reached and not selection.unseen


def test_a_mutant_on_a_line_no_test_runs_is_no_coverage_in_both_isolations(
        tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(dedent("""\
        [tool.pytest.ini_options]
        pythonpath = ['.']

        [tool.metaeval.mutate]
        targets = ["limits.py"]
        operators = ["drop_call", "negate_condition"]
        """), encoding="utf-8")
    (tmp_path / "limits.py").write_text(dedent("""\
        def clamp(quantity, limit=10):
            if quantity > limit:
                print("clamped to", limit)
                return limit
            return quantity
        """), encoding="utf-8")
    (tmp_path / "test_limits.py").write_text(dedent("""\
        from limits import clamp


        def test_small():
            assert clamp(3) == 3


        def test_other():
            assert isinstance(clamp(4), int)
        """), encoding="utf-8")
    statuses = {}
    for isolation in ("fork", "subprocess"):
        done = subprocess.run([METAEVAL, "mutate", "--format", "json", "--no-cache",
                               "--isolation", isolation, "--report", str(tmp_path / "r.json")],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, done.stdout + done.stderr
        mutants = json.loads(done.stdout)["mutants"]
        statuses[isolation] = {m["id"]: (m["line"], m["status"], m["detail"]) for m in mutants}
        # The fork runner decides it without a run; the subprocess runner after one.
        unrun = [m for m in mutants if m["line"] == 3]
        assert unrun and all(m["status"] == "NoCoverage" and "no test runs the mutated lines"
                             in m["detail"] for m in unrun), (
            isolation, [(m["status"], m["detail"], m["covered_by"]) for m in unrun],
            done.stderr)
    assert statuses["fork"] == statuses["subprocess"]
    # The condition on line 2 ran in both tests, and negating it is caught.
    assert {s for line, s, _ in statuses["fork"].values() if line == 2} == {"Killed"}


def test_the_recorder_names_the_module_whose_import_called_a_function(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "rc_lib.py").write_text(
        "def size():\n    return 3\n\n\ndef helper():\n    return size()\n", encoding="utf-8")
    # rc_user calls size() from its top level, through a function of its own and
    # in a class body; rc_lib's own size() call in a test would not count.
    (tmp_path / "rc_user.py").write_text(
        "import rc_lib\n\nSIZE = rc_lib.helper()\n\n\nclass Box:\n    n = rc_lib.size()\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    recorder = CallRecorder(("rc_lib",))
    recorder.start()
    try:
        importlib.import_module("rc_user")
    finally:
        recorder.stop()
        lib = sys.modules.pop("rc_lib")
        sys.modules.pop("rc_user")
    assert recorder.callers[lib.size.__code__] == {"rc_user"}
    assert recorder.callers[lib.helper.__code__] == {"rc_user"}


REGISTRY = dedent("""\
    CHECKS = []


    def check(fn):
        if fn.__name__ in CHECKS:
            raise ValueError(fn.__name__)
        CHECKS.append(fn.__name__)
        return fn


    def unused(fn):
        if fn is None:
            raise ValueError("none")
        CHECKS.append(fn)
    """)


def registry_mutant(line: int, qualname: str) -> Mutant:
    return Mutant(id=f"reg.py::{qualname}::op::{line}", kind=MutantKind.REWRITE,
                  operator="op", path="reg.py", module="reg", qualname=qualname,
                  span=Span(line, 5, line, 17), original="", replacement="",
                  mutated_source="")


def test_a_function_that_ran_at_import_and_in_a_test_is_reached_by_every_test(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ``check`` appended at import only; the one test that calls it is refused
    # before the append. An append dropped empties the registry every test can
    # see: the line is reached, by every test, never unseen.
    (tmp_path / "reg.py").write_text(REGISTRY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    recorder = CallRecorder(("reg",))
    recorder.start()
    try:
        reg = importlib.import_module("reg")

        def first() -> None: ...

        reg.check(first)  # outside any test, as a module's top level would
        for test, call in (("t.py::test_refused", reg.check), ("t.py::test_none", reg.unused)):
            recorder.begin(test)
            with pytest.raises(ValueError):
                call(first if call is reg.check else None)
            recorder.end()
    finally:
        recorder.stop()
        sys.modules.pop("reg")
    runs = {run.name: run for run in recorder.runs()}
    assert runs["check"].at_import and not runs["unused"].at_import
    coverage = Coverage.from_runs(tmp_path, tuple(runs.values()))
    append = coverage.select(registry_mutant(7, "check"))
    assert append.tests is None and append.reached and not append.unseen
    # The test that ran it runs first; the other, which never called it, does not.
    assert append.first == ("t.py::test_refused",)
    # A function that ran only under a test keeps its line selection: the append
    # no test reached is unseen.
    assert coverage.select(registry_mutant(14, "unused")).unseen
    # The flag survives the wire and the coverage cache's reader.
    assert CodeRun.from_json(json.loads(json.dumps(runs["check"].to_json()))) == runs["check"]
