"""Checks on the world state the run left behind: the authoritative record of
what happened, whatever the agent's reply claims."""

from __future__ import annotations

from metaeval.contract import EvalInput, Evidence, JsonObject
from metaeval.graders.base import (
    RANK_STATE,
    Judgement,
    RuleGrader,
    failed,
    includes,
    passed,
    rule,
    short,
    unscored,
    want_int,
    want_object,
    want_str,
    want_str_list,
)
from metaeval.state import lookup, state_diff, within

NO_STATE = ("the run records no state (no initial_state or final_state; an imported "
            "run's state comes from the field the suite names: final_state_from)")


def state_includes(path: object, match: object, count: object = 1, *,
                   name: str = "") -> RuleGrader:
    """The list at dotted ``path`` in ``final_state`` has exactly ``count`` rows
    matching every key/value of ``match`` (a refund issued once, to the right order)."""
    where = want_str(path, "path")
    pattern = want_object(match, "match")
    wanted = want_int(count, "count")

    def check(x: EvalInput) -> Judgement:
        if not x.state_recorded:
            return unscored(NO_STATE, Evidence("final_state", "absent"))
        found, rows = lookup(x.final_state, where)
        at = f"final_state.{where}"
        if not found:
            rows = []
        if not isinstance(rows, list):
            return failed(Evidence(at, f"is {short(rows)}, not a list"))
        hits = [i for i, row in enumerate(rows) if includes(row, pattern)]
        detail = f"{len(hits)} of {len(rows)} rows match {short(pattern)}, expected {wanted}"
        evidence = [Evidence(at, detail if found else f"missing; {detail}")]
        evidence += [Evidence(f"{at}.{i}", short(rows[i])) for i in hits[:5]]
        if len(hits) != wanted:
            return failed(*evidence)
        return passed(*evidence)

    return rule("state_includes", check, name=name,
                params={"path": where, "match": pattern, "count": wanted}, rank=RANK_STATE)


def state_unchanged(except_: object = None, *, name: str = "") -> RuleGrader:
    """``final_state`` equals ``initial_state`` outside the paths listed in
    ``except`` (what the task allows to change); evidence names the first
    differing path. (``except`` is a Python keyword, hence ``except_``.)"""
    allowed = want_str_list(except_, "except") if except_ is not None else ()

    def check(x: EvalInput) -> Judgement:
        if not x.state_recorded:
            return unscored(NO_STATE, Evidence("final_state", "absent"))
        changes = [c for c in state_diff(x.initial_state, x.final_state)
                   if not within(c.path, allowed)]
        if changes:
            more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
            return failed(Evidence(f"final_state.{changes[0].path}",
                                   changes[0].describe() + more))
        scope = f" outside {', '.join(allowed)}" if allowed else ""
        return passed(Evidence("final_state", f"unchanged{scope}"))

    spec: JsonObject = {"except": list(allowed)}
    return rule("state_unchanged", check, name=name, params=spec, rank=RANK_STATE)

