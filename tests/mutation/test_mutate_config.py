"""``[tool.metaeval.mutate]``: targets and operators read from pyproject.toml, and
the flags that stand in for them (``--operators``, ``--show``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.commands import mutate_run as session
from metaeval.config import load_config
from metaeval.errors import InputError
from metaeval.mutation.find.operators import configured_operators
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.mutation.run.runner import MutationRun
from tests.builders import config_project


def test_targets_and_operators_are_read(tmp_path: Path) -> None:
    root = config_project(tmp_path, '[tool.metaeval.mutate]\n'
                             'targets = ["src/guards", "pkg.gate:Gate.allows"]\n'
                             'operators = ["drop_guard_clause", "return_constant"]\n')
    config = load_config(root)
    assert config.mutate_targets == ("src/guards", "pkg.gate:Gate.allows")
    assert config.mutate_operators == ("drop_guard_clause", "return_constant")


def test_no_section_means_no_targets_and_every_operator(tmp_path: Path) -> None:
    config = load_config(config_project(tmp_path, "[tool.metaeval]\nmeta_sets = ['m']\n"))
    assert (config.mutate_targets, config.mutate_operators) == ((), ())


@pytest.mark.parametrize(("section", "message"), [
    ('[tool.metaeval]\nmutate = 3\n', r"tool.metaeval.mutate: got 3; expected a table"),
    ('[tool.metaeval.mutate]\ntargets = "src"\n',
     r"tool.metaeval.mutate.targets: got 'src'; expected a list"),
    ('[tool.metaeval.mutate]\ntargets = ["src", 1]\n',
     r"tool.metaeval.mutate.targets: got \['src', 1\]"),
    ('[tool.metaeval.mutate]\noperators = ["negate_conditon"]\n',
     r"tool.metaeval.mutate.operators: got 'negate_conditon'; expected one of return_constant"),
])
def test_bad_values_name_the_file_key_and_value(tmp_path: Path, section: str,
                                                message: str) -> None:
    root = config_project(tmp_path, section)
    with pytest.raises(InputError, match=message) as caught:
        # Operator names are the operator registry's to check, from the section read.
        configured_operators(load_config(root).mutate)
    assert str(root / "pyproject.toml") in str(caught.value)


# --- --operators: the key's names from the command line ----------------------------------

GATE = "def allowed(role, n):\n    if role == 'admin':\n        return n < 3\n    return False\n"


def gate_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = config_project(tmp_path, '[tool.metaeval.mutate]\ntargets = ["gate.py"]\n'
                             'operators = ["empty_string_literal"]\n')
    (root / "gate.py").write_text(GATE, encoding="utf-8")
    (root / "mutants").mkdir()
    monkeypatch.chdir(root)

    def killed(mutants: list[Mutant], *args: object, **kwargs: object) -> MutationRun:
        warm = kwargs.get("warm")
        if warm is not None:
            warm.stop()  # type: ignore[attr-defined]
        return MutationRun(tuple(MutantResult(m, Status.KILLED) for m in mutants), 0.1, 1.0)

    monkeypatch.setattr(session, "run_mutants", killed)
    return root


def operators_run(*flags: str) -> Result:
    return CliRunner().invoke(main, ["mutate", "--format", "json", "--isolation",
                                     "subprocess", "--no-cache", *flags])


def test_the_operators_flag_replaces_the_configured_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate_project(tmp_path, monkeypatch)
    configured = operators_run()
    assert configured.exit_code == 0, configured.output
    assert {m["operator"] for m in json.loads(configured.stdout)["mutants"]} == {
        "empty_string_literal"}
    chosen = operators_run("--operators", "flip_comparison, swap_bool_literal")
    assert chosen.exit_code == 0, chosen.output
    assert sorted(m["operator"] for m in json.loads(chosen.stdout)["mutants"]) == [
        "flip_comparison", "flip_comparison", "swap_bool_literal"]


@pytest.mark.parametrize(("value", "message"), [
    ("flip_comparisn", "--operators: got 'flip_comparisn'; expected one of return_constant"),
    ("flip_comparison,swap_bool", "got 'swap_bool'; expected one of"),
    ("flip_comparison,swap_bool", "did you mean 'swap_bool_literal' or 'swap_boolean_operator'?"),
    (" , ", "--operators: got ' , '; expected operator names separated by commas"),
])
def test_a_bad_operators_flag_names_the_value_and_the_closest_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, message: str) -> None:
    gate_project(tmp_path, monkeypatch)
    out = operators_run("--operators", value)
    assert out.exit_code == 2
    assert message in out.output
    assert "Traceback" not in out.output


def test_the_config_key_says_did_you_mean_too(tmp_path: Path) -> None:
    root = config_project(tmp_path, '[tool.metaeval.mutate]\noperators = ["drop_gaurd_clause"]\n')
    with pytest.raises(InputError, match="did you mean 'drop_guard_clause'"):
        configured_operators(load_config(root).mutate)


@pytest.mark.parametrize("value", ["-1", "five", "1.5", ""])
def test_a_bad_show_count_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    value: str) -> None:
    gate_project(tmp_path, monkeypatch)
    out = CliRunner().invoke(main, ["mutate", "--show", value])
    assert out.exit_code == 2
    assert "expected a count of 0 or more, or 'all'" in out.output
