"""The runner's decisions: statuses from what a child did, exit codes, void runs."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from textwrap import dedent
from typing import cast

import pytest

from metaeval.errors import ExitCode
from metaeval.mutation.coverage import Coverage
from metaeval.mutation.fork.items import parts_of
from metaeval.mutation.fork.parent import of_fork
from metaeval.mutation.fork.protocol import ChildTimes, WarmOutcome, read_warm_line, warm_line
from metaeval.mutation.isolation.options import Isolation, RunOptions
from metaeval.mutation.isolation.outcome import classify
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
from metaeval.mutation.run.runner import MutationRun, exit_code, run_mutants
from metaeval.mutation.subprocess.parent import ChildOutcome, Context, of_subprocess, run_mutant
from metaeval.mutation.subprocess.protocol import ChildResult
from metaeval.mutation.wire import CodeRun, ErrorKind
from tests.mutation.conftest import calc_project, mutate_json, small_project

METAEVAL = str(Path(sys.executable).parent / "metaeval")


def rewrite(source: str = "x = 1\n", ignored: str = "") -> Mutant:
    return Mutant(id="m.py::f::op::0", kind=MutantKind.REWRITE, operator="op", path="m.py",
                  module="m", qualname="f", span=Span(1, 1, 1, 2), original="1",
                  replacement="2", mutated_source=source, ignored_reason=ignored)


def context(tmp_path: Path) -> Context:
    options = RunOptions(root=tmp_path, mutants_dir=tmp_path / "mutants")
    return Context(options, tmp_path, 1.0, Coverage.from_runs(tmp_path, ()))


def test_a_rewrite_that_does_not_compile_is_a_compile_error_without_a_child(
        tmp_path: Path) -> None:
    result = run_mutant(rewrite("def f(:\n"), context(tmp_path))
    assert result.status is Status.COMPILE_ERROR
    assert "SyntaxError" in result.detail


def test_fork_isolation_without_a_warm_runner_is_refused_before_any_process(
        tmp_path: Path) -> None:
    # The plan starts the warm runner (early, or once a mutant needs it); a caller that
    # gives none has a bug, which must not pass for a run.
    options = RunOptions(root=tmp_path, mutants_dir=tmp_path / "mutants",
                         isolation=Isolation.FORK)
    with pytest.raises(ValueError, match="none given"):
        run_mutants([rewrite()], options)
    # Settled up front (ignored): nothing to run, so nothing is needed.
    (result,) = run_mutants([rewrite(ignored="legacy")], options).results
    assert result.status is Status.IGNORED


def test_an_ignored_mutant_is_never_run(tmp_path: Path) -> None:
    result = run_mutant(rewrite("def f(:\n", ignored="legacy code"), context(tmp_path))
    assert (result.status, result.detail) == (Status.IGNORED, "legacy code")


M_SOURCE = "LIMIT = 3\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return [i for i in (1, 2)]\n"


def at(line: int, qualname: str = "f") -> Mutant:
    return Mutant(id=f"m.py::{qualname}::op::0", kind=MutantKind.REWRITE, operator="op",
                  path="m.py", module="m", qualname=qualname, span=Span(line, 1, line, 2),
                  original="", replacement="", mutated_source="")


def test_coverage_maps_a_mutant_to_the_function_it_sits_in(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(M_SOURCE, encoding="utf-8")
    coverage = Coverage.from_runs(tmp_path, (CodeRun("m", "/elsewhere/m.py", 4, "f",
                                                     ("t.py::test_f",)),))
    assert coverage.reached(at(5)) and coverage.tests_for(at(5)) == ("t.py::test_f",)
    # g never ran, nor its comprehension: nothing can see a mutant there.
    assert not coverage.reached(at(9, "g")) and coverage.tests_for(at(9, "g")) == ()
    # Module-level code runs on import: always reached, no test to name.
    assert coverage.reached(at(1, "<module>")) and coverage.tests_for(at(1, "<module>")) is None


def test_coverage_of_a_patch_mutant_is_its_target_function(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(M_SOURCE, encoding="utf-8")
    coverage = Coverage.from_runs(tmp_path, (CodeRun("m", "m.py", 8, "g", ()),))
    patch = dataclasses.replace(at(8, "g"), kind=MutantKind.PATCH, target="m:g")
    assert coverage.reached(patch)  # ran, even if only at import time
    assert not coverage.reached(dataclasses.replace(patch, qualname="f",
                                                    span=Span(4, 1, 5, 13)))
    # A target that is not a function (a constant) cannot be told: counted as reached.
    assert coverage.reached(dataclasses.replace(patch, qualname="LIMIT",
                                                span=Span(1, 1, 1, 10)))


def test_jobs_default_to_the_number_of_cores(tmp_path: Path) -> None:
    assert RunOptions(tmp_path, tmp_path).workers == (os.cpu_count() or 1)
    assert RunOptions(tmp_path, tmp_path, jobs=3).workers == 3


CASES = [
    (ChildOutcome(None, 9.0, None, ""), Status.TIMEOUT, ()),
    (ChildOutcome(1, 1.0, ChildResult(failed=("t.py::a", "t.py::b")), ""), Status.KILLED,
     ("t.py::a",)),
    (ChildOutcome(2, 1.0, ChildResult(failed=("t.py",)), ""), Status.KILLED, ("t.py",)),
    (ChildOutcome(0, 1.0, ChildResult(), ""), Status.SURVIVED, ()),
    (ChildOutcome(1, 1.0, ChildResult(), ""), Status.RUNTIME_ERROR, ()),
    (ChildOutcome(4, 1.0, None, "usage"), Status.RUNTIME_ERROR, ()),
    (ChildOutcome(5, 1.0, ChildResult(), ""), Status.RUNTIME_ERROR, ()),
    (ChildOutcome(3, 1.0, ChildResult(ErrorKind.APPLY, "AttributeError"), ""),
     Status.RUNTIME_ERROR, ()),
    (ChildOutcome(3, 1.0, ChildResult(ErrorKind.COMPILE, "SyntaxError"), ""),
     Status.COMPILE_ERROR, ()),
]


@pytest.mark.parametrize(("outcome", "status", "killed_by"), CASES)
def test_classify(outcome: ChildOutcome, status: Status, killed_by: tuple[str, ...]) -> None:
    result = classify(rewrite(), of_subprocess(outcome, ()), 9.0)
    assert (result.status, result.killed_by) == (status, killed_by)


def run_of(*statuses: Status) -> MutationRun:
    return MutationRun(tuple(MutantResult(rewrite(), s) for s in statuses), 1.0, 8.0)


@pytest.mark.parametrize(("statuses", "code"), [
    ((Status.KILLED, Status.TIMEOUT, Status.IGNORED, Status.COMPILE_ERROR), ExitCode.OK),
    ((Status.KILLED, Status.SURVIVED), ExitCode.FINDINGS),
    ((Status.KILLED, Status.NO_COVERAGE), ExitCode.FINDINGS),
    ((Status.KILLED, Status.RUNTIME_ERROR), ExitCode.FINDINGS),
    ((Status.NO_COVERAGE, Status.IGNORED, Status.RUNTIME_ERROR), ExitCode.VOID),
    ((), ExitCode.VOID),
])
def test_exit_code(statuses: tuple[Status, ...], code: ExitCode) -> None:
    assert exit_code(run_of(*statuses)) is code


def mutate(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([METAEVAL, "mutate", "--report", str(root / "r.json")], cwd=root,
                          capture_output=True, text=True, timeout=60)


def test_a_failing_suite_exits_3_naming_the_failing_test(tmp_path: Path) -> None:
    done = mutate(calc_project(tmp_path, """\
        from calc import double


        def test_double():
            assert double(2) == 4


        def test_wrong():
            assert double(2) == 5
        """))
    assert done.returncode == ExitCode.VOID, done.stderr
    assert "fails without any mutant" in done.stderr
    assert "test_calc.py::test_wrong" in done.stderr
    assert "test_calc.py::test_double" not in done.stderr
    # The fork's output holds no traceback: the command it names shows why.
    (why,) = [line for line in done.stderr.splitlines() if line.startswith("to see why: ")]
    shown = subprocess.run(shlex.split(why.removeprefix("to see why: ")), cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 1 and "assert 4 == 5" in shown.stdout, shown.stdout
    assert "1 failed in" in shown.stdout  # the failing test alone


def test_a_suite_whose_tests_lean_on_earlier_ones_passes_its_baseline(tmp_path: Path
                                                                     ) -> None:
    # The fork baseline traces the suite in two parts at once, [test_double,
    # test_first] and [test_second]; test_second fails without test_first before
    # it, so only the whole suite in order may judge it.
    root = calc_project(tmp_path, """\
        from calc import double

        SEEN = []


        def test_double():
            assert double(2) == 4


        def test_first():
            SEEN.append(double(1))


        def test_second():
            assert SEEN == [2]
        """)
    done = subprocess.run([METAEVAL, "mutate", "calc.py", "--jobs", "2", "--isolation",
                           "fork", "--format", "json", "--report", str(root / "r.json")],
                          cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == ExitCode.FINDINGS, done.stdout + done.stderr
    statuses = {m["id"]: m["status"] for m in json.loads(done.stdout)["mutants"]}
    assert statuses["calc.py::double::shift_constant::0"] == "Killed"
    assert statuses["unused-identity"] == "NoCoverage"


def test_the_baseline_is_cut_into_contiguous_parts_that_shrink() -> None:
    items = cast(list[pytest.Item], [f"t{i}" for i in range(7)])  # only their order matters
    # For 2 children: a quarter of what is left each time, rounded up.
    assert parts_of(items, 2) == [items[:2], items[2:4], items[4:5], items[5:6], items[6:]]
    assert parts_of(items, 1) == [items]
    assert parts_of(items[:1], 2) == [items[:1]]
    assert parts_of([], 2) == []
    sizes = [len(part) for part in parts_of(items * 44, 2)]  # 308 tests
    assert sum(sizes) == 308 and sizes[:3] == [77, 58, 44] and sizes[-1] == 1


def test_a_run_where_no_mutant_executed_exits_3(tmp_path: Path) -> None:
    done = mutate(calc_project(tmp_path, """\
        from calc import double


        def test_double():
            assert double(2) == 4
        """))
    assert done.returncode == ExitCode.VOID, done.stderr
    assert "NoCoverage      1" in done.stdout
    assert "no mutant ran (1 found)" in done.stderr


WARM_CASES = [
    (WarmOutcome(0, None), Status.NO_COVERAGE, ()),
    (WarmOutcome(0, ("t.py::a",), timed_out=True, times=ChildTimes(wall=9.0)),
     Status.TIMEOUT, ()),
    (WarmOutcome(0, ("t.py::a", "t.py::b"), failed="t.py::b"), Status.KILLED, ("t.py::b",)),
    (WarmOutcome(0, ("t.py::a",)), Status.SURVIVED, ()),
    (WarmOutcome(0, ("t.py::a",), reported=False, exit_status=9), Status.RUNTIME_ERROR, ()),
    (WarmOutcome(0, ("t.py::a",), error_kind=ErrorKind.APPLY, error="AttributeError"),
     Status.RUNTIME_ERROR, ()),
    (WarmOutcome(0, ("t.py::a",), error_kind=ErrorKind.COMPILE, error="SyntaxError"),
     Status.COMPILE_ERROR, ()),
]


@pytest.mark.parametrize(("outcome", "status", "killed_by"), WARM_CASES)
def test_classify_warm(outcome: WarmOutcome, status: Status, killed_by: tuple[str, ...]
                       ) -> None:
    # Through the wire format, as the runner reads it from the warm process.
    read = read_warm_line(warm_line("mutant", outcome))
    assert read == outcome
    assert isinstance(read, WarmOutcome)
    covered_by = Coverage.from_runs(Path("."), ()).tests_for(rewrite()) or ()
    result = classify(rewrite(), of_fork(read, covered_by), 9.0)
    assert (result.status, result.killed_by) == (status, killed_by)


# A whole mutate run (seconds of wall time): in CI's slow step, not the README's run.
@pytest.mark.slow
def test_fork_executes_a_module_again_for_a_change_outside_a_function(tmp_path: Path
                                                                     ) -> None:
    (tmp_path / "pyproject.toml").write_text(dedent("""\
        [tool.pytest.ini_options]
        pythonpath = ['.']

        [tool.metaeval.mutate]
        targets = ["calc.py"]
        operators = ["shift_constant"]
        """), encoding="utf-8")
    (tmp_path / "calc.py").write_text(dedent("""\
        FACTOR = 2


        class Base:
            scale = 3


        def double(x):
            return x * FACTOR


        def half(x):
            return x / 2
        """), encoding="utf-8")
    # A subclass in another module, and a parameter computed while collecting:
    # both hold what the import made of calc, which swapping code cannot reach.
    (tmp_path / "shapes.py").write_text(dedent("""\
        from calc import Base


        class Square(Base):
            def area(self, side):
                return side * side * self.scale
        """), encoding="utf-8")
    (tmp_path / "test_calc.py").write_text(dedent("""\
        import pytest

        from calc import double, half
        from shapes import Square


        @pytest.mark.parametrize("doubled", [double(1)])
        def test_double_while_collecting(doubled):
            assert doubled == 2


        def test_square():
            assert Square().area(2) == 12


        def test_half():
            assert half(4) == 2
        """), encoding="utf-8")
    # A test module that cannot even be imported with another FACTOR: executing it
    # again fails in the child, as importing it fails in a process of its own, where
    # collecting it is the kill.
    (tmp_path / "test_guard.py").write_text(dedent("""\
        import calc

        assert calc.FACTOR == 2, "collected only with the real factor"


        def test_guard():
            pass
        """), encoding="utf-8")
    outputs = {}
    for isolation in ("fork", "subprocess"):
        done = subprocess.run([METAEVAL, "mutate", "--format", "json", "--no-cache",
                               "--isolation", isolation, "--report", str(tmp_path / "r.json")],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert done.returncode == ExitCode.OK, done.stdout + done.stderr
        outputs[isolation] = json.loads(done.stdout)
    output = outputs["fork"]
    by_line: dict[int, list[str]] = {}
    for m in output["mutants"]:
        by_line.setdefault(m["line"], []).append(m["status"])
    # FACTOR (line 1) and Base.scale (line 5) are bound at import; half's constant
    # (line 13) is inside a function and swapped in.
    assert set(by_line) == {1, 5, 13}
    assert all(s == "Killed" for statuses in by_line.values() for s in statuses)
    assert output["timing"]["reloaded"] == len(by_line[5]) + len(by_line[1])
    assert output["timing"]["deferred"] == 0
    assert {tuple(m["killed_by"]) for m in output["mutants"] if m["line"] == 1} == {
        ("test_guard.py",)}
    assert output["timing"]["ran"] == len(output["mutants"])
    assert [(m["id"], m["status"], m["killed_by"]) for m in output["mutants"]] == [
        (m["id"], m["status"], m["killed_by"]) for m in outputs["subprocess"]["mutants"]]


def test_a_comprehension_on_the_mutants_line_does_not_enclose_it(tmp_path: Path) -> None:
    # The list comprehension is a code object of its own on the same line; the
    # condition after it runs in f, so f's tests are the ones to run, not the
    # (fewer) tests in which the comprehension ran.
    (tmp_path / "m.py").write_text(
        "def f(xs, ok):\n    return [x for x in xs] if ok and xs else []\n", encoding="utf-8")
    coverage = Coverage.from_runs(tmp_path, (
        CodeRun("m", "m.py", 1, "f", ("t.py::a", "t.py::b")),
        CodeRun("m", "m.py", 2, "<listcomp>", ("t.py::a",))))
    condition = dataclasses.replace(at(2), span=Span(2, 31, 2, 40))
    inside = dataclasses.replace(at(2), span=Span(2, 13, 2, 14))
    assert coverage.tests_for(condition) == ("t.py::a", "t.py::b")
    # Python 3.12 inlines a list comprehension into f (PEP 709): no code object of
    # its own, so f's tests, every one that may run it.
    inlined = sys.version_info >= (3, 12)
    assert coverage.tests_for(inside) == (("t.py::a", "t.py::b") if inlined else ("t.py::a",))


@pytest.mark.slow  # waits out real time limits, which a busy machine bends (CI: pytest -m slow)
def test_a_mutant_looping_in_a_quick_test_is_stopped_at_that_tests_own_limit(
        tmp_path: Path) -> None:
    # Both tests reach countdown; the slow one (4 s) sets the mutant's limit to
    # about 4 x 3 + 1 s. The quick one runs first and loops under n -= 0: its own
    # limit (a few ms x 3 + 1 s) stops the mutant, and the detail names it. STEP = 0
    # is put in place by executing loop.py again: its tests' limits add the
    # collection time (a fraction of a second here), and still stop it there.
    small_project(tmp_path, {"loop.py": """\
        STEP = 1


        def countdown(n):
            while n > 0:
                n -= 1
            return n


        def countdown_by_step(n):
            while n > 0:
                n -= STEP
            return n
        """, "test_loop.py": """\
        import time

        from loop import countdown, countdown_by_step


        def test_countdown():
            assert countdown(3) == 0
            assert countdown_by_step(3) == 0


        def test_slow_countdown():
            time.sleep(4)
            assert countdown(1) == countdown_by_step(1) == 0
        """}, ["shift_constant"])
    output, done = mutate_json(tmp_path, "--timeout-constant", "1")
    looping = [m for m in output["mutants"] if m["status"] == "Timeout"]
    assert {m["line"] for m in looping} == {1, 6}, done.stdout + done.stderr
    assert output["timing"]["reloaded"] >= 1  # STEP's mutants
    assert output["timeout_seconds"] > 12.0  # the mutant's own limit, from both tests
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    took = {m["id"]: m["duration"] for f in report["files"].values() for m in f["mutants"]}
    for mutant in looping:
        assert mutant["detail"].startswith("test_loop.py::test_countdown ran past its own "), \
            mutant
        # Milliseconds: not the mutant's 13 s (its test's CPU limit, 1 or 2 s, takes
        # longer in wall time on a loaded machine).
        assert took[mutant["id"]] < 8000, mutant


@pytest.mark.slow  # waits out real time limits, which a busy machine bends (CI: pytest -m slow)
def test_a_test_past_its_own_limit_without_using_the_cpu_is_not_a_timeout(
        tmp_path: Path) -> None:
    # The mirror of the looping case: a mutant that makes a test wait 2.4 s, past
    # its own limit (0.4 s x 3 + 1 s) but not the mutant's (about 8 s), using no
    # CPU, as a test starved of CPU on a loaded machine does. It survives.
    small_project(tmp_path, {"lib.py": """\
        import time


        def pause(n):
            time.sleep(0.2 * n)
            return n
        """, "test_lib.py": """\
        import time

        from lib import pause


        def test_pause():
            assert pause(2) == 2


        def test_slow():
            time.sleep(2)
            assert pause(0) == 0
        """}, ["shift_constant"])
    output, done = mutate_json(tmp_path, "--timeout-constant", "1")
    statuses = {m["id"]: m["status"] for m in output["mutants"]}
    assert statuses["lib.py::pause::shift_constant::0"] == "Survived", done.stdout  # 0.2 -> 1.2


@pytest.mark.slow  # waits out real time limits, which a busy machine bends (CI: pytest -m slow)
def test_a_looping_mutant_is_stopped_at_its_own_tests_limit(tmp_path: Path) -> None:
    # The slow test never reaches countdown: the loop's limit comes from the fast
    # test that does (about the constant), not from the whole suite's 1.5 s x 3.
    small_project(tmp_path, {"loop.py": """\
        def countdown(n):
            while n > 0:
                n -= 1
            return n
        """, "test_loop.py": """\
        import time

        from loop import countdown


        def test_countdown():
            assert countdown(3) == 0


        def test_slow_and_unrelated():
            time.sleep(1.5)
        """}, ["shift_constant"])
    output, done = mutate_json(tmp_path, "--timeout-constant", "1")
    looping = [m for m in output["mutants"] if m["status"] == "Timeout"]
    assert looping, done.stdout + done.stderr  # n -= 0 never ends
    assert output["timeout_seconds"] < 2.0
    assert all("limit" in m["detail"] for m in looping)
