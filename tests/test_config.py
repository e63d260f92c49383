"""``[tool.metaeval]``: an unknown key is an error with a "did you mean", and a
pyproject.toml that cannot be read as config is one clear line, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.config import MUTATE_KEYS, Bars, load_config
from metaeval.errors import InputError
from metaeval.importing import AllowedModules
from metaeval.mutation.run.settings import load_mutate_settings
from tests.builders import config_project

REPO = Path(__file__).resolve().parent.parent



@pytest.mark.parametrize(("text", "message"), [
    ('[tool.metaeval]\nfindigns = "f.json"\n',
     "tool.metaeval.findigns: unknown key; expected one of allowed_modules, findings, "
     "gate, judge_audit, judge_prices, judges, meta_eval, meta_sets, mutate; did you mean "
     "'findings'?"),
    ('[tool.metaeval]\nallowed_module = ["x"]\n', "tool.metaeval.allowed_module: unknown key; "
     "expected one of allowed_modules, findings, gate, judge_audit, judge_prices, judges, "
     "meta_eval, meta_sets, mutate; did you mean 'allowed_modules'?"),
    ('[tool.metaeval]\nwhatever = 1\n', "tool.metaeval.whatever: unknown key; expected one of "
     "allowed_modules, findings, gate, judge_audit, judge_prices, judges, meta_eval, "
     "meta_sets, mutate"),
    ('[tool.metaeval.mutate]\ntarget = ["src"]\n',
     "tool.metaeval.mutate.target: unknown key; expected one of jobs, message_strings, "
     "mutants, operators, pytest_args, report, targets, timeout_constant, timeout_factor; "
     "did you mean "
     "'targets'?"),
    ('[tool.metaeval.mutate]\ntimeout = 30\n',
     "tool.metaeval.mutate.timeout: unknown key; expected one of jobs, message_strings, "
     "mutants, operators, pytest_args, report, targets, timeout_constant, timeout_factor; "
     "did you mean "
     "'timeout_factor' or 'timeout_constant'?"),
    ('[tool.metaeval.meta_eval]\nresample = 10\n',
     "tool.metaeval.meta_eval.resample: unknown key; expected one of checks, cluster, "
     "labels, map, min_kappa, min_tnr, min_tpr, resamples, seed, suite, suite_files, untested; "
     "did you mean 'resamples'?"),
    ('[tool.metaeval.meta_eval.checks.refund_issued]\nmin_tnp = 0.9\n',
     "tool.metaeval.meta_eval.checks.refund_issued.min_tnp: unknown key; expected one of "
     "min_kappa, min_tnr, min_tpr; did you mean 'min_tpr' or 'min_tnr'?"),
    ('[tool.metaeval.gate]\n"meta-eval:evaluator.kappa" = { minimum = 0.8 }\n',
     "tool.metaeval.gate.'meta-eval:evaluator.kappa'.minimum: unknown key; expected min or "
     "max; did you mean 'min'?"),
])
def test_an_unknown_key_is_an_error_with_the_closest_known_ones(
        tmp_path: Path, text: str, message: str) -> None:
    root = config_project(tmp_path, text)
    with pytest.raises(InputError) as caught:
        load_config(root)
    assert str(caught.value) == f"{root / 'pyproject.toml'}: {message}"


def test_a_huge_unknown_key_is_not_echoed_whole(tmp_path: Path) -> None:
    root = config_project(tmp_path, f'[tool.metaeval]\n{"k" * 100_000} = 1\n')
    with pytest.raises(InputError) as caught:
        load_config(root)
    assert "unknown key" in str(caught.value) and len(str(caught.value)) < 500


def test_the_runner_rejects_the_same_mutate_keys_as_the_config(tmp_path: Path) -> None:
    # Both readers of [tool.metaeval.mutate] hold it to one key set: neither may
    # accept a key the other would ignore.
    root = config_project(tmp_path, '[tool.metaeval.mutate]\ntimeout = 30\n')
    with pytest.raises(InputError, match="did you mean 'timeout_factor' or 'timeout_constant'"):
        load_mutate_settings(root)
    every_key = config_project(tmp_path, "[tool.metaeval.mutate]\n" + "".join(
        f"{key} = {value}\n" for key, value in zip(MUTATE_KEYS, (
            '["src"]', '["negate_condition"]', '"mutants"', '["-q"]', "2.0", "1.0", "1",
            '"r.json"', "true"), strict=True)))
    assert load_config(every_key).mutate_targets == ("src",)
    assert load_mutate_settings(every_key).report == "r.json"
    assert load_mutate_settings(every_key).message_strings is True


def test_the_keys_another_command_reads_are_known(tmp_path: Path) -> None:
    root = config_project(tmp_path, '[tool.metaeval]\nallowed_modules = ["mypkg.graders"]\n\n'
                             '[tool.metaeval.judge_audit]\n\n[tool.metaeval.judges]\n')
    assert load_config(root).allowed_modules == AllowedModules(("mypkg.graders",))


@pytest.mark.parametrize("value", ['"mypkg"', '["..evil"]', '["a..b"]', '[""]', '[1]',
                                   '["mypkg:x"]'])
def test_allowed_modules_must_be_a_list_of_module_names(tmp_path: Path, value: str) -> None:
    with pytest.raises(InputError, match=r"tool\.metaeval\.allowed_modules: got .*; expected "
                                         r"a list of package or module names"):
        load_config(config_project(tmp_path, f"[tool.metaeval]\nallowed_modules = {value}\n"))


def test_untested_is_warn_or_fail(tmp_path: Path) -> None:
    assert load_config(config_project(tmp_path, "")).meta_eval.untested == "warn"
    strict = config_project(tmp_path, '[tool.metaeval.meta_eval]\nuntested = "fail"\n')
    assert load_config(strict).meta_eval.untested == "fail"
    with pytest.raises(InputError, match=r"tool\.metaeval\.meta_eval\.untested: got 'error'; "
                                         r"expected one of 'warn', 'fail'"):
        load_config(config_project(tmp_path, '[tool.metaeval.meta_eval]\nuntested = "error"\n'))


def test_the_repository_config_is_read_clean() -> None:
    assert load_config(REPO).meta_eval.check_bars


# --- a pyproject.toml that is not config: one clear line, exit 2 ------------------------


@pytest.mark.parametrize(("content", "message"), [
    (b'[tool.metaeval]\nfindings = "\xff\xfe"\n', ":2: not UTF-8 (byte 28); expected a "
     "UTF-8 TOML file"),
    (b"[tool.metaeval\n", "not valid TOML: "),
    # Found by tests/fuzz: a ValueError and a RecursionError out of tomllib.
    (b"[tool.metaeval]\nfindings = " + b"1" * 5000 + b"\n", "not valid TOML: Exceeds the limit"),
    (b"[tool.metaeval]\nmeta_sets = " + b"[" * 1000 + b"]" * 1000 + b"\n",
     "not valid TOML: arrays or tables nested too deep"),
    (b"tool = [1]\n", "tool: got [1]; expected a table"),
    (b'[tool]\nmetaeval = "x"\n', "tool.metaeval: got 'x'; expected a table"),
    (b"[tool.metaeval]\njudges = 3\n", "tool.metaeval.judges: got 3; expected a table"),
    (b"[tool.metaeval]\nmutate = [1]\n", "tool.metaeval.mutate: got [1]; expected a table"),
])
@pytest.mark.parametrize("command", [["validate"], ["judge-audit", "--judge", "house"],
                                     ["mutate"], ["gate", "r.json"], ["findings", "list"]])
def test_a_pyproject_that_is_not_config_is_one_line_and_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes, message: str,
        command: list[str]) -> None:
    (tmp_path / "pyproject.toml").write_bytes(content)
    (tmp_path / "r.json").write_text(json.dumps({"counts": {}, "score": 1, "mutants": []}))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    separator = "" if message.startswith(":") else ": "
    assert f"error: {tmp_path / 'pyproject.toml'}{separator}{message}" in result.output
    assert "Traceback" not in result.output


def test_a_bar_for_a_check_no_meta_set_has_is_named_with_the_closest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    meta_sets = REPO / "meta_sets"
    config = (f"[tool.metaeval]\nmeta_sets = [{str(meta_sets)!r}]\n\n"
              "[tool.metaeval.meta_eval.checks.{}]\nmin_tpr = 0.9\n")
    config_project(tmp_path, config.format("refund_isued"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["meta-eval", "--resamples", "10"])
    assert result.exit_code == 2, result.output
    assert (f"error: {tmp_path / 'pyproject.toml'}: tool.metaeval.meta_eval.checks."
            f"refund_isued: no check of that name in {meta_sets}; did you mean "
            "'refund_issued'?") in result.output
    config_project(tmp_path, config.format("refund_issued"))
    result = CliRunner().invoke(main, ["meta-eval", "--resamples", "10"])
    assert result.exit_code == 0, result.output
    # One file of the configured meta-sets need not hold every check they name.
    config_project(tmp_path, config.format("refund_isued"))
    one = meta_sets / "support_agent.jsonl"
    result = CliRunner().invoke(main, ["meta-eval", str(one), "--resamples", "10"])
    assert result.exit_code != 2, result.output


@pytest.mark.parametrize(("gate", "refused"), [
    ('"meta-eval:refund_issued.tnr" = { min = 0.95 }', "min_tnr = 0.95"),
    ('"meta-eval:refund_issued.tpr" = 0.9', "min_tpr = 0.9"),
    ('"meta-eval:refund_issued.kappa" = { max = 0.99 }', "min_kappa = N"),
    # The evaluator has no bar in [tool.metaeval.meta_eval]: the gate is its place.
    ('"meta-eval:evaluator.kappa" = 0.8', None),
    # Another field of a check is no meta-eval bar either.
    ('"meta-eval:refund_issued.precision" = 0.8', None),
    ('"mutate:counts.Survived" = { max = 0 }', None),
])
def test_a_check_bar_lives_in_the_meta_eval_section_alone(
        tmp_path: Path, gate: str, refused: str | None) -> None:
    root = config_project(tmp_path, f"[tool.metaeval.gate]\n{gate}\n")
    if refused is None:
        assert load_config(root).gate
        return
    with pytest.raises(InputError) as caught:
        load_config(root)
    assert (f"a check's bar belongs in [tool.metaeval.meta_eval.checks.refund_issued] "
            f"({refused})") in str(caught.value)


def test_with_flags_a_flag_overrides_the_check_bars_of_its_metric_only(
        tmp_path: Path) -> None:
    root = config_project(tmp_path, "[tool.metaeval.meta_eval]\nmin_tpr = 0.8\nmin_tnr = 0.7\n"
                             "[tool.metaeval.meta_eval.checks.exact]\nmin_tpr = 0.9\n"
                             "min_tnr = 0.95\n")
    section = load_config(root).meta_eval
    bars, checks = section.with_flags(Bars(min_tpr=0.5))
    assert bars == Bars(0.5, 0.7, None)
    assert checks == {"exact": Bars(None, 0.95, None)}
    assert section.bar_of("exact", "min_tnr") == (
        0.95, "[tool.metaeval.meta_eval.checks.exact] min_tnr")
    assert section.bar_of("other", "min_tnr") == (0.7, "[tool.metaeval.meta_eval] min_tnr")
    assert section.bar_of("other", "min_kappa") == (None, "")
