"""What ``metaeval mutate --isolation subprocess`` and its pytest child tell each
other: the parent writes a ``ChildSpec`` to a scratch file (never inside the
user's tree) and names it in ``METAEVAL_MUTANT_SPEC``; the plugin in the child
(``subprocess.child``) writes a ``ChildResult`` to the path the spec gives. Both
are small JSON files. Imports only the standard library and ``mutation.wire``:
the plugin loads it in every child before any of the user's modules, and must
not import a mutation target early.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path

from metaeval.mutation.wire import CodeRun, ErrorKind, shallow

SPEC_ENV = "METAEVAL_MUTANT_SPEC"


class ChildTask(Enum):
    """What the child is asked to do."""

    BASELINE = "baseline"
    """Apply nothing; record failing tests and which code each test ran."""
    FORCED_FAIL = "forced-fail"
    """Fail every test: proves the plugin is loaded and reports back."""
    REWRITE = "rewrite"
    """Serve ``source`` in place of module ``module`` through an import hook."""
    PATCH = "patch"
    """Replace ``target`` by the replacement the mutants files declare for this id."""


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """The one mutant (or baseline) a pytest child applies."""

    task: ChildTask
    mutant_id: str
    result_path: str
    module: str = ""
    file: str = ""
    """Absolute path of the module a rewrite mutant replaces (for tracebacks, ``__file__``)."""
    source: str = ""
    """For a rewrite mutant: the whole module text with the fault in place."""
    target: str = ""
    mutants_dir: str = ""
    """For a patch mutant: the directory whose files declare it."""
    root: str = ""
    """The project root: for messages, and the baseline's data files (``child.reads``)."""
    packages: tuple[str, ...] = ()
    """Top-level packages of the mutated modules: the baseline records only their code."""
    parent_pid: int = 0
    """The runner's pid: the child ends itself when the runner is gone."""
    tests: tuple[str, ...] = ()
    """When given, only these tests run, in this order (the fork runner's selection,
    fastest first); else every collected test, in collection order."""
    memory_limit: int = 0
    """Bytes of address space the child may add to its size before the mutant goes
    in (as a forked child may add to the warm process's); 0 for no limit."""

    def write(self, path: Path) -> None:
        data = asdict(self)
        data["task"] = self.task.value
        path.write_text(json.dumps(data), encoding="utf-8")

    @staticmethod
    def read(path: Path) -> ChildSpec:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["task"] = ChildTask(data["task"])
        data["packages"] = tuple(data["packages"])
        data["tests"] = tuple(data.get("tests", ()))
        return ChildSpec(**data)

    @staticmethod
    def from_env() -> ChildSpec | None:
        where = os.environ.get(SPEC_ENV)
        return ChildSpec.read(Path(where)) if where else None


@dataclass(frozen=True, slots=True)
class ChildResult:
    """What the plugin saw in one pytest child."""

    error_kind: ErrorKind = ErrorKind.NONE
    error: str = ""
    failed: tuple[str, ...] = ()
    """Node ids of failed tests (or collectors), in the order they failed."""
    tests_run: int = 0
    ran: tuple[CodeRun, ...] = ()
    in_tests: float = 0.0
    """Seconds inside tests (setup, call and teardown), as pytest's reports count them."""

    def write(self, path: Path) -> None:
        data = shallow(self, error_kind=self.error_kind.value)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(path)  # the runner never reads half a file

    @staticmethod
    def read(path: Path) -> ChildResult:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ChildResult(
            error_kind=ErrorKind(data["error_kind"]), error=data["error"],
            failed=tuple(data["failed"]), tests_run=data["tests_run"],
            ran=tuple(CodeRun.from_json(r) for r in data["ran"]),
            in_tests=data.get("in_tests", 0.0))
