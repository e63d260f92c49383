"""Every command ends in order when stopped: Ctrl-C is 130 (not 1, the findings
code), SIGTERM and SIGHUP 128 + their number; one line, no traceback."""

from __future__ import annotations

import signal

import pytest
from click.testing import CliRunner

from metaeval.cli import app as cli
from metaeval.cli import findings_commands as cli_findings
from metaeval.cli import main


def stopped(error: BaseException) -> object:
    def stop(*args: object, **kwargs: object) -> object:
        raise error

    return stop


@pytest.mark.parametrize("command", [["validate"], ["findings", "list"], ["gate", "x.json"]])
def test_ctrl_c_ends_any_command_with_130(monkeypatch: pytest.MonkeyPatch,
                                          command: list[str]) -> None:
    # The findings group reads its config in its own module (cli_findings).
    for module in (cli, cli_findings):
        monkeypatch.setattr(module, "load_config", stopped(KeyboardInterrupt()))
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 130, result.output
    assert result.stderr.strip() == "interrupted"
    assert result.stdout == ""


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_end_a_command_with_128_plus_their_number(
        monkeypatch: pytest.MonkeyPatch, signum: signal.Signals, code: int) -> None:
    def deliver(*args: object, **kwargs: object) -> object:
        signal.raise_signal(signum)  # handled in this (main) thread, as a real one is
        raise AssertionError("the signal did not stop the command")

    for module in (cli, cli_findings):
        monkeypatch.setattr(module, "load_config", deliver)
    before = signal.getsignal(signum)  # not SIG_DFL where a runner set its own
    result = CliRunner().invoke(main, ["validate"])
    assert result.exit_code == code, result.output
    assert result.stderr.strip() == f"terminated ({signum.name})"
    # The handlers are the caller's again once the command ends.
    assert signal.getsignal(signum) == before


def test_a_command_that_is_not_stopped_keeps_its_own_exit_code(
        monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    result = CliRunner().invoke(main, ["validate", "/nonexistent/meta.jsonl"])
    assert result.exit_code == 2, result.output
    assert "interrupted" not in result.output
