"""Build graders from check specs: ``{"grader": NAME, ...params, "name": optional}``.

NAME is a built-in grader or ``package.module:factory``; a factory is called
with the spec's parameters and must return a ``Grader``. A spec is data: a
factory is imported only from a module the project allows (``AllowedModules``,
from its config, never from the spec), and checked on its text before any
import. Every problem is a ``CheckSpecError`` naming the spec key at fault.
"""

from __future__ import annotations

import inspect
import keyword
from collections.abc import Callable, Iterable

from metaeval.config import NO_JUDGES, JudgesSection
from metaeval.contract import CheckSpec, Grader
from metaeval.errors import CheckSpecError, InputError
from metaeval.graders.answer_checks import answer_contains, answer_states, grounded_numbers
from metaeval.graders.base import Renamed
from metaeval.graders.judge_check import judge, judge_with
from metaeval.graders.state_checks import state_includes, state_unchanged
from metaeval.graders.trajectory_rules import max_steps, no_tool_called, tool_called, tool_order
from metaeval.importing import BUILTINS_ONLY, AllowedModules, resolve
from metaeval.keys import did_you_mean

Factory = Callable[..., Grader]

BUILTINS: dict[str, Factory] = {
    "no_tool_called": no_tool_called,
    "tool_called": tool_called,
    "tool_order": tool_order,
    "max_steps": max_steps,
    "state_includes": state_includes,
    "state_unchanged": state_unchanged,
    "answer_contains": answer_contains,
    "grounded_numbers": grounded_numbers,
    "answer_states": answer_states,
    "judge": judge,
}


def _kwargs(factory: Callable[..., object], spec: CheckSpec) -> dict[str, object]:
    """Spec keys as factory keywords; a key that is a Python keyword gets a ``_``."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # some callables have no signature to read
        return dict(spec.params)
    accepted = {p.rstrip("_"): p for p in params if p != "name"}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs: dict[str, object] = {}
    for key, value in spec.params.items():
        if key in accepted:
            kwargs[accepted[key]] = value
        elif takes_any:
            kwargs[key + "_" if keyword.iskeyword(key) else key] = value
        else:
            expected = ", ".join(sorted(accepted)) or "none"
            raise CheckSpecError(key, f"unknown parameter for grader {spec.grader!r}; "
                                 f"expected: {expected}{did_you_mean(key, accepted)}")
    for key, p in params.items():
        if (p.default is inspect.Parameter.empty and key not in kwargs
                and p.kind is not inspect.Parameter.VAR_KEYWORD):
            raise CheckSpecError(key.rstrip("_"), f"missing; grader {spec.grader!r} needs it")
    return kwargs


def build_grader(spec: CheckSpec, allowed: AllowedModules = BUILTINS_ONLY,
                 judges: JudgesSection = NO_JUDGES) -> Grader:
    """One grader for one check spec; raises CheckSpecError when it cannot. ``allowed``
    is the project's ``[tool.metaeval] allowed_modules``: a factory named by import
    path, or a judge a judge check names by one, must come from it. ``judges``: the
    project's ``[tool.metaeval.judges]``, the names a judge check may use."""
    if spec.grader in BUILTINS:
        factory = BUILTINS[spec.grader]
        if factory is judge:
            factory = judge_with(allowed, judges)
        return factory(**_kwargs(factory, spec), name=spec.label)
    if ":" not in spec.grader:
        known = ", ".join(sorted(BUILTINS))
        raise CheckSpecError("grader", f"{spec.grader!r} is not a built-in grader ({known}) "
                             "nor an import path 'package.module:factory'")
    try:
        user_factory = resolve(spec.grader, allowed)
    except InputError as e:
        raise CheckSpecError("grader", str(e)) from e
    if not callable(user_factory):
        raise CheckSpecError("grader", f"{spec.grader!r} is not callable; expected a factory")
    try:
        grader: object = user_factory(**_kwargs(user_factory, spec))
    except CheckSpecError:
        raise
    except Exception as e:  # the user's factory rejected its parameters
        raise CheckSpecError("grader", f"{spec.grader!r} raised {e!r}") from e
    if not isinstance(grader, Grader):
        raise CheckSpecError("grader", f"{spec.grader!r} returned {grader!r}; expected a "
                             "Grader (name, version, kind, cost_rank, grade)")
    return Renamed(grader, spec.name) if spec.name and spec.name != grader.name else grader


def build_graders(specs: Iterable[CheckSpec], allowed: AllowedModules = BUILTINS_ONLY,
                  judges: JudgesSection = NO_JUDGES) -> list[Grader]:
    return [build_grader(spec, allowed, judges) for spec in specs]
