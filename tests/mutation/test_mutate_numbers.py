"""Every number `metaeval mutate` reads is finite and in range, or a clear error.

``--timeout-factor nan`` used to make a limit no mutant ever reached (a looping
mutant ran for ever), ``--timeout-constant inf`` one the warm runner could not
wait for (every mutant a RuntimeError). The same values in
``[tool.metaeval.mutate]`` (TOML spells them ``nan`` and ``inf``) did the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.errors import ExitCode, InputError
from metaeval.mutation.run.settings import MutateSettings, load_mutate_settings


def write_settings(tmp_path: Path, body: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.metaeval.mutate]\n{body}\n",
                                             encoding="utf-8")
    return tmp_path


FACTOR = "expected a number from 1 to 1000"
CONSTANT = "expected a number of seconds from 0 to 86400"
JOBS = "expected an integer from 0 to 1024 (0: one per core)"


@pytest.mark.parametrize(("body", "expected"), [
    ("timeout_factor = nan", f"timeout_factor: got nan; {FACTOR}"),
    ("timeout_factor = inf", f"timeout_factor: got inf; {FACTOR}"),
    ("timeout_factor = -inf", f"timeout_factor: got -inf; {FACTOR}"),
    ("timeout_factor = 0.5", f"timeout_factor: got 0.5; {FACTOR}"),
    ("timeout_factor = 1e9", f"timeout_factor: got 1000000000.0; {FACTOR}"),
    ("timeout_factor = true", f"timeout_factor: got True; {FACTOR}"),
    ("timeout_constant = nan", f"timeout_constant: got nan; {CONSTANT}"),
    ("timeout_constant = inf", f"timeout_constant: got inf; {CONSTANT}"),
    ("timeout_constant = -1", f"timeout_constant: got -1; {CONSTANT}"),
    ("timeout_constant = 1e300", f"timeout_constant: got 1e+300; {CONSTANT}"),
    ("jobs = -1", f"jobs: got -1; {JOBS}"),
    ("jobs = 100000", f"jobs: got 100000; {JOBS}"),
    ("jobs = 2.5", f"jobs: got 2.5; {JOBS}"),
    # An int too large for a float raised OverflowError (found by tests/fuzz).
    ("jobs = " + "1" * 400, f"jobs: got {'1' * 400}; {JOBS}"),
    ("timeout_factor = " + "9" * 400, f"timeout_factor: got {'9' * 400}; {FACTOR}"),
])
def test_a_bad_number_in_the_config_names_the_file_key_and_value(
        tmp_path: Path, body: str, expected: str) -> None:
    root = write_settings(tmp_path, body)
    with pytest.raises(InputError) as caught:
        load_mutate_settings(root)
    assert str(caught.value) == f"{root / 'pyproject.toml'}: tool.metaeval.mutate.{expected}"


def test_the_ends_of_each_range_are_accepted(tmp_path: Path) -> None:
    low = write_settings(tmp_path, "timeout_factor = 1\ntimeout_constant = 0\njobs = 0")
    assert load_mutate_settings(low) == MutateSettings(timeout_factor=1.0,
                                                       timeout_constant=0.0, jobs=0)
    high = write_settings(tmp_path, "timeout_factor = 1000\ntimeout_constant = 86400\n"
                                    "jobs = 1024")
    assert load_mutate_settings(high) == MutateSettings(timeout_factor=1000.0,
                                                        timeout_constant=86400.0, jobs=1024)


@pytest.mark.parametrize(("flag", "value", "expected"), [
    ("--timeout-factor", "nan", FACTOR),
    ("--timeout-factor", "inf", FACTOR),
    ("--timeout-factor", "0.5", FACTOR),
    ("--timeout-factor", "three", FACTOR),
    ("--timeout-constant", "inf", CONSTANT),
    ("--timeout-constant", "nan", CONSTANT),
    ("--timeout-constant", "-1", CONSTANT),
    ("--jobs", "-1", "0<=x<=1024"),
    ("--jobs", "5000", "0<=x<=1024"),
])
def test_a_bad_number_in_a_flag_is_a_usage_error_naming_the_flag(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str, value: str,
        expected: str) -> None:
    # An empty project: before the check, a bad value ran on to "no mutant found" (3).
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["mutate", flag, value])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert f"Invalid value for '{flag}'" in result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.output


def test_good_flags_pass_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["mutate", "--timeout-factor", "1", "--timeout-constant",
                                       "0", "--jobs", "0"])
    assert result.exit_code == ExitCode.VOID, result.output  # parsed, then nothing to mutate
    assert "no mutant found" in result.stderr
