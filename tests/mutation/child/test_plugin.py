"""The pytest plugin: inert without its option; with it, one mutant in place, in memory."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from metaeval.mutation.subprocess.protocol import SPEC_ENV, ChildResult, ChildSpec, ChildTask
from metaeval.mutation.wire import ErrorKind

LIB = "def price():\n    return 1\n"
USER = "from lib import price\n\n\ndef shown():\n    return price()\n"
# conftest imports `user` before the plugin's patch goes in: its `price` is a copy.
CONFTEST = "import user  # noqa: F401\n"
TESTS = """\
import lib
import user


def test_lib_price():
    assert lib.price() == 1


def test_user_price():
    assert user.shown() == 1
"""


@pytest.fixture()
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(lib=LIB, user=USER, test_prices=TESTS)
    pytester.makeconftest(CONFTEST)
    pytester.syspathinsert()
    return pytester


def spec_for(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp: Path,
             task: ChildTask, tests: tuple[str, ...] = (), **fields: Any) -> Path:
    result = tmp / "result.json"
    spec = ChildSpec(task=task, mutant_id="m1", result_path=str(result),
                     root=str(pytester.path), parent_pid=os.getpid(), packages=("lib", "user"),
                     tests=tests, **fields)
    spec.write(tmp / "spec.json")
    monkeypatch.setenv(SPEC_ENV, str(tmp / "spec.json"))
    # The child imports lib/user from its cwd, as pytest's rootdir conftest does.
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    return result


def test_without_the_option_the_plugin_changes_nothing(project: pytest.Pytester) -> None:
    result = project.runpytest()
    result.assert_outcomes(passed=2)
    assert project.parseconfig().pluginmanager.get_plugin("metaeval-mutant-session") is None


def test_the_option_without_a_spec_is_a_usage_error(project: pytest.Pytester,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SPEC_ENV, raising=False)
    result = project.runpytest_subprocess("--metaeval-mutant", "m1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*needs ${SPEC_ENV}*"])


def test_a_patch_mutant_replaces_every_binding(project: pytest.Pytester,
                                               monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    mutants = tmp_path / "mutants"
    mutants.mkdir()
    (mutants / "prices.py").write_text(
        "from metaeval.mutation.patches import PatchMutant\n"
        "MUTANTS = [PatchMutant(id='m1', target='lib:price', replacement='lambda: 2',\n"
        "                       breaks='Every price is 2.')]\n", encoding="utf-8")
    out = spec_for(project, monkeypatch, tmp_path, ChildTask.PATCH, target="lib:price",
                   mutants_dir=str(mutants))
    result = project.runpytest_subprocess("--metaeval-mutant", "m1", "-p", "no:cacheprovider")
    # Both fail: lib.price itself, and the `from lib import price` copy in user.
    result.assert_outcomes(failed=2)
    assert ChildResult.read(out).failed == ("test_prices.py::test_lib_price",
                                            "test_prices.py::test_user_price")


def test_a_rewrite_mutant_is_served_by_the_import_hook(project: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    lib = project.path / "lib.py"
    before = lib.read_bytes()
    out = spec_for(project, monkeypatch, tmp_path, ChildTask.REWRITE, module="lib", file=str(lib),
                   source=LIB.replace("return 1", "return 0"))
    result = project.runpytest_subprocess("--metaeval-mutant", "m1", "-x")
    result.assert_outcomes(failed=1)
    assert ChildResult.read(out).failed == ("test_prices.py::test_lib_price",)
    assert lib.read_bytes() == before


def test_a_rewrite_that_does_not_compile_is_reported(project: pytest.Pytester,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    out = spec_for(project, monkeypatch, tmp_path, ChildTask.REWRITE, module="lib",
                   file=str(project.path / "lib.py"), source="def price(:\n")
    result = project.runpytest_subprocess("--metaeval-mutant", "m1")
    assert result.ret == 3
    reported = ChildResult.read(out)
    assert reported.error_kind is ErrorKind.COMPILE
    assert "SyntaxError" in reported.error


def test_the_baseline_records_which_tests_ran_which_function(
        project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    out = spec_for(project, monkeypatch, tmp_path, ChildTask.BASELINE)
    project.runpytest_subprocess("--metaeval-mutant", "m1").assert_outcomes(passed=2)
    ran = {(r.module, r.name): r.tests for r in ChildResult.read(out).ran}
    # Only the packages asked for: the tests' own functions are not recorded.
    assert {module for module, _ in ran} == {"lib", "user"}
    assert ran[("lib", "price")] == ("test_prices.py::test_lib_price",
                                       "test_prices.py::test_user_price")
    assert ran[("user", "shown")] == ("test_prices.py::test_user_price",)


def test_the_forced_fail_check_fails_every_test(project: pytest.Pytester,
                                                monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    out = spec_for(project, monkeypatch, tmp_path, ChildTask.FORCED_FAIL)
    result = project.runpytest_subprocess("--metaeval-mutant", "m1")
    result.assert_outcomes(errors=2)
    assert len(ChildResult.read(out).failed) == 2
    assert sys.modules.get("lib") is None  # nothing leaked into this process


def test_given_tests_run_alone_and_in_the_given_order(project: pytest.Pytester,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    out = spec_for(project, monkeypatch, tmp_path, ChildTask.FORCED_FAIL,
                   tests=("test_prices.py::test_user_price", "test_prices.py::test_lib_price"))
    result = project.runpytest_subprocess("--metaeval-mutant", "m1")
    result.assert_outcomes(errors=2)
    # Collection order is test_lib_price first; the spec's order wins.
    assert ChildResult.read(out).failed == ("test_prices.py::test_user_price",
                                            "test_prices.py::test_lib_price")
    out = spec_for(project, monkeypatch, tmp_path, ChildTask.FORCED_FAIL,
                   tests=("test_prices.py::test_lib_price",))
    result = project.runpytest_subprocess("--metaeval-mutant", "m1")
    result.assert_outcomes(errors=1, deselected=1)
