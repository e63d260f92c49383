"""Judge mutants: broken copies of an LLM judge, audited against the same labels.

``OPERATORS`` is the one registry of operators, in report order, by family:
``template_ops`` (the prompt, which costs calls), ``reply_ops`` (how a reply is
read) and ``decision_ops`` (how samples become a verdict), which re-read replies
already had. Adding an operator is one function in its family's module and one
``_unit`` row there with its before/after example; nothing else names one.
"""

from __future__ import annotations

from metaeval.audit.judge_mutants import decision_ops, reply_ops, template_ops
from metaeval.audit.judge_mutants.unit import Example, Family, JudgeOperator, MutantDiff
from metaeval.errors import InputError
from metaeval.keys import did_you_mean

__all__ = ["OPERATORS", "Example", "Family", "JudgeOperator", "MutantDiff", "select"]

OPERATORS: dict[str, JudgeOperator] = {}
for _unit in (*template_ops.UNITS, *reply_ops.UNITS, *decision_ops.UNITS):
    if _unit.name in OPERATORS:
        raise ValueError(f"judge operator {_unit.name!r} is registered twice")
    OPERATORS[_unit.name] = _unit


def select(names: tuple[str, ...], where: str = "--operators") -> frozenset[str]:
    """The operators named (all when ``names`` is empty); an unknown name is an
    InputError naming ``where``, the name and the operators there are."""
    for name in names:
        if name not in OPERATORS:
            raise InputError(f"{where}: got {name!r}; expected judge operators from "
                             f"{', '.join(OPERATORS)}{did_you_mean(name, OPERATORS)}")
    return frozenset(names or OPERATORS)
