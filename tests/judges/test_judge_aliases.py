"""``[tool.metaeval.judges]``: a name may stand for another name, but a chain that
comes back to itself is named as a cycle, never followed until RecursionError."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.config import load_config
from metaeval.errors import InputError
from metaeval.judges.spec import build_judge

ITEMS = Path(__file__).resolve().parents[2] / "meta_sets" / "judge" / "position.ndjson"


@pytest.fixture
def judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path / "pyproject.toml"


@pytest.mark.parametrize(("table", "cycle"), [
    ('prod = "prod"\n', "tool.metaeval.judges.prod: got 'prod', a cycle of names "
     "(prod -> prod)"),
    ('prod = "staging"\nstaging = "prod"\n', "tool.metaeval.judges.staging: got 'prod', a "
     "cycle of names (prod -> staging -> prod)"),
    ('prod = "a"\na = "b"\nb = "a"\n', "tool.metaeval.judges.b: got 'a', a cycle of names "
     "(a -> b -> a)"),
])
def test_a_cycle_of_judge_names_is_named(judges: Path, table: str, cycle: str) -> None:
    judges.write_text(f"[tool.metaeval.judges]\n{table}")
    result = CliRunner().invoke(main, ["judge-audit", "--judge", "prod", "--items", str(ITEMS),
                                       "--no-cache"])
    assert result.exit_code == 2, result.output
    assert result.output == (f"error: {judges}: {cycle}; expected a chain of names that ends "
                             "in a judge table or a built-in judge\n")


def test_a_chain_of_names_that_ends_in_a_judge_is_followed(judges: Path) -> None:
    judges.write_text('[tool.metaeval.judges]\nprod = "staging"\nstaging = "steady"\n')
    assert build_judge("prod", judges=load_config().judges).identity.name == "steady"


def test_judges_that_is_not_a_table_is_bad_input(judges: Path) -> None:
    judges.write_text('[tool.metaeval]\njudges = ["steady"]\n')
    with pytest.raises(InputError, match=r"tool\.metaeval\.judges: got \['steady'\]; expected "
                                         "a table"):
        build_judge("house", judges=load_config().judges)


def test_an_unknown_key_of_a_judge_table_says_which_it_may_be(judges: Path) -> None:
    judges.write_text('[tool.metaeval.judges.house]\ntype = "http"\nbase_ur = "http://x"\n'
                      'model = "m"\n')
    with pytest.raises(InputError) as caught:
        build_judge("house", judges=load_config().judges)
    message = str(caught.value)
    assert message.startswith("tool.metaeval.judges.house.base_ur: unknown key for a http judge")
    assert message.endswith("; did you mean 'base_url'?")
