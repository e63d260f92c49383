"""Every judge-mutant operator runs its own before/after examples, and says no
where it does not apply."""

from __future__ import annotations

import pytest

from metaeval.audit.judge_mutants import OPERATORS, Family, select
from metaeval.audit.judge_mutants.decision_ops import lower_pass_mark, max_of_samples, one_sample
from metaeval.audit.judge_mutants.template_ops import (
    drop_criterion,
    drop_level,
    drop_placeholder,
    fix_pair_order,
    weaken_must,
)
from metaeval.errors import InputError
from metaeval.judges.base import Mode, Scale

CASES = [(name, example) for name, unit in OPERATORS.items() for example in unit.examples]


@pytest.mark.parametrize(("name", "example"), CASES, ids=[f"{n}-{i}" for i, (n, _) in
                                                          enumerate(CASES)])
def test_each_operator_turns_its_example_into_the_after(name: str, example: object) -> None:
    unit = OPERATORS[name]
    assert unit.show(example.given) == (example.before, example.after)  # type: ignore[attr-defined]


def test_every_operator_has_an_example_that_changes_something_and_a_description() -> None:
    for unit in OPERATORS.values():
        assert unit.description and unit.examples, unit.name
        assert any(e.before != e.after for e in unit.examples), unit.name
    assert {u.family for u in OPERATORS.values()} == set(Family)


def test_operators_make_nothing_where_they_do_not_apply() -> None:
    plain = "Grade {response}. Answer with a number."
    assert drop_criterion(plain, Mode.POINTWISE) == ()
    assert drop_level(plain, Mode.POINTWISE) == ()
    assert drop_placeholder(plain, Mode.POINTWISE) == ()  # the response is never hidden
    assert weaken_must(plain, Mode.POINTWISE) == ()
    assert fix_pair_order(plain, Mode.POINTWISE) == ()
    assert one_sample(Scale(), 1) == () and max_of_samples(Scale(), 1) == ()
    assert lower_pass_mark(Scale(1, 5, 1), 1) == ()


def test_a_level_line_is_not_taken_for_a_criterion() -> None:
    template = "- correct\n5: all correct\n{response}"
    assert [m.line for m in drop_criterion(template, Mode.POINTWISE)] == [1]
    assert [m.line for m in drop_level(template, Mode.POINTWISE)] == [2]


def test_each_criterion_is_its_own_mutant() -> None:
    template = "- a\n- b\n- c\n{response}"
    dropped = [m.prompting.template for m in drop_criterion(template, Mode.POINTWISE)]
    assert dropped == ["- b\n- c\n{response}", "- a\n- c\n{response}", "- a\n- b\n{response}"]


def test_an_unknown_operator_name_is_refused_with_the_names_there_are() -> None:
    with pytest.raises(InputError, match=r"--operators: got 'drop_critrion'.*drop_criterion"):
        select(("drop_critrion",))
    assert select(()) == frozenset(OPERATORS)
