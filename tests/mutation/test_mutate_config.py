"""``[tool.metaeval.mutate]``: targets and operators read from pyproject.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from metaeval.config import load_config
from metaeval.errors import InputError
from metaeval.mutation.find.operators import configured_operators


def project(tmp_path: Path, section: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'p'\n\n{section}")
    return tmp_path


def test_targets_and_operators_are_read(tmp_path: Path) -> None:
    root = project(tmp_path, '[tool.metaeval.mutate]\n'
                             'targets = ["src/guards", "pkg.gate:Gate.allows"]\n'
                             'operators = ["drop_guard_clause", "return_constant"]\n')
    config = load_config(root)
    assert config.mutate_targets == ("src/guards", "pkg.gate:Gate.allows")
    assert config.mutate_operators == ("drop_guard_clause", "return_constant")


def test_no_section_means_no_targets_and_every_operator(tmp_path: Path) -> None:
    config = load_config(project(tmp_path, "[tool.metaeval]\nmeta_sets = ['m']\n"))
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
    root = project(tmp_path, section)
    with pytest.raises(InputError, match=message) as caught:
        # Operator names are the operator registry's to check, from the section read.
        configured_operators(load_config(root).mutate)
    assert str(root / "pyproject.toml") in str(caught.value)
