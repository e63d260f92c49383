"""Grader parameters that must be refused, each named in the error, and the versions
the accepted ones give. Written to kill mutants `metaeval mutate` found surviving in
the parameter checks."""

from __future__ import annotations

from typing import cast

import pytest

from metaeval.contract import CheckSpec, JsonObject
from metaeval.errors import CheckSpecError
from metaeval.graders import build_grader


def refused(grader: str, **params: object) -> CheckSpecError:
    with pytest.raises(CheckSpecError) as caught:
        build_grader(CheckSpec(grader, cast(JsonObject, params)))
    return caught.value


@pytest.mark.parametrize("numbers", [
    [],  # nothing to look for would pass every answer
    "12",  # a string is not a list of numbers
    5,  # nor is a single number
    [1, [2]],  # a nested list is not a number
    [1, "x"],  # one entry with no figure
    [1, True],  # true is not the number 1
])
def test_answer_contains_refuses_bad_numbers(numbers: object) -> None:
    error = refused("answer_contains", numbers=numbers)
    assert error.field == "numbers"
    assert error.message == f"got {numbers!r}; expected a non-empty list of numbers"


def test_answer_contains_accepts_a_list_of_figures() -> None:
    grader = build_grader(CheckSpec("answer_contains", {"numbers": [49.99, "1,182"]}))
    assert grader.name == "answer_contains"


def test_answer_contains_wants_exactly_one_way_to_match() -> None:
    assert refused("answer_contains").message == (
        "got none; expected exactly one of text, pattern or numbers")
    assert refused("answer_contains", text="a", pattern="b").message == (
        "got ['text', 'pattern']; expected exactly one of text, pattern or numbers")


@pytest.mark.parametrize("paths", [["orders", ""], ["orders", 1], "orders"])
def test_state_unchanged_refuses_a_bad_except_list(paths: object) -> None:
    error = refused("state_unchanged", **{"except": paths})
    assert error.field == "except"
    assert error.message == f"got {paths!r}; expected a list of non-empty strings"


def test_state_includes_refuses_a_negative_count() -> None:
    error = refused("state_includes", path="refunds", match={}, count=-1)
    assert (error.field, error.message) == ("count", "got -1; expected an integer >= 0")


@pytest.mark.parametrize(("pattern", "words"), [
    ("(", "not a regular expression: missing )"),
    ("(" * 1000 + "a" + ")" * 1000, "not a regular expression: nested too deep"),
    ("a{99999999999}", "not a regular expression: repeat count too big"),
    # compiling 8 MB took 27 s and 2.1 GB: bounded before the engine sees it
    ("a" * 10_001, "10001 characters; expected a regular expression of at most 10000"),
    ("(?:x|y)" * 2_000_000, "14000000 characters; expected a regular expression of at most"),
])
def test_a_pattern_the_engine_refuses_is_a_load_time_error(pattern: str, words: str) -> None:
    error = refused("answer_contains", pattern=pattern)
    assert error.field == "pattern" and words in error.message


def test_a_pattern_of_the_bound_is_still_read() -> None:
    pattern = "(?:HAT0[0-9]{2})?" * 588 + "HAT0"  # 10,000 characters
    assert len(pattern) == 10_000
    assert build_grader(CheckSpec("answer_contains", {"pattern": pattern})).name == (
        "answer_contains")


# A check's version hashes its parameters, so earlier findings compare only with the
# same check. A parameter left at its default is not hashed: a check written before
# `scope` or `failed_calls` existed keeps the version its findings were stored under,
# and writing the default out changes nothing; the other value is another check.
# Prohibitions count failed calls by default since issue 45: `no_tool_called` left
# at its default is the check that counted them before (`count`), and the old
# default, now written `ignore`, keeps the old version; `tool_order`'s default (a
# failed `after` counts, a failed `before` does not) is a check of its own.
@pytest.mark.parametrize(("grader", "params", "default", "written", "other"), [
    ("answer_contains", {"text": "HAT030"}, "answer_contains/1+c8aa173c", ("scope", "last"),
     ("scope", "any", "answer_contains/1+a7ecea6a")),
    ("grounded_numbers", {}, "grounded_numbers/1+44136fa3", ("scope", "last"),
     ("scope", "any", "grounded_numbers/1+64282ca4")),
    ("answer_states", {"facts": ["flight"]}, "answer_states/1+ff1798a9", ("scope", "last"),
     ("scope", "any", "answer_states/1+9c3865bd")),
    ("no_tool_called", {"tool": "cancel"}, "no_tool_called/1+2ac94498",
     ("failed_calls", "count"), ("failed_calls", "ignore", "no_tool_called/1+ba031050")),
    ("tool_called", {"tool": "cancel"}, "tool_called/1+7446480b", ("failed_calls", "ignore"),
     ("failed_calls", "count", "tool_called/1+10d34400")),
    ("tool_order", {"before": "get", "after": "cancel"}, "tool_order/1+229ffbb6", None,
     ("failed_calls", "count", "tool_order/1+88a5bb55")),
    ("tool_order", {"before": "get", "after": "cancel"}, "tool_order/1+229ffbb6", None,
     ("failed_calls", "ignore", "tool_order/1+6cd0c3b7")),
])
def test_a_default_left_out_or_written_out_keeps_the_version(
        grader: str, params: JsonObject, default: str, written: tuple[str, str] | None,
        other: tuple[str, str, str]) -> None:
    field, value, version = other
    assert build_grader(CheckSpec(grader, params)).version == default
    if written is not None:
        assert build_grader(CheckSpec(grader, {**params, written[0]: written[1]})).version \
            == default
    assert build_grader(CheckSpec(grader, {**params, field: value})).version == version
