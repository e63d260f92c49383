"""A test during which the baseline's tracer is switched off (CPython drops a
trace function that raises, as on a RecursionError) runs for every mutant; the
other tests keep their selection instead of every mutant running the whole suite.
Pinned to the trace function in Python (``METAEVAL_RECORDER=settrace``): coverage.py's
C tracer on 3.11 and ``sys.monitoring`` on 3.12 survive the recursion."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mutation.conftest import mutate_json, small_project


def test_a_test_the_tracer_lost_runs_for_every_mutant_and_the_rest_stay_selected(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("METAEVAL_RECORDER", "settrace")
    small_project(tmp_path, {"lib.py": """\
        def deep(n):
            return deep(n + 1)


        def guard(amount):
            if amount > 100:
                return "refuse"
            return "ok"


        def weak(x):
            return x + 1


        def unused(x):
            return x * 2
        """, "test_lib.py": """\
        import time

        from lib import deep, guard, weak


        def test_guard_after_deep_recursion():
            try:
                deep(0)
            except RecursionError:
                pass
            # The tracer died in the recursion: it never sees guard run here.
            assert guard(101) == "refuse"
            assert guard(100) == "ok"


        def test_weak():
            assert weak(1) > 0


        def test_unrelated():
            time.sleep(0.2)
            with open("runs.log", "a") as log:
                log.write("ran\\n")
        """}, ["flip_comparison", "shift_constant"])
    output, done = mutate_json(tmp_path, timeout=120)
    by_function: dict[str, set[tuple[str, tuple[str, ...]]]] = {}
    for m in output["mutants"]:
        by_function.setdefault(m["id"].split("::")[1], set()).add(
            (m["status"], tuple(m["killed_by"])))
    # guard runs only where the tracer was gone: that test still kills its mutants.
    assert by_function["guard"] == {
        ("Killed", ("test_lib.py::test_guard_after_deep_recursion",))}, done.stdout
    assert {s for s, _ in by_function["weak"]} == {"Survived"}
    # unused ran the untraced test too, and survived it: no traced test reaches it.
    assert {s for s, _ in by_function["unused"]} == {"NoCoverage"}
    # weak's survivors ran their own test and the untraced one, never the whole suite.
    assert (tmp_path / "runs.log").read_text(encoding="utf-8") == "ran\n"


def test_a_test_that_switches_the_tracer_off_is_untraced_and_the_next_is_traced(
        tmp_path: Path) -> None:
    # On the default recorder (coverage.py's C tracer on 3.11; sys.monitoring on
    # 3.12 is not a trace function and goes on recording): a test that stops the
    # trace function, as a coverage tool started inside a test does; the recorder
    # starts again for the tests after it.
    small_project(tmp_path, {"lib.py": """\
        def guard(amount):
            if amount > 100:
                return "refuse"
            return "ok"


        def weak(x):
            return x + 1
        """, "test_lib.py": """\
        import sys

        from lib import guard, weak


        def test_guard_untraced():
            sys.settrace(None)
            assert guard(101) == "refuse"
            assert guard(100) == "ok"


        def test_weak():
            assert weak(1) > 0
        """}, ["flip_comparison", "shift_constant"])
    output, done = mutate_json(tmp_path, timeout=120)
    statuses = {m["id"].split("::")[1]: m["status"] for m in output["mutants"]}
    # guard ran only where the tracer was off: that test runs for every mutant.
    assert statuses["guard"] == "Killed", done.stdout + done.stderr
    # weak's test came after and was traced: weak's mutant ran it (not NoCoverage).
    assert statuses["weak"] == "Survived", done.stdout + done.stderr
