from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from metaeval.contract import CheckSpec, JsonObject, Kind, Outcome
from metaeval.errors import CheckSpecError
from metaeval.graders import BUILTINS, build_grader
from metaeval.importing import AllowedModules
from tests.builders import assistant, run, user


def spec(grader: str, name: str = "", **params: object) -> CheckSpec:
    return CheckSpec(grader, dict(params), name)  # type: ignore[arg-type]


@pytest.mark.parametrize(("check", "field", "words"), [
    (spec("refund_issued"), "grader", "'refund_issued' is not a built-in grader"),
    (spec("no_tool_called"), "tool", "missing"),
    (spec("no_tool_called", tool=""), "tool", "got ''; expected a non-empty string"),
    (spec("no_tool_called", tool="x", tol="y"), "tol", "unknown parameter"),
    (spec("max_steps", value="8"), "value", "got '8'; expected an integer >= 1"),
    (spec("max_steps", value=True), "value", "got True"),
    (spec("state_includes", path="refunds", match=[1]), "match", "expected a JSON object"),
    (spec("state_unchanged", **{"except": "refunds"}), "except", "expected a list"),
    (spec("answer_contains"), "text", "expected exactly one of text, pattern or numbers"),
    (spec("answer_contains", text="a", pattern="b"), "text", "exactly one"),
    (spec("answer_contains", pattern="(unclosed"), "pattern", "not a regular expression"),
    (spec("answer_contains", numbers=["forty"]), "numbers", "expected a non-empty list"),
    (spec("nosuchmodule_xyz:factory"), "grader", "'nosuchmodule_xyz:factory' is not in an "
     "allowed module; add its package to [tool.metaeval] allowed_modules"),
    (spec("answer_states", facts=[]), "facts", "expected at least one key of task.criteria"),
    (spec("answer_states", facts="order_id"), "facts", "expected a list of non-empty strings"),
])
def test_bad_specs_name_the_field_and_the_value(check: CheckSpec, field: str, words: str) -> None:
    with pytest.raises(CheckSpecError) as caught:
        build_grader(check)
    assert caught.value.field == field
    assert words in caught.value.message


def test_every_builtin_has_a_stable_version_that_follows_its_params() -> None:
    a = build_grader(spec("no_tool_called", tool="cancel_order"))
    b = build_grader(spec("no_tool_called", tool="cancel_order", name="no_cancel"))
    c = build_grader(spec("no_tool_called", tool="refund"))
    assert a.version == b.version != c.version
    assert a.kind is Kind.GATE
    assert set(BUILTINS) >= {"no_tool_called", "tool_called", "tool_order", "max_steps",
                             "state_includes", "state_unchanged", "answer_contains",
                             "grounded_numbers"}


def test_cost_ranks_put_trace_rules_before_state_before_answers() -> None:
    ranks = [build_grader(s).cost_rank for s in (
        spec("max_steps", value=3), spec("state_unchanged"), spec("grounded_numbers"))]
    assert ranks == sorted(ranks) and len(set(ranks)) == 3


USER_GRADERS = '''
from dataclasses import dataclass
from metaeval.contract import Finding, Kind, Outcome

@dataclass(frozen=True)
class Polite:
    word: str
    name: str = "polite"
    version: str = "polite/1"
    kind: Kind = Kind.GATE
    cost_rank: int = 40

    def grade(self, x):
        ok = self.word in (x.trajectory.answer() or "")
        return Finding(self.name, self.version, self.kind,
                       Outcome.PASS if ok else Outcome.FAIL)

def polite(word="please"):
    return Polite(word)

def broken():
    return 42

not_callable = 7
'''


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "acme_graders.py").write_text(textwrap.dedent(USER_GRADERS))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "acme_graders"


ALLOW_ACME = AllowedModules(("acme_graders",))


def test_a_user_grader_by_import_path(user_module: str) -> None:
    grader = build_grader(spec(f"{user_module}:polite", word="thanks"), ALLOW_ACME)
    assert grader.name == "polite"
    assert grader.grade(run(user("hi"), assistant("thanks!"))).outcome is Outcome.PASS
    assert grader.grade(run(user("hi"), assistant("no."))).outcome is Outcome.FAIL
    renamed = build_grader(spec(f"{user_module}:polite", name="says_thanks", word="thanks"),
                           ALLOW_ACME)
    finding = renamed.grade(run(assistant("thanks")))
    assert (renamed.name, finding.grader) == ("says_thanks", "says_thanks")


@pytest.mark.parametrize(("attr", "params", "words"), [
    ("broken", {}, "returned 42; expected a Grader"),
    ("not_callable", {}, "is not callable"),
    ("missing", {}, "has no attribute 'missing'"),
    ("polite", {"tone": "warm"}, "unknown parameter"),
])
def test_bad_user_graders(user_module: str, attr: str, params: JsonObject, words: str) -> None:
    with pytest.raises(CheckSpecError) as caught:
        build_grader(CheckSpec(f"{user_module}:{attr}", params), ALLOW_ACME)
    assert words in caught.value.message
