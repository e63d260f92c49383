"""The values mutation testing passes between phases: mutants and their outcomes.

Load (operators, patch files) makes ``Mutant`` values; the runner turns each
into a ``MutantResult``; reports only render them. Everything is frozen.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Status(Enum):
    """What happened to one mutant (names as in the mutation-testing report schema)."""

    KILLED = "Killed"
    """A selected test failed with the mutant in place: the tests noticed."""
    SURVIVED = "Survived"
    """Every selected test passed with the mutant in place: a finding."""
    NO_COVERAGE = "NoCoverage"
    """No test executes the mutated code: a survivor by another name."""
    TIMEOUT = "Timeout"
    """The tests ran past the time limit; counted as detected, shown on its own."""
    COMPILE_ERROR = "CompileError"
    """The mutated code does not compile; never counted as killed."""
    RUNTIME_ERROR = "RuntimeError"
    """The mutant could not be applied or the run crashed; never counted as killed."""
    IGNORED = "Ignored"
    """Excluded by a ``# metaeval: skip <reason>`` pragma or an accepted finding."""

    @property
    def detected(self) -> bool:
        return self in (Status.KILLED, Status.TIMEOUT)


class MutantKind(Enum):
    REWRITE = "rewrite"
    """A libcst operator applied to source, in memory."""
    PATCH = "patch"
    """Declared under ``mutants/``, applied at run time by the pytest plugin."""


@dataclass(frozen=True, slots=True)
class Span:
    """1-based lines, 1-based columns, as the mutation-testing report schema wants."""

    start_line: int
    start_column: int
    end_line: int
    end_column: int


@dataclass(frozen=True, slots=True)
class Mutant:
    """One injected fault.

    ``id`` is stable: ``<path>::<qualname>::<operator>::<index>`` for a rewrite
    mutant (index counts that operator's sites within that qualname), the
    declared id for a patch mutant. ``path`` is relative to the project root.
    For a rewrite mutant ``mutated_source`` is the whole module with the fault
    in place; ``original`` and ``replacement`` are the changed snippet.
    """

    id: str
    kind: MutantKind
    operator: str
    path: str
    module: str
    qualname: str
    span: Span
    original: str
    replacement: str
    mutated_source: str = ""
    target: str = ""
    """For a patch mutant: ``package.module:attr``."""
    breaks: str = ""
    """One sentence: which control this mutant switches off."""
    ignored_reason: str = ""
    """Set when a pragma excludes the mutant; it is reported Ignored, never run."""


@dataclass(frozen=True, slots=True)
class MutantResult:
    """What running the tests against one mutant showed."""

    mutant: Mutant
    status: Status
    killed_by: tuple[str, ...] = ()
    covered_by: tuple[str, ...] = ()
    duration: float = 0.0
    """Wall-clock seconds for this mutant: fork or start, apply, tests, reaping."""
    detail: str = ""
    """Why: the error for CompileError/RuntimeError, the pragma reason for Ignored."""
    in_tests: float = 0.0
    """Seconds of ``duration`` spent inside the tests themselves."""
    cached: bool = False
    """Taken from the result cache: nothing ran for it this time."""
    own_process: str = ""
    """Fork isolation: why it ran in a pytest process of its own ("" when it did not)."""
