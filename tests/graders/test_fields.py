"""Every built-in grader's parameter check names the field at fault, so a user's
error says which key of the check spec to fix. Written to kill the
``empty_string_literal`` mutants that blanked the field names (``want_str(tool,
"tool")`` -> ``want_str(tool, "")``): the error then read ``: got 3; ...``."""

from __future__ import annotations

from typing import cast

import pytest

from metaeval.contract import CheckSpec, JsonObject
from metaeval.errors import CheckSpecError
from metaeval.graders import build_grader

BAD = 3  # neither a string, a list nor an object: every parameter check refuses it

CASES = [
    ("no_tool_called", {"tool": BAD}, "tool"),
    ("tool_called", {"tool": BAD}, "tool"),
    ("tool_called", {"tool": "refund", "args": BAD}, "args"),
    ("tool_order", {"before": BAD, "after": "refund"}, "before"),
    ("tool_order", {"before": "get_order", "after": BAD}, "after"),
    ("max_steps", {"value": 0}, "value"),
    ("state_includes", {"path": BAD, "match": {}}, "path"),
    ("state_includes", {"path": "refunds", "match": BAD}, "match"),
    ("state_includes", {"path": "refunds", "match": {}, "count": "one"}, "count"),
    ("state_unchanged", {"except": BAD}, "except"),
    ("answer_contains", {"text": BAD}, "text"),
    ("answer_contains", {"pattern": BAD}, "pattern"),
    ("answer_states", {"facts": BAD}, "facts"),
    ("judge", {"judge": "steady", "criterion": BAD}, "criterion"),
]


@pytest.mark.parametrize(("grader", "params", "field"), CASES)
def test_a_bad_parameter_is_named_in_the_error(grader: str, params: dict[str, object],
                                               field: str) -> None:
    with pytest.raises(CheckSpecError) as caught:
        build_grader(CheckSpec(grader, cast(JsonObject, params)))
    assert caught.value.field == field
    assert str(caught.value).startswith(f"{field}: got ")


@pytest.mark.parametrize(("grader", "params", "field"), CASES)
def test_the_same_spec_with_a_good_value_builds(grader: str, params: dict[str, object],
                                                field: str) -> None:
    # The refusal above is about the one bad value, not the rest of the spec.
    good: dict[str, object] = {"tool": "refund", "args": {}, "before": "get_order",
                               "after": "refund", "value": 1, "path": "refunds", "match": {},
                               "count": 1, "except": ["log"], "text": "refund",
                               "pattern": "A-[0-9]+", "facts": ["amount"],
                               "criterion": "polite"}
    fixed = {**params, field: good[field]}
    assert build_grader(CheckSpec(grader, cast(JsonObject, fixed))).name == grader


def test_two_ways_to_match_are_both_named() -> None:
    with pytest.raises(CheckSpecError) as caught:
        build_grader(CheckSpec("answer_contains", {"text": "a", "numbers": [1]}))
    assert caught.value.message.startswith("got ['text', 'numbers']; expected exactly one")
