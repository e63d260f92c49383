"""The runner's keys of ``[tool.metaeval.mutate]``, with their defaults.

``metaeval.config`` reads the table (and ``targets`` and ``operators``); this
module reads the rest from the section it hands on, never from the file: where
patch mutants live, how to call pytest, the time limit, the number of workers,
where the report goes, and whether message strings are mutated. Flags override
every key. A bad value is an InputError naming the file, the key, the value and
what was expected; numbers are held to the ranges of ``limits``, as the flags are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from metaeval.config import MutateSection, load_config
from metaeval.errors import InputError
from metaeval.mutation.isolation.options import DEFAULT_TIMEOUT_CONSTANT, DEFAULT_TIMEOUT_FACTOR
from metaeval.mutation.limits import JOBS, TIMEOUT_CONSTANT, TIMEOUT_FACTOR, Range

DEFAULT_MUTANTS_DIR = "mutants"
DEFAULT_REPORT = ".metaeval/mutation-report.json"


@dataclass(frozen=True, slots=True)
class MutateSettings:
    """``[tool.metaeval.mutate]`` minus ``targets`` and ``operators``."""

    mutants: str = DEFAULT_MUTANTS_DIR
    """Directory of patch-mutant files, relative to the project root."""
    pytest_args: tuple[str, ...] = ()
    """Extra arguments for every pytest child (``-m "not slow"``, a test path)."""
    timeout_factor: float = DEFAULT_TIMEOUT_FACTOR
    timeout_constant: float = DEFAULT_TIMEOUT_CONSTANT
    jobs: int = 0
    """0: the number of cores."""
    report: str = DEFAULT_REPORT
    """The mutation-testing-report-schema JSON file, relative to the project root."""
    message_strings: bool = False
    """Keep the mutants that change only a log, warning or exception message
    (``metaeval.mutation.find.messages``); left out by default as noise."""


def _number(pyproject: Path | None, section: Mapping[str, object], key: str, default: float,
            limits: Range) -> float:
    value = section.get(key, default)
    if not limits.holds(value):
        raise InputError(f"{pyproject}: tool.metaeval.mutate.{key}: got {value!r}; "
                         f"expected {limits.expected}")
    assert isinstance(value, int | float)
    return float(value)


def load_mutate_settings(root: Path) -> MutateSettings:
    """The settings of the project at ``root`` (defaults when there is no section)."""
    return mutate_settings(load_config(root).mutate)


def mutate_settings(mutate: MutateSection) -> MutateSettings:
    """The runner's keys of ``mutate`` (defaults for those not set)."""
    pyproject, section = mutate.pyproject, mutate.runner
    strings = {}
    for key, default in (("mutants", DEFAULT_MUTANTS_DIR), ("report", DEFAULT_REPORT)):
        value = section.get(key, default)
        if not isinstance(value, str) or not value:
            raise InputError(f"{pyproject}: tool.metaeval.mutate.{key}: got {value!r}; "
                             "expected a path")
        strings[key] = value
    args = section.get("pytest_args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise InputError(f"{pyproject}: tool.metaeval.mutate.pytest_args: got {args!r}; "
                         "expected a list of strings")
    jobs = section.get("jobs", 0)
    if not JOBS.holds(jobs):
        raise InputError(f"{pyproject}: tool.metaeval.mutate.jobs: got {jobs!r}; "
                         f"expected {JOBS.expected}")
    assert isinstance(jobs, int)
    message_strings = section.get("message_strings", False)
    if not isinstance(message_strings, bool):
        raise InputError(f"{pyproject}: tool.metaeval.mutate.message_strings: got "
                         f"{message_strings!r}; expected true or false")
    return MutateSettings(
        mutants=strings["mutants"], pytest_args=tuple(args),
        timeout_factor=_number(pyproject, section, "timeout_factor", DEFAULT_TIMEOUT_FACTOR,
                               TIMEOUT_FACTOR),
        timeout_constant=_number(pyproject, section, "timeout_constant",
                                 DEFAULT_TIMEOUT_CONSTANT, TIMEOUT_CONSTANT),
        jobs=jobs, report=strings["report"], message_strings=message_strings)
