"""A run that reuses most of the last baseline traces its few stale tests beside
the mutants (``WarmSession._overlap``): the same statuses as a run that traces first,
and a baseline that fails there still voids the run."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from metaeval.errors import ExitCode
from tests.mutation.conftest import METAEVAL, mutate_json, small_project

TAX = """\
    def tax(cents):
        if cents < 0:
            return 0
        return cents // 10
    """
OTHERS = "".join(f"""

    def test_other_{n}():
        assert label({n}) == "item {n}"
    """ for n in range(6))


def shop(root: Path) -> Path:
    # Eight tests; only test_tax runs tax: changing tax leaves it stale, and the
    # skipped test is traced in every run (it is never reused): 2 of 8.
    return small_project(root, {"prices.py": TAX + """

    def label(n):
        return f"item {n}"
    """, "test_prices.py": """\
    import pytest

    from prices import label, tax


    @pytest.mark.skip(reason="not yet")
    def test_skipped():
        assert tax(1) == 5


    def test_tax():
        assert tax(100) == 10
        assert tax(99) == 9
    """ + OTHERS}, ["flip_comparison", "shift_constant", "return_constant"])


def statuses(output: dict[str, Any]) -> dict[str, str]:
    return {m["id"]: m["status"] for m in output["mutants"]}


@pytest.mark.slow  # two whole runs compared (CI: pytest -m slow)
def test_stale_tests_traced_beside_the_mutants_give_the_statuses_of_a_traced_first_run(
        tmp_path: Path) -> None:
    root = shop(tmp_path)
    first, _ = mutate_json(root, cache=True)
    assert first["timing"]["traced_beside"] is False
    changed = TAX.replace("cents // 10", "(cents + 0) // 10")
    (root / "prices.py").write_text((root / "prices.py").read_text().replace(
        "cents // 10", "(cents + 0) // 10"), encoding="utf-8")
    assert changed != TAX
    output, done = mutate_json(root, cache=True)
    timing = output["timing"]
    assert (timing["traced_tests"], timing["reused_tests"], timing["traced_beside"]) == \
        (2, 6, True), done.stderr
    fresh, _ = mutate_json(root)
    assert fresh["timing"]["traced_beside"] is False
    assert statuses(output) == statuses(fresh)
    # The guard's branch no test takes: NoCoverage both ways, though the run beside
    # the trace ran it against the stale test (which never reaches that line).
    assert statuses(output)["prices.py::tax::shift_constant::2"] == "NoCoverage"


def test_a_stale_test_that_now_fails_voids_the_run_beside_the_mutants_too(
        tmp_path: Path) -> None:
    root = shop(tmp_path)
    mutate_json(root, cache=True)
    (root / "prices.py").write_text((root / "prices.py").read_text().replace(
        "cents // 10", "cents // 11"), encoding="utf-8")
    done = subprocess.run([METAEVAL, "mutate"], cwd=root, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == ExitCode.VOID, done.stdout + done.stderr
    assert "fails without any mutant" in done.stderr
    assert "test_prices.py::test_tax" in done.stderr
    assert "Survived" not in done.stdout  # no outcome held for the trace got out
