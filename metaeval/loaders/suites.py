"""Apply a suite: checks declared once, added to every run their selector picks.

A suite check (``metaeval.suite_config.SuiteCheck``) picks runs by a glob over
task ids and by values in the run's metadata, and may read some parameters from
each run (``params_from``), so that one declaration serves every task and makes
one row. The check a run gets is built exactly as one written in its line would
be: a grader that refuses the parameters is a ``file:line`` error naming the run
and the declaration, and that run is left out, never graded with a guess.
Reading a parameter from the run goes through the same dotted lookup as the
state; this module imports nothing the suite names beyond what
``build_grader`` allows.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from fnmatch import fnmatchcase

from metaeval.config import NO_JUDGES, JudgesSection
from metaeval.contract import CheckSpec, JsonObject, JsonValue
from metaeval.errors import CheckSpecError
from metaeval.graders.registry import build_grader
from metaeval.importing import BUILTINS_ONLY, AllowedModules
from metaeval.keys import did_you_mean
from metaeval.loaders.meta_set import MetaRun
from metaeval.state import dotted_keys, lookup
from metaeval.suite_config import SuiteCheck, operator
from metaeval.untrusted_json import LoadError


def selects(check: SuiteCheck, run: MetaRun) -> bool:
    """Whether ``check`` applies to ``run``: its task id matches the glob and its
    metadata holds every value the selector names (equal as JSON values)."""
    if not fnmatchcase(run.input.task.id, check.tasks):
        return False
    for key, wanted in check.metadata.items():
        found, value = lookup(run.metadata, key)
        if not matches(found, value, wanted):
            return False
    return True


def matches(found: bool, value: JsonValue, wanted: JsonValue) -> bool:
    """Whether a run's value (``found``: whether the key is there at all) meets a
    selector's ``wanted``: equal, or the test it names (``in``, ``exists``, ``not``)."""
    test = operator(wanted)
    if test is None:
        return found and _same(value, wanted)
    assert isinstance(wanted, dict)
    if test == "exists":
        return found is wanted["exists"]
    if test == "in":
        options = wanted["in"]
        return found and isinstance(options, list) and any(_same(value, w) for w in options)
    return not matches(found, value, wanted["not"])


def _same(a: JsonValue, b: JsonValue) -> bool:
    # JSON's equality: 1 == 1.0, but true is not 1 (Python's == says it is).
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) or (
        isinstance(a, int | float) and isinstance(b, int | float)
        and not isinstance(a, bool) and not isinstance(b, bool) and a == b)


def _read(run: MetaRun, path: str) -> tuple[bool, JsonValue]:
    task = run.input.task
    if path == "task.id":
        return True, task.id
    if path == "task.instruction":
        return True, task.instruction
    if path.startswith("task.criteria."):
        return lookup(task.criteria, path.removeprefix("task.criteria."))
    return lookup(run.metadata, path.removeprefix("metadata."))


def _where(run: MetaRun) -> tuple[str, int]:
    path, _, line = run.source.rpartition(":")
    return (path, int(line)) if line.isdigit() else (run.source, 0)


class _Refused(Exception):
    def __init__(self, error: LoadError) -> None:
        super().__init__(str(error))
        self.error = error


def spec_for(check: SuiteCheck, run: MetaRun) -> CheckSpec:
    """The check spec ``check`` gives ``run``: its fixed parameters and those the run
    supplies. Raises ``_Refused`` with a ``file:line`` error when one is missing."""
    params: JsonObject = dict(check.params)
    path, line = _where(run)
    for param, source in sorted(check.params_from.items()):
        found, value = _read(run, source)
        if not found:
            raise _Refused(LoadError(path, line, source, (
                f"missing; the suite check {check.label!r} ({check.where}) reads its "
                f"parameter {param!r} from here")))
        params[param] = value
    return CheckSpec(check.grader, params, check.name if check.name != check.grader else "")


def apply_suite(runs: Sequence[MetaRun], suite: Iterable[SuiteCheck],
                allowed: AllowedModules = BUILTINS_ONLY, judges: JudgesSection = NO_JUDGES
                ) -> tuple[list[MetaRun], list[LoadError]]:
    """``runs`` with the suite's checks added where they apply, in declaration order
    after the run's own; every run that cannot take one is left out with its error.

    A suite check whose name a run's own line already uses is an error too: which
    of the two the label means would be a guess.
    """
    applier = Applier(tuple(suite), allowed, judges)
    kept: list[MetaRun] = []
    errors: list[LoadError] = []
    for run in runs:
        done = applier.apply(run)
        if isinstance(done, LoadError):
            errors.append(done)
        else:
            kept.append(done)
    return kept, errors


class Applier:
    """A suite applied one run at a time (for runs read as a stream); remembers which
    parameter sets it has built a grader for, so each is checked once."""

    def __init__(self, suite: tuple[SuiteCheck, ...], allowed: AllowedModules = BUILTINS_ONLY,
                 judges: JudgesSection = NO_JUDGES) -> None:
        self.suite = suite
        self.allowed = allowed
        self.judges = judges
        self.built: set[str] = set()
        self.seen = Seen()

    def apply(self, run: MetaRun) -> MetaRun | LoadError:
        """``run`` with the suite's checks that select it, or why it cannot take them."""
        if not self.suite:
            return run
        self.seen.add(run, self.suite)
        try:
            added = [_checked(check, run, self.allowed, self.judges, self.built)
                     for check in self.suite if selects(check, run)]
        except _Refused as refused:
            return refused.error
        if not added:
            return run
        own = {c.label for c in run.input.task.checks}
        clash = next((spec for spec in added if spec.label in own), None)
        if clash is not None:
            path, line = _where(run)
            return LoadError(path, line, "task.checks", (
                f"a check named {clash.label!r} is in this run and in the suite; expected "
                "one of the two (rename one with name)"))
        task = replace(run.input.task, checks=(*run.input.task.checks, *added))
        return replace(run, input=replace(run.input, task=task))


def _checked(check: SuiteCheck, run: MetaRun, allowed: AllowedModules,
             judges: JudgesSection, built: set[str]) -> CheckSpec:
    spec = spec_for(check, run)
    key = json.dumps([spec.grader, spec.params, spec.name], sort_keys=True)
    if key in built:
        return spec
    try:
        build_grader(spec, allowed, judges)
    except CheckSpecError as e:
        path, line = _where(run)
        field = (check.where if not e.field else f"{check.where}.{e.field}"
                 if e.field in ("grader", "name") else f"{check.where}.params.{e.field}")
        raise _Refused(LoadError(path, line, "", (
            f"the suite check {check.label!r}: {field}: {e.message}"))) from e
    built.add(key)
    return spec


def suite_names(suite: Iterable[SuiteCheck]) -> frozenset[str]:
    """The names a suite's checks are labelled by (a run's own label may name them)."""
    return frozenset(check.label for check in suite)


KEYS_KEPT = 500
"""Distinct task ids and metadata keys kept to say what the runs hold: enough for a
"did you mean", bounded whatever the runs hold."""


class Seen:
    """What the runs offered the suite's selectors: task ids, metadata keys, and how
    many runs each check selected; enough to say why a selector picked none."""

    def __init__(self) -> None:
        self.runs = 0
        self.tasks: set[str] = set()
        self.keys: set[str] = set()
        self.selected: Counter[str] = Counter()

    def add(self, run: MetaRun, suite: Iterable[SuiteCheck]) -> None:
        self.runs += 1
        if len(self.tasks) < KEYS_KEPT:
            self.tasks.add(run.input.task.id)
        if len(self.keys) < KEYS_KEPT:
            self.keys.update(dotted_keys(run.metadata))
        for check in suite:
            self.selected[check.where] += selects(check, run)

    def unused(self, suite: Iterable[SuiteCheck]) -> list[LoadError]:
        """An error for each suite check that selected none of the runs read (none when
        no run was read: the error is then elsewhere)."""
        if not self.runs:
            return []
        errors = []
        for check in suite:
            if self.selected[check.where]:
                continue
            why = [self._why_tasks(check)] if not any(
                fnmatchcase(t, check.tasks) for t in self.tasks) else []
            why += [self._why_key(key, wanted) for key, wanted in check.metadata.items()]
            errors.append(LoadError(check.where, 0, "", (
                f"the suite check {check.label!r} selects none of the {self.runs} runs: "
                + "; ".join(why or ["no run matches every part of its selector at once"]))))
        return errors

    def _why_tasks(self, check: SuiteCheck) -> str:
        shown_ids = ", ".join(map(repr, sorted(self.tasks)[:5]))
        return (f"tasks {check.tasks!r} matches none of the {len(self.tasks)} task ids "
                f"({shown_ids}{', ...' if len(self.tasks) > 5 else ''})")

    def _why_key(self, key: str, wanted: JsonValue) -> str:
        value = json.dumps(wanted, sort_keys=True)
        if operator(wanted) is not None:
            return f"metadata {key!r}: no run's value meets {value}"
        if isinstance(wanted, dict):
            # TOML nests an unquoted dotted key: { a.b = 1 } is {"a": {"b": 1}}.
            inner = next(dotted_keys(wanted, f"{key}."), key)
            return (f"metadata {key!r}: no run holds {value} (an unquoted dotted key in "
                    f"TOML nests a table: quote it, \"{inner}\" = ..., to select by a key "
                    f"inside){did_you_mean(inner, self.keys)}")
        if key not in self.keys:
            held = ", ".join(map(repr, sorted(self.keys)[:10])) or "none"
            return (f"metadata {key!r}: no run's metadata holds this key (they hold "
                    f"{held}){did_you_mean(key, self.keys)}")
        return f"metadata {key!r}: no run holds the value {value}"
