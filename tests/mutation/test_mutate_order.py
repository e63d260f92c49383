"""End to end: a killed mutant stops at its killer, which runs before the rest.

A child stops at its first failing test, so the order of the tests it runs is
what a killed mutant pays for. Six slow tests that cannot kill come first in
collection order; the one that can comes last, as slow. A mutant every test may
see (a function that also ran at import, a module's top level) must not run
the six first when the tests that run its code, or the one that killed it last
time, are known.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

METAEVAL = str(Path(sys.executable).parent / "metaeval")
SLEEP = 0.3
SLOW = 6

REG = dedent("""\
    LIMITS = {}


    def limit(name, value):
        LIMITS[name] = value
        return value > 3


    limit("a", 5)
    """)

DEFAULTS = "DEFAULT = 5\n"

SLOW_TESTS = dedent(f"""\
    import time

    import pytest


    @pytest.mark.parametrize("n", range({SLOW}))
    def test_slow(n):
        time.sleep({SLEEP})
    """)

KILLER = dedent(f"""\
    import time

    import defaults
    from reg import limit


    def test_limit():
        time.sleep({SLEEP})
        assert limit("b", 3) is False


    def test_default():
        time.sleep({SLEEP})
        assert defaults.DEFAULT == 5
    """)


def project(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n',
                                         encoding="utf-8")
    for name, text in (("reg.py", REG), ("defaults.py", DEFAULTS),
                       ("test_aa_slow.py", SLOW_TESTS), ("test_zz_killer.py", KILLER)):
        (root / name).write_text(text, encoding="utf-8")
    return root


def mutate(root: Path, *flags: str) -> dict[str, object]:
    done = subprocess.run([METAEVAL, "mutate", "--format", "json", "--jobs", "1", *flags],
                          cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    output: dict[str, object] = json.loads(done.stdout)
    return output


def in_tests(output: dict[str, object]) -> float:
    timing = output["timing"]
    assert isinstance(timing, dict)
    return float(timing["in_tests_seconds"])


def killed_by(output: dict[str, object]) -> dict[str, tuple[str, list[str]]]:
    mutants = output["mutants"]
    assert isinstance(mutants, list)
    return {m["id"]: (m["status"], m["killed_by"]) for m in mutants}


def test_a_function_that_ran_at_import_runs_its_own_tests_first(tmp_path: Path) -> None:
    # ``limit`` ran at import, so its mutant may be seen by every test (349a7fc);
    # only test_limit runs ``value > 3`` and kills it.
    root = project(tmp_path / "p")
    output = mutate(root, "reg.py", "--operators", "flip_comparison", "--no-cache")
    assert killed_by(output) == {"reg.py::limit::flip_comparison::0": (
        "Killed", ["test_zz_killer.py::test_limit"])}
    # Its killer alone: the six slow tests before it would take 1.8 s.
    assert in_tests(output) < (SLOW - 2) * SLEEP


# A whole mutate run (seconds of wall time): in CI's slow step, not the README's run.
@pytest.mark.slow
def test_the_test_that_killed_a_mutant_last_time_runs_first(tmp_path: Path) -> None:
    # A module's top level: every test may see it, and none is known to run it.
    root = project(tmp_path / "p")
    cache = str(tmp_path / "cache.json")
    flags = ("defaults.py", "--operators", "shift_constant", "--cache", cache)
    first = mutate(root, *flags)
    expected = {f"defaults.py::<module>::shift_constant::{i}": (
        "Killed", ["test_zz_killer.py::test_default"]) for i in (0, 1)}
    assert killed_by(first) == expected
    # Nothing known yet: each of the two ran the six slow tests before its killer.
    assert in_tests(first) >= 2 * SLOW * SLEEP
    # A test file changed: the cached results no longer hold, but who killed them does.
    with (root / "test_aa_slow.py").open("a", encoding="utf-8") as f:
        f.write("# changed\n")
    again = mutate(root, *flags)
    assert killed_by(again) == expected
    timing = again["timing"]
    assert isinstance(timing, dict) and timing["cached"] == 0  # both ran again
    assert in_tests(again) < SLOW * SLEEP
