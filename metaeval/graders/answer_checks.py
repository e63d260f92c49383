"""Checks on the agent's final answer, read from the trajectory.

The answer is ``trajectory.answer()``: never the case file's copy of it. A run
with no answer (none given, or a timeout or error after it) is unscored with
the reason "no answer in the trace", never a pass and never a silent fail.

An ``answer_contains`` pattern comes from a data file, so it must not be able
to hang a run: it is matched by the ``regex`` engine, which reads Python's
``re`` syntax, settles many patterns that make ``re`` backtrack without end
(``^(a+)+$``), and stops any match past a time limit. A pattern past the limit
is unscored with the reason; one the engine refuses, or longer than
``MAX_PATTERN``, is an error at load.
"""

from __future__ import annotations

from decimal import Decimal

import regex

from metaeval.contract import EvalInput, Evidence, JsonObject, Message, ToolResult
from metaeval.errors import CheckSpecError, shown
from metaeval.graders.base import (
    NO_ANSWER,
    RANK_ANSWER,
    Judgement,
    RuleGrader,
    failed,
    passed,
    rule,
    unscored,
    want_str,
    want_str_list,
)
from metaeval.graders.numbers import figures, values_in

MATCH_SECONDS = 0.25
"""CPU time one ``pattern`` may take on one answer. A sane pattern takes
microseconds on a long answer; the engine counts CPU time, so a busy machine
does not make a sane pattern time out."""
MAX_PATTERN = 10_000
"""Characters of one ``pattern``. Compiling takes time and memory with the length
(8 MB: 27 s and 2.1 GB), and a pattern comes from a meta-set line or a run's
metadata (a suite's ``params_from``), once per run; a real one is a line."""

SCOPES = ("last", "any")
"""Where the answer checks look: the last assistant message (the answer, the default,
as their names promise) or any assistant message of the run."""


def _want_scope(value: object) -> str:
    if value not in SCOPES:
        raise CheckSpecError("scope", f"got {value!r}; expected one of "
                             f"{', '.join(map(repr, SCOPES))}")
    return str(value)


def _answer_at(x: EvalInput) -> tuple[str, str] | None:
    """(where, text) of the answer, or None when the trace has none."""
    index = x.trajectory.answer_index()
    if index is None:
        return None
    answer = x.trajectory.events[index]
    assert isinstance(answer, Message)  # answer_index points at an assistant message
    return x.trajectory.at(index), answer.content


def _said(x: EvalInput, scope: str) -> list[tuple[str, str]]:
    """(where, text) of what ``scope`` reads: the answer alone, or every assistant
    message. Empty when there is nothing to read."""
    if scope == "last":
        answer = _answer_at(x)
        return [answer] if answer is not None else []
    return [(x.trajectory.at(i), m.content) for i, m in x.trajectory.indexed(Message)
            if m.role == "assistant"]


def _no_answer() -> Judgement:
    return unscored(NO_ANSWER, Evidence("trajectory", "no final assistant message"))


def _want_numbers(value: object) -> tuple[Decimal, ...]:
    numeric = isinstance(value, list) and value and all(
        isinstance(v, int | float | str) and not isinstance(v, bool) for v in value)
    parsed = [figures(str(v)) for v in value] if isinstance(value, list) and numeric else []
    if not parsed or any(len(p) != 1 for p in parsed):
        raise CheckSpecError("numbers", f"got {value!r}; expected a non-empty list of numbers")
    return tuple(p[0].value for p in parsed)


def _compiled(source: str) -> regex.Pattern[str]:
    if len(source) > MAX_PATTERN:
        raise CheckSpecError("pattern", f"got {shown(source)}, {len(source)} characters; "
                             f"expected a regular expression of at most {MAX_PATTERN}")
    try:
        return regex.compile(source)
    except RecursionError:  # groups nested a thousand deep: the parser recurses
        why = "nested too deep"
    except (regex.error, OverflowError, ValueError) as e:
        why = str(e)
    raise CheckSpecError("pattern", f"got {shown(source)}; not a regular expression: {why}")


def answer_contains(text: object = None, pattern: object = None, numbers: object = None,
                    scope: object = "last", *, name: str = "") -> RuleGrader:
    """The answer contains ``text`` (case-insensitive), matches the regular
    expression ``pattern``, or shows every figure in ``numbers``; exactly one.
    ``scope``: the last assistant message (the answer), or ``any`` of them (the
    figures of ``numbers`` may then be shown in different messages)."""
    given = [k for k, v in (("text", text), ("pattern", pattern), ("numbers", numbers))
             if v is not None]
    if len(given) != 1:
        raise CheckSpecError("text", f"got {given or 'none'}; expected exactly one of "
                             "text, pattern or numbers")
    where = _want_scope(scope)
    params: JsonObject
    if text is not None:
        needle = want_str(text, "text")
        params = {"text": needle}

        def found(answer: str) -> tuple[bool | None, str]:
            ok = needle.casefold() in answer.casefold()
            return ok, f"answer {'contains' if ok else 'lacks'} {needle!r}"
    elif pattern is not None:
        source = want_str(pattern, "pattern")
        compiled = _compiled(source)
        params = {"pattern": source}

        def found(answer: str) -> tuple[bool | None, str]:
            try:
                ok = compiled.search(answer, timeout=MATCH_SECONDS) is not None
            except TimeoutError:
                return None, (f"pattern {shown(source)} took more than {MATCH_SECONDS:g} s of "
                              f"CPU on the answer ({len(answer)} characters); unscored")
            return ok, f"answer {'matches' if ok else 'does not match'} {source!r}"
    else:
        wanted = _want_numbers(numbers)
        params = {"numbers": [str(n) for n in wanted]}

        def found(answer: str) -> tuple[bool | None, str]:
            present = {f.value for f in figures(answer)}
            missing = [str(n) for n in wanted if n not in present]
            if missing:
                return False, f"answer lacks {', '.join(missing)}"
            return True, f"answer shows {', '.join(str(n) for n in wanted)}"
    if where != "last":
        params["scope"] = where

    def check(x: EvalInput) -> Judgement:
        said = _said(x, where)
        if not said:
            return _no_answer()
        if where == "any" and numbers is not None:
            # the figures may be spread over several messages: read them as one
            said = [(", ".join(at for at, _ in said), "\n".join(t for _, t in said))]
        undecided: Judgement | None = None
        detail = ""
        for at, reply in said:
            ok, detail = found(reply)
            if ok:
                return passed(Evidence(at, detail))
            if ok is None:  # the pattern ran out of time: undecided, never a pass
                undecided = unscored(detail, Evidence(at, detail))
        if undecided is not None:
            return undecided
        if where == "any" and x.trajectory.answer_index() is None:
            return _no_answer()  # cut short: it may have said it next
        return failed(Evidence(said[-1][0] if len(said) == 1 else "trajectory",
                               detail if len(said) == 1 else
                               f"no assistant message of {len(said)}: {detail}"))

    return rule("answer_contains", check, name=name, params=params, rank=RANK_ANSWER)


def grounded_numbers(scope: object = "last", *, name: str = "") -> RuleGrader:
    """Every figure in the answer (``scope`` ``any``: in every assistant message)
    appears in a tool result, a user message or a system message (the policy).

    Counts (whole numbers up to 12) and years are ignored; thousands separators
    and rounding to the precision shown are tolerated ("$49.99" is grounded by
    a tool's 49.99, "about 50" by 49.99, "$48" by nothing that rounds to 48);
    four or more digits inside a source's identifier ("certificate_7504069")
    ground the number ("Certificate 7504069").
    """
    where = _want_scope(scope)

    def check(x: EvalInput) -> Judgement:
        said = _said(x, where)
        sources: list[Decimal] = []
        for _, result in x.trajectory.indexed(ToolResult):
            sources.extend(values_in(result.content))
        for _, message in x.trajectory.indexed(Message):
            if message.role in ("user", "system"):
                sources.extend(values_in(message.content))
        claimed = 0
        for at, reply in said:
            figures_here = [f for f in figures(reply) if not (f.is_count or f.is_year)]
            claimed += len(figures_here)
            ungrounded = [f.text for f in figures_here
                          if not any(f.shown_by(s) for s in sources)]
            if ungrounded:
                return failed(Evidence(at, f"ungrounded figures: {', '.join(ungrounded)}"))
        # Nothing said (no answer), or a run cut short after grounded figures: it may
        # have said an ungrounded one next. One test for both, so no guard above.
        if x.trajectory.answer_index() is None:
            return _no_answer()
        return passed(Evidence(said[-1][0] if len(said) == 1 else "trajectory",
                               f"{claimed} figures, all grounded"))

    params: JsonObject = {} if where == "last" else {"scope": where}
    return rule("grounded_numbers", check, name=name, params=params, rank=RANK_ANSWER)


def answer_states(facts: object, scope: object = "last", *, name: str = "") -> RuleGrader:
    """End to end: the answer tells the user the outcome the task expected. Each
    key in ``facts`` names a hidden fact in ``task.criteria``; a string must
    appear in the answer (case-insensitive), a number must be shown as a figure.
    ``scope`` ``any``: each fact may be stated in any assistant message.

    It compares the trajectory's answer with the criteria, never the case
    file's own copy of an answer (the classic tautology).
    """
    keys = want_str_list(facts, "facts")
    if not keys:
        raise CheckSpecError("facts", "got []; expected at least one key of task.criteria")
    where = _want_scope(scope)

    def check(x: EvalInput) -> Judgement:
        said = _said(x, where)
        if not said:
            return _no_answer()
        missing = []
        stated_at: list[str] = []
        for key in keys:
            value = x.task.criteria.get(key)
            if isinstance(value, str) and value:
                hits = [at for at, reply in said if value.casefold() in reply.casefold()]
            elif isinstance(value, int | float) and not isinstance(value, bool):
                hits = [at for at, reply in said
                        if Decimal(str(value)) in {f.value for f in figures(reply)}]
            else:
                return unscored(f"task.criteria.{key} is {value!r}; expected a string or a "
                                "number to look for", Evidence("task.criteria", key))
            if hits:
                stated_at.append(hits[0])
            else:
                missing.append(f"{key}={value!r}")
        at = said[-1][0] if len(said) == 1 else "trajectory"
        if missing:
            if where == "any" and x.trajectory.answer_index() is None:
                return _no_answer()  # cut short: it may have said it next
            return failed(Evidence(at, f"answer does not state {', '.join(missing)}"))
        first = stated_at[0] if len(set(stated_at)) == 1 else at
        return passed(Evidence(first, f"answer states {', '.join(keys)}"))

    params: JsonObject = {"facts": list(keys)}
    if where != "last":
        params["scope"] = where
    return rule("answer_states", check, name=name, params=params, rank=RANK_ANSWER)
