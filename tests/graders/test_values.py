"""Small pure helpers under the graders: numbers in JSON, years, short evidence text,
frozen values and order-free versions. Written to kill mutants `metaeval mutate`
found surviving."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from metaeval.contract import Evidence, Outcome
from metaeval.graders.base import Judgement, Renamed, RuleGrader, passed, rule, short
from metaeval.graders.numbers import Figure, figures, values_in
from metaeval.graders.trajectory_rules import max_steps


def test_values_in_skips_booleans_and_nulls() -> None:
    assert list(values_in({"ok": True, "none": None, "n": 5, "s": "paid 49.99"})) == [
        Decimal("5"), Decimal("49.99")]


@pytest.mark.parametrize(("text", "year"), [
    ("1900", True), ("2100", True), ("2026", True),
    ("1899", False), ("2101", False), ("2500", False), ("20.26", False), ("19000", False),
])
def test_is_year_bounds(text: str, year: bool) -> None:
    (figure,) = figures(text)
    assert figure.is_year is year


def test_short_quotes_strings_and_sorts_keys() -> None:
    assert short("abc") == "'abc'"
    assert short({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'


def test_short_truncates_past_the_limit_only() -> None:
    assert short("x" * 8, limit=10) == "'xxxxxxxx'"  # exactly 10 characters: kept
    assert short("x" * 9, limit=10) == "'xxxxxx..."


def test_a_rule_version_does_not_depend_on_parameter_order() -> None:
    def check(x: object) -> Judgement:
        return passed()

    first = rule("g", check, name="", params={"a": 1, "b": 2}, rank=1)
    second = rule("g", check, name="", params={"b": 2, "a": 1}, rank=1)
    assert first.version == second.version
    assert rule("g", check, name="", params={"a": 1, "b": 3}, rank=1).version != first.version


@pytest.mark.parametrize("value", [
    Judgement(Outcome.PASS, (Evidence("a", "b"),)),
    max_steps(3),
    Renamed(max_steps(3), "budget"),
    Figure(Decimal(1), 0, "1"),
])
def test_grading_values_are_frozen_and_slotted(value: object) -> None:
    assert dataclasses.is_dataclass(value)
    field = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, None)
    assert not hasattr(value, "__dict__")


def test_rule_grader_is_a_dataclass_of_its_check() -> None:
    assert isinstance(max_steps(3), RuleGrader)


def test_short_keeps_exactly_eighty_characters_by_default() -> None:
    assert short("x" * 78) == "'" + "x" * 78 + "'"
    assert short("x" * 79) == "'" + "x" * 76 + "..."


def test_figures_keep_the_places_shown_and_round_sources_to_them() -> None:
    (figure,) = figures("$49.99")
    assert figure.places == 2
    assert figure.shown_by(Decimal("49.994"))
    assert not figure.shown_by(Decimal("49.996"))
