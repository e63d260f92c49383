"""What the scanner leaves out as noise, and what it must keep.

Docstrings of every kind (and any other string statement) make no mutant from
any operator. Each table pairs the cases that must be left out with near twins
that must still be mutated.
"""

from __future__ import annotations

from textwrap import dedent

import pytest

from metaeval.mutation.operators import select_operators
from metaeval.mutation.targets import mutants_in_source


def mutated(source: str, *operators: str) -> list[str]:
    """The original text of every mutant of ``source``, in site order."""
    found = mutants_in_source(dedent(source), path="m.py", module="m",
                              operators=select_operators(list(operators)))
    return [m.original for m in found]


# --- docstrings: no mutant from any operator -------------------------------------------

# The inspect_ai shape that made a survivor: an enum member and its docstring.
ENUM_MEMBER = '''\
    class AnswerPattern(str, Enum):
        """Regular expressions for extracting answers from output."""

        LETTER = ANSWER_PATTERN_LETTER
        """Extracts a single letter (used with multiple choice)."""

        LINE = ANSWER_PATTERN_LINE
        """Extracts the rest of the line.

        Note that when using a LINE pattern your prompt should say so.
        """
'''


@pytest.mark.parametrize(("source", "others"), [
    ('"""Module."""\n', []),
    ('class C:\n    """Class."""\n', []),
    ('def f():\n    """Function."""\n    return g()\n', []),
    ('async def f():\n    """Coroutine."""\n    await g()\n', ["await g()"]),
    ('X = 1\n"""Attribute docstring after an assignment."""\n', ["1", "1"]),
    ('X: int = 1\n"""Attribute docstring after an annotated assignment."""\n', ["1", "1"]),
    ('class C:\n    limit: int = 3\n    """In a class body, after X: int = 1."""\n',
     ["3", "3"]),
    (ENUM_MEMBER, []),
    # Any other string statement: no effect at run time either.
    ('def f():\n    g()\n    "a note in the middle"\n    h()\n', ["g()", "h()"]),
    ('x = g(); "after a semicolon"\n', []),
    ('"""Implicitly """ "concatenated"\n', []),
    ("b'bytes statement'\n", []),
])
def test_a_string_statement_makes_no_mutant_from_any_operator(
        source: str, others: list[str]) -> None:
    # Every operator is asked; only the code around the string is mutated
    # (drop_call on a call statement, shift_constant up and down on a number).
    assert mutated(source) == others


@pytest.mark.parametrize(("source", "kept"), [
    # must still say yes: a string that is a value, not a statement
    ('X = 1\nY = "kept"\n', ['"kept"']),
    ('class C:\n    """Doc."""\n    role = "admin"\n    """Its doc."""\n', ['"admin"']),
    ('def f():\n    """Doc."""\n    return "allow"\n', ['"allow"']),
    ('def f():\n    return g("deny")\n', ['"deny"']),
])
def test_strings_that_are_values_are_still_mutated(source: str, kept: list[str]) -> None:
    assert mutated(source, "empty_string_literal") == kept


def test_the_enum_members_keep_their_other_mutants() -> None:
    source = ENUM_MEMBER + "    WORD = pattern(3)\n"
    assert mutated(source) == ["3", "3"]  # shift_constant, up and down; no docstring


def test_an_f_string_statement_is_not_a_docstring() -> None:
    # Formatting calls code (``__format__``), so it is not a no-op: its parts stay.
    assert mutated('def f(x):\n    f"{x > 1}"\n', "flip_comparison") == ["x > 1"]
