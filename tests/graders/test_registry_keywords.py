"""How spec keys reach a user's grader factory: named parameters, ``**params``, and
Python keywords. Written to kill mutants `metaeval mutate` found surviving."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from metaeval.contract import CheckSpec
from metaeval.errors import CheckSpecError
from metaeval.graders import build_grader
from metaeval.importing import AllowedModules

FACTORIES = '''
from dataclasses import dataclass, field
from metaeval.contract import Finding, Kind, Outcome

@dataclass(frozen=True)
class Recorder:
    seen: dict = field(default_factory=dict)
    name: str = "recorder"
    version: str = "recorder/1"
    kind: Kind = Kind.GATE
    cost_rank: int = 40

    def grade(self, x):
        return Finding(self.name, self.version, self.kind, Outcome.PASS)

def open_ended(tool, **extra):
    return Recorder({"tool": tool, **extra})

def closed():
    return Recorder()

def refuses():
    raise ValueError("no")

NOT_CALLABLE = 7
'''


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "acme_keyword_graders.py").write_text(textwrap.dedent(FACTORIES))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "acme_keyword_graders"


ALLOW = AllowedModules(("acme_keyword_graders",))


def test_extra_keys_go_to_a_factory_taking_params(module: str) -> None:
    grader = build_grader(CheckSpec(f"{module}:open_ended",
                                    {"tool": "refund", "limit": 3, "except": ["log"]}), ALLOW)
    # A key that is a Python keyword arrives with a trailing underscore; others as written.
    assert vars(grader)["seen"] == {"tool": "refund", "limit": 3, "except_": ["log"]}


def test_a_factory_without_parameters_says_it_expects_none(module: str) -> None:
    with pytest.raises(CheckSpecError) as caught:
        build_grader(CheckSpec(f"{module}:closed", {"tool": "refund"}), ALLOW)
    assert caught.value.field == "tool"
    assert caught.value.message.endswith("; expected: none")


def test_a_spec_cannot_pass_name_as_a_parameter() -> None:
    with pytest.raises(CheckSpecError) as caught:
        build_grader(CheckSpec("no_tool_called", {"tool": "refund", "name": "x"}))
    assert caught.value.field == "name"


def test_a_factory_that_is_not_callable_or_raises_is_named(module: str) -> None:
    with pytest.raises(CheckSpecError) as caught:
        build_grader(CheckSpec(f"{module}:NOT_CALLABLE"), ALLOW)
    assert caught.value.message == f"'{module}:NOT_CALLABLE' is not callable; expected a factory"
    with pytest.raises(CheckSpecError) as caught:
        build_grader(CheckSpec(f"{module}:refuses"), ALLOW)
    assert caught.value.message == f"'{module}:refuses' raised ValueError('no')"
