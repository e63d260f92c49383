from __future__ import annotations

import json
from enum import Enum
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from metaeval import __version__
from metaeval.cli.app import main
from metaeval.cli.mutate_command import mutate
from metaeval.mutation.isolation.options import Executor, Isolation

REPO = Path(__file__).resolve().parents[2]


def test_help_lists_the_commands() -> None:
    out = CliRunner().invoke(main, ["--help"])
    assert out.exit_code == 0
    assert "validate" in out.output


def test_version() -> None:
    out = CliRunner().invoke(main, ["--version"])
    assert out.exit_code == 0
    assert out.output.strip() == f"metaeval, version {__version__}"


def test_validate_the_repository_meta_sets() -> None:
    out = CliRunner().invoke(main, ["validate", str(REPO / "meta_sets")])
    assert out.exit_code == 0, out.output
    assert out.output.strip().endswith("; 0 bad lines")


def test_validate_defaults_to_the_configured_meta_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO / "metaeval")  # config is found in the nearest pyproject.toml
    out = CliRunner().invoke(main, ["validate", "--format", "json"])
    assert out.exit_code == 0, out.output
    document = json.loads(out.output)
    assert document["errors"] == []
    assert document["loaded"] >= 10


def test_validate_reports_every_bad_line_and_exits_2(tmp_path: Path) -> None:
    good = (REPO / "meta_sets" / "support_agent.jsonl").read_text().splitlines()[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([good, "{not json", '{"id": "x"}']) + "\n")
    out = CliRunner().invoke(main, ["validate", str(bad)])
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert lines[0].startswith(f"{bad}:2: not valid JSON")
    assert any(line.startswith(f"{bad}:3: ") for line in lines)
    assert lines[-1] == "1 run loaded from 1 file; 2 bad lines"


def test_a_bad_config_is_an_error_not_a_traceback(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\nmeta_sets = 'meta_sets'\n")
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["validate"])
    assert out.exit_code == 2
    assert "tool.metaeval.meta_sets: got 'meta_sets'; expected a list of paths" in out.output


def test_a_bug_of_ours_exits_3_with_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected exception must not exit 1, which CI reads as "report only"."""
    import metaeval.cli.app

    # a user's mistake is exit 2 with no traceback
    bad = CliRunner().invoke(main, ["validate", "no/such/file.jsonl"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output

    def broken(*args: object, **kwargs: object) -> None:
        raise OverflowError("int too large to convert to float")

    monkeypatch.setattr(metaeval.cli.app, "run_validate", broken)
    result = CliRunner().invoke(main, ["validate"])
    assert result.exit_code == 3
    assert "OverflowError: int too large" in result.output
    assert "internal error (OverflowError)" in result.output


@pytest.mark.parametrize(("name", "given", "member"), [
    ("isolation", "subprocess", Isolation.SUBPROCESS),
    ("isolation", "fork", Isolation.FORK),
    ("executor", "ray", Executor.RAY),
    ("executor", "local", Executor.LOCAL),
])
def test_mutate_hands_isolation_and_executor_over_as_their_enums(
        name: str, given: str, member: Enum) -> None:
    (option,) = [p for p in mutate.params if p.name == name]
    assert option.type_cast_value(click.Context(mutate), given) is member


@pytest.mark.parametrize(("name", "given"), [("isolation", "thread"), ("isolation", "FORK"),
                                             ("executor", "dask")])
def test_mutate_refuses_a_value_no_member_has(name: str, given: str) -> None:
    (option,) = [p for p in mutate.params if p.name == name]
    with pytest.raises(click.BadParameter, match=f"{given!r} is not one of"):
        option.type_cast_value(click.Context(mutate), given)


def test_the_executor_default_reaches_the_command_as_the_member() -> None:
    (option,) = [p for p in mutate.params if p.name == "executor"]
    context = click.Context(mutate)
    assert option.type_cast_value(context, option.get_default(context)) is Executor.LOCAL
