"""Template operators: faults in the prompt a judge is sent.

Each operator takes a judge's template (the text with ``{prompt}``, ``{response}``
and the other placeholders of ``metaeval.judges.reply``) and returns its mutants,
one per place it applies: a rubric criterion or a level description dropped, a
placeholder's content no longer shown, the response cut short, a "must" weakened,
the "explain before you score" line removed, a pair always shown in one order.
A mutant is a ``Prompting``: a template plus how the values are shown. These are
pure functions over text; running a mutant calls the judge (``live``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from metaeval.audit.judge_mutants.unit import Example, Family, JudgeOperator
from metaeval.judges.base import Mode
from metaeval.judges.reply import render

TRUNCATE_AT = 200
"""``truncate_response`` shows the first this many characters of each response."""
_LEVEL = re.compile(r"^\s*(?:score\s*)?\d+(?:\s*(?:points?|pts))?\s*(?::|=|-|\u2013)\s*\S",
                    re.IGNORECASE)
_CRITERION = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+\S")
_MODAL = re.compile(r"\b(must|only|never)\b", re.IGNORECASE)
_EXPLAIN = re.compile(r"\b(explain|explanation|reasoning|rationale|justify|step by step)\b",
                      re.IGNORECASE)
_SHOWN = {Mode.POINTWISE: ("prompt", "reference", "criterion"),
          Mode.PAIRWISE: ("prompt",)}
"""Placeholders whose content ``drop_placeholder`` hides (never the response itself)."""


@dataclass(frozen=True, slots=True)
class Prompting:
    """How a judge is prompted: its template, the responses cut to ``truncate``
    characters (None: whole), and a pair shown in one fixed order (``fixed_order``:
    the two responses sorted, whichever order the audit asks them in)."""

    template: str
    truncate: int | None = None
    fixed_order: bool = False

    def text(self, values: Mapping[str, str]) -> str:
        """The prompt sent for ``values``."""
        shown = dict(values)
        if self.truncate is not None:
            for key in ("response", "response_a", "response_b"):
                if key in shown:
                    shown[key] = shown[key][: self.truncate]
        if self.fixed_order and "response_a" in shown and "response_b" in shown:
            shown["response_a"], shown["response_b"] = sorted(
                (shown["response_a"], shown["response_b"]))
        return render(self.template, shown)


@dataclass(frozen=True, slots=True)
class TemplateMutant:
    """One template mutant: what it changes (``detail``), the line of the template
    it changes (1-based, 0 for none) and the prompting it leaves."""

    detail: str
    line: int
    prompting: Prompting


Transform = Callable[[str, Mode], tuple[TemplateMutant, ...]]


def _without_line(template: str, index: int) -> str:
    lines = template.splitlines(keepends=True)
    return "".join(lines[:index] + lines[index + 1:])


def _line_drops(template: str, keep: Callable[[str], bool], what: str
                ) -> tuple[TemplateMutant, ...]:
    return tuple(TemplateMutant(f"{what} dropped: {line.strip()!r}", n + 1,
                                Prompting(_without_line(template, n)))
                 for n, line in enumerate(template.splitlines()) if keep(line))


def drop_criterion(template: str, mode: Mode) -> tuple[TemplateMutant, ...]:
    """Drop one rubric criterion (a bulleted or numbered line): an edit lost a line
    of the rubric, and the judge no longer checks what it asked."""
    return _line_drops(template, lambda line: bool(_CRITERION.match(line))
                       and not _LEVEL.match(line), "criterion")


def drop_level(template: str, mode: Mode) -> tuple[TemplateMutant, ...]:
    """Drop one level description (``4: ...``, ``Score 2 - ...``): the scale keeps
    its numbers but one of them no longer says what earns it."""
    return _line_drops(template, lambda line: bool(_LEVEL.match(line)), "level")


def drop_placeholder(template: str, mode: Mode) -> tuple[TemplateMutant, ...]:
    """Show the judge nothing where a placeholder stood (``{reference}``, the task,
    the criterion): the judge sees the final text, not what it should be read
    against."""
    found = []
    for name in _SHOWN[mode]:
        token = "{" + name + "}"
        if token in template:
            line = next(n + 1 for n, text in enumerate(template.splitlines())
                        if token in text)
            found.append(TemplateMutant(f"{token} shown empty", line,
                                        Prompting(template.replace(token, ""))))
    return tuple(found)


def truncate_response(template: str, mode: Mode) -> tuple[TemplateMutant, ...]:
    """Show only the first ``TRUNCATE_AT`` characters of each response: a length
    limit cut what the judge should have read."""
    return (TemplateMutant(f"responses cut to their first {TRUNCATE_AT} characters", 0,
                           Prompting(template, truncate=TRUNCATE_AT)),)


def weaken_must(template: str, mode: Mode) -> tuple[TemplateMutant, ...]:
    """Weaken one "must", "only" or "never" to "may": a rule of the rubric becomes
    a suggestion."""
    found = []
    for match in _MODAL.finditer(template):
        line = template.count("\n", 0, match.start()) + 1
        found.append(TemplateMutant(f"{match.group(0)!r} weakened to 'may' (line {line})", line,
                                    Prompting(template[: match.start()] + "may"
                                              + template[match.end():])))
    return tuple(found)


def drop_explanation(template: str, mode: Mode) -> tuple[TemplateMutant, ...]:
    """Remove an "explain before you score" instruction: the judge answers without
    the reasoning its verdicts were calibrated with."""
    return _line_drops(template, lambda line: bool(_EXPLAIN.search(line)), "instruction")


def fix_pair_order(template: str, mode: Mode) -> tuple[TemplateMutant, ...]:
    """Show a pair's responses in one fixed order whichever order was asked: the
    order flip was never applied, so each question is asked one way twice."""
    if mode is not Mode.PAIRWISE:
        return ()
    return (TemplateMutant("pair shown in one fixed order", 0,
                           Prompting(template, fixed_order=True)),)


_POINT = {"prompt": "What is 2+2?", "response": "4, since 2+2 is 4", "reference": "4",
          "criterion": ""}
_PAIR = {"prompt": "Pick", "response_a": "Zebra", "response_b": "Apple"}


def _show(transform: Transform, mode: Mode) -> Callable[[str], tuple[str, str]]:
    """The prompt the original template and its first mutant send for the example's
    values (long responses for the truncation)."""

    def show(given: str) -> tuple[str, str]:
        values = dict(_POINT if mode is Mode.POINTWISE else _PAIR)
        if transform is truncate_response:
            values["response"] = "x" * (TRUNCATE_AT + 5)
        return Prompting(given).text(values), transform(given, mode)[0].prompting.text(values)

    return show


def _unit(transform: Transform, examples: tuple[Example, ...],
          mode: Mode = Mode.POINTWISE) -> JudgeOperator:
    doc = (transform.__doc__ or "").strip().split("\n\n")[0]
    return JudgeOperator(transform.__name__, Family.TEMPLATE, " ".join(doc.split()),
                         examples, _show(transform, mode))


UNITS = (
    _unit(drop_criterion, (Example("Check:\n- correct\n- polite\n{response}",
                                   "Check:\n- correct\n- polite\n4, since 2+2 is 4",
                                   "Check:\n- polite\n4, since 2+2 is 4"),)),
    _unit(drop_level, (Example("5: correct\n1: wrong\n{response}",
                               "5: correct\n1: wrong\n4, since 2+2 is 4",
                               "1: wrong\n4, since 2+2 is 4"),)),
    _unit(drop_placeholder, (Example("Q: {prompt} A: {response}",
                                     "Q: What is 2+2? A: 4, since 2+2 is 4",
                                     "Q:  A: 4, since 2+2 is 4"),)),
    _unit(truncate_response, (Example("[{response}]", "[" + "x" * 205 + "]",
                                      "[" + "x" * 200 + "]"),)),
    _unit(weaken_must, (Example("It must say {response}", "It must say 4, since 2+2 is 4",
                                "It may say 4, since 2+2 is 4"),)),
    _unit(drop_explanation, (Example("Explain first.\n{response}",
                                     "Explain first.\n4, since 2+2 is 4",
                                     "4, since 2+2 is 4"),)),
    _unit(fix_pair_order, (Example("{prompt}: 1 {response_a} 2 {response_b}",
                                   "Pick: 1 Zebra 2 Apple", "Pick: 1 Apple 2 Zebra"),),
          Mode.PAIRWISE),
)
"""The template operators, in registry order."""
TRANSFORMS: dict[str, Transform] = {
    t.__name__: t for t in (drop_criterion, drop_level, drop_placeholder, truncate_response,
                            weaken_must, drop_explanation, fix_pair_order)}
