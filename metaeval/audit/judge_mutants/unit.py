"""What a judge-mutant operator is: a named pure transform of one part of a judge
(its prompt template, its reply rule, or how its samples become a decision), with
before/after examples that one test runs for every operator.

A judge mutant is a broken copy of a judge, made the way a code mutant is made of
a function: one small fault at a time. This module holds the values only; the
operators live one family per module beside it, and ``OPERATORS`` in the
package's ``__init__`` is the one registry. Nothing here asks a judge.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum


class Family(Enum):
    """Which part of a judge an operator breaks, and so what running it costs."""

    TEMPLATE = "template"
    """The prompt the judge is sent: its mutants call the judge (cached, bounded)."""
    REPLY = "reply"
    """The rule a reply is read by: its mutants re-read recorded replies, no call."""
    DECISION = "decision"
    """How samples and scores become a verdict: re-read, no call."""


@dataclass(frozen=True, slots=True)
class Example:
    """One worked example: ``given`` (a template, a reply, samples, as the family
    reads it) shown ``before`` by the judge as it is and ``after`` by the mutant."""

    given: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class JudgeOperator:
    """One operator. ``show`` runs it on an example's ``given`` text and returns what
    the original and the first mutant make of it, as text; the docs and the test
    read the same ``examples``."""

    name: str
    family: Family
    description: str
    examples: tuple[Example, ...]
    show: Callable[[str], tuple[str, str]]


@dataclass(frozen=True, slots=True)
class MutantDiff:
    """What a mutant changed, for a reader: the part (``template (pointwise)``,
    ``reply rule``, ``decision``), the text before and after, and where (a line of
    the template, 0 when none)."""

    part: str
    before: str
    after: str
    line: int = 0
