"""Turn a judge spec into a ``Judge``: ``biased``, ``steady``, ``always-pass``,
``package.module:attr``, a name under ``[tool.metaeval.judges]``, or a table.

The configured names come in as ``metaeval.config.JudgesSection``: building a
judge never reads a file, so a judge check in a meta-set sees the project's
config only when its caller hands it over.

A table has ``type`` ``http`` (``base_url``, ``model``, ``api_key_env``, ...),
``command`` (``command``, ``timeout``) or ``python`` (``target``). Every problem
is an InputError naming the spec and the key at fault. A spec must never carry
an API key itself: only the name of the environment variable that holds it.
An import path (``--judge``, a meta-set's judge check, a python table's
``target``) resolves only inside ``[tool.metaeval] allowed_modules``, checked
on its text before any import.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from metaeval.config import NO_JUDGES, JudgesSection
from metaeval.errors import InputError
from metaeval.importing import BUILTINS_ONLY, AllowedModules, one_line, resolve
from metaeval.judges.adapters import (
    HttpSettings,
    PromptedJudge,
    callable_backend,
    command_backend,
    endpoint_of,
    http_judge,
)
from metaeval.judges.base import Judge, Mode, Scale
from metaeval.judges.fakes import AlwaysPassJudge, BiasedJudge, SteadyJudge
from metaeval.judges.reply import Templates, read_templates, reply_rule
from metaeval.judges.scales import default_pass_at
from metaeval.keys import cut, did_you_mean

FAKES: dict[str, Callable[[], Judge]] = {
    "biased": BiasedJudge,
    "steady": SteadyJudge,
    "always-pass": AlwaysPassJudge,
}
OWN_KEYS = {"prompt_template", "reply", "winner_map"}
"""A team's own judge: its prompt and the rule its replies are read by."""
HTTP_KEYS = {"type", "name", "base_url", "model", "api_key_env", "timeout", "retries",
             "backoff", "concurrency", "temperature", "scale", "pass_at", "modes", *OWN_KEYS}
COMMAND_KEYS = {"type", "name", "command", "timeout", "scale", "pass_at", "modes", *OWN_KEYS}
PYTHON_KEYS = {"type", "name", "target", "scale", "pass_at", "modes", *OWN_KEYS}
SECRET_KEYS = {"api_key", "key", "token", "authorization"}


def build_judge(spec: object, *, where: str = "--judge",
                allowed: AllowedModules = BUILTINS_ONLY,
                judges: JudgesSection = NO_JUDGES) -> Judge:
    """One judge for one spec; raises InputError saying what was expected. ``allowed``
    is the project's ``[tool.metaeval] allowed_modules``; a judge named by import path
    must be in it. ``judges``: the project's ``[tool.metaeval.judges]``, the names a
    spec may use (default: none)."""
    return _build(spec, where, allowed, judges, ())


def _at(where: str, message: str) -> str:
    return f"{where}: {message}" if where else message


def _build(spec: object, where: str, allowed: AllowedModules, judges: JudgesSection,
           aliases: tuple[str, ...]) -> Judge:
    """``aliases``: the names of ``[tool.metaeval.judges]`` followed to get here, so
    a name that leads back to itself is named as a cycle, not recursed into."""
    if isinstance(spec, str):
        if spec in FAKES:
            return FAKES[spec]()
        if ":" in spec:
            return _python(spec, where, allowed)
        pyproject, configured = judges.pyproject, judges.tables
        if spec in aliases:
            cycle = " -> ".join([*aliases[aliases.index(spec):], spec])
            raise InputError(f"{pyproject}: tool.metaeval.judges.{aliases[-1]}: got {spec!r}, "
                             f"a cycle of names ({cycle}); expected a chain of names that "
                             "ends in a judge table or a built-in judge")
        if spec in configured:
            table = configured[spec]
            inner = f"tool.metaeval.judges.{spec}"
            if isinstance(table, Mapping):
                # Named by its config key unless it says otherwise: two configured
                # judges are two judges, never both "http".
                base = pyproject.parent if pyproject is not None else Path.cwd()
                return _table(dict(table), inner, allowed, spec, base)
            return _build(table, inner, allowed, judges, (*aliases, spec))
        known = ", ".join([*FAKES, *sorted(configured)])
        shown = spec if len(spec) <= 80 else spec[:77] + "..."
        raise InputError(_at(where, f"got {shown!r}; expected one of {known}, an import path "
                             "'package.module:attr', or a table with a 'type'"))
    if isinstance(spec, Mapping):
        return _table(dict(spec), where, allowed)
    raise InputError(_at(where, f"got {spec!r}; expected a judge name or a table"))


def _python(target: str, where: str, allowed: AllowedModules, name: str = "") -> Judge:
    try:
        obj = resolve(target, allowed)
        if isinstance(obj, type):
            obj = obj()
    except InputError as e:
        raise InputError(_at(where, str(e))) from e
    except Exception as e:  # the user's Judge class raised in its constructor
        raise InputError(_at(where, f"{target!r} raised {one_line(e)}")) from e
    if isinstance(obj, Judge):
        return obj
    if callable(obj):
        return PromptedJudge(name or target, callable_backend(obj), endpoint=target)
    raise InputError(_at(where, f"{target!r} is {obj!r}; expected a Judge, a Judge class, or "
                     "a function prompt -> reply text"))


def _get(table: dict[str, object], key: str, kind: type, where: str, default: object) -> object:
    value = table.get(key, default)
    ok = isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not ok:
        raise InputError(f"{where}.{key}: got {value!r}; expected {kind.__name__}")
    return value


def _number(table: dict[str, object], key: str, where: str, default: float, *,
            at_least: float, above: bool = False, integer: bool = False) -> float:
    """A finite number (an integer when ``integer``) ``> at_least`` when ``above``,
    else ``>= at_least``; TOML spells nan and inf, and neither is a setting."""
    value = table.get(key, default)
    number = not isinstance(value, bool) and (
        isinstance(value, int) if integer else isinstance(value, int | float))
    ok = number and math.isfinite(float(str(value))) and (
        float(str(value)) > at_least if above else float(str(value)) >= at_least)
    if not ok:
        kind = "an integer" if integer else "a finite number"
        raise InputError(f"{where}.{key}: got {value!r}; expected {kind} "
                         f"{'>' if above else '>='} {at_least:g}")
    return float(str(value))


def _scale(table: dict[str, object], where: str) -> Scale:
    bounds = table.get("scale", [1, 5])
    if (not isinstance(bounds, list) or len(bounds) != 2
            or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
            or bounds[0] >= bounds[1]):
        raise InputError(f"{where}.scale: got {bounds!r}; expected [low, high] integers")
    low, high = int(str(bounds[0])), int(str(bounds[1]))
    pass_at = table.get("pass_at", default_pass_at(low, high))
    if not isinstance(pass_at, int) or not low <= pass_at <= high:
        raise InputError(f"{where}.pass_at: got {pass_at!r}; expected an integer in {low}..{high}")
    return Scale(low, high, pass_at)


def _modes(table: dict[str, object], where: str) -> frozenset[Mode]:
    names = table.get("modes", [m.value for m in Mode])
    valid = {m.value for m in Mode}
    if not isinstance(names, list) or not names or not all(
            isinstance(n, str) and n in valid for n in names):
        raise InputError(f"{where}.modes: got {names!r}; expected a list of "
                         "'pointwise' and/or 'pairwise'")
    return frozenset(Mode(n) for n in names)


def _own(judge: PromptedJudge, table: dict[str, object], where: str, base: Path) -> Judge:
    """``judge`` with the team's ``prompt_template`` and ``reply`` rule, and the modes
    they cover (``modes``, when given, must be covered by both)."""
    if not OWN_KEYS & set(table):
        return judge
    templates = (read_templates(table["prompt_template"], base, f"{where}.prompt_template")
                 if "prompt_template" in table else Templates())
    rule = reply_rule(table.get("reply", "json"), table.get("winner_map"),
                      where=f"{where}.reply")
    if "modes" in table:
        modes = judge.modes
        for mode in sorted(modes, key=lambda m: m.value):
            if templates.modes and mode not in templates.modes:
                raise InputError(f"{where}.prompt_template: no {mode.value} template, and the "
                                 f"judge is configured for {mode.value} use ('modes'); give "
                                 "one per mode: prompt_template = {pointwise = \"...\", "
                                 "pairwise = \"...\"}")
            if mode not in rule.modes:
                group = "score" if mode is Mode.POINTWISE else "winner"
                what = (f"the pattern has no '{group}' group" if rule.pattern else
                        f"the preset {rule.preset.value!r} reads pairwise verdicts only")
                raise InputError(f"{where}.reply: {what}, and the judge is configured for "
                                 f"{mode.value} use ('modes')")
    else:
        modes = (templates.modes or frozenset(Mode)) & rule.modes
        if not modes:
            raise InputError(f"{where}.reply: reads no reply of the modes its prompt_template "
                             "asks ('score' for pointwise, 'winner' for pairwise)")
    return replace(judge, templates=templates, reply=rule, modes=modes)


def _table(table: dict[str, object], where: str, modules: AllowedModules,
           default_name: str = "", base: Path | None = None) -> Judge:
    secrets = sorted(k for k in table if k.lower() in SECRET_KEYS)
    if secrets:
        raise InputError(f"{where}.{secrets[0]}: a judge spec must not hold a secret; put "
                         "the key in an environment variable and name it in 'api_key_env'")
    kind = table.get("type")
    allowed = {"http": HTTP_KEYS, "command": COMMAND_KEYS, "python": PYTHON_KEYS}
    if not isinstance(kind, str) or kind not in allowed:  # a list is no key (TypeError)
        raise InputError(f"{where}.type: got {kind!r}; expected 'http', 'command' or 'python'")
    unknown = sorted(set(table) - allowed[str(kind)])
    if unknown:
        raise InputError(f"{where}.{cut(unknown[0])}: unknown key for a {kind} judge; expected "
                         f"one of {', '.join(sorted(allowed[str(kind)]))}"
                         f"{did_you_mean(unknown[0], allowed[str(kind)])}")
    base = base if base is not None else Path.cwd()
    if kind == "python":
        target = str(_get(table, "target", str, where, ""))
        name = str(_get(table, "name", str, where, default_name or target))
        judge = _python(target, f"{where}.target", modules, name)
        prompted = sorted(set(table) & (OWN_KEYS | {"scale", "pass_at", "modes"}))
        if not prompted:
            return judge
        if not isinstance(judge, PromptedJudge) or judge.endpoint != target:
            raise InputError(f"{where}.{prompted[0]}: applies to a python judge whose target "
                             "is a function prompt -> reply text, not a Judge")
        judge = replace(judge, scale=_scale(table, where), modes=_modes(table, where))
        return _own(judge, table, where, base)
    name = str(_get(table, "name", str, where, default_name or str(kind)))
    scale, modes = _scale(table, where), _modes(table, where)
    timeout = _number(table, "timeout", where, 60.0, at_least=0, above=True)
    if kind == "command":
        command = table.get("command")
        if isinstance(command, str):
            command = [command]
        if not isinstance(command, list) or not command or not all(
                isinstance(c, str) for c in command):
            raise InputError(f"{where}.command: got {command!r}; expected a list of strings")
        argv = tuple(str(c) for c in command)
        return _own(PromptedJudge(name, command_backend(argv, timeout), scale=scale,
                                  modes=modes, endpoint=shlex.join(argv)), table, where, base)
    base_url = str(_get(table, "base_url", str, where, ""))
    try:
        endpoint_of(base_url)
    except ValueError as e:  # the URL is not echoed: it may hold a secret
        raise InputError(f"{where}.base_url: {e}") from None
    model = str(_get(table, "model", str, where, ""))
    if not model:
        raise InputError(f"{where}.model: got {model!r}; expected a model name")
    settings = HttpSettings(
        base_url, model, str(_get(table, "api_key_env", str, where, "")), timeout,
        int(_number(table, "retries", where, 4, at_least=0, integer=True)),
        _number(table, "backoff", where, 1.0, at_least=0),
        concurrency=int(_number(table, "concurrency", where, 4, at_least=1, integer=True)),
        temperature=_number(table, "temperature", where, 0.0, at_least=0))
    judge = http_judge(settings, name=name, scale=scale)
    return _own(PromptedJudge(judge.name, judge.backend, judge.model, judge.temperature, scale,
                              modes, judge.concurrency, judge.endpoint), table, where, base)


def concurrency_of(judge: Judge) -> int:
    """How many calls the judge allows at once (1 unless it says otherwise)."""
    value = getattr(judge, "concurrency", 1)
    return value if isinstance(value, int) and value > 0 else 1
