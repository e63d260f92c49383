"""The records both isolations share across a process boundary: why a mutant
could not be put in place (``ErrorKind``), which code each test ran
(``CodeRun``), the records of an earlier baseline that still hold (``Reuse``).
Each isolation's own messages live with it (``fork.protocol``,
``subprocess.protocol``). Imports only the standard library: a child loads it
before any of the user's modules, and must not import a mutation target early.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any


class ErrorKind(Enum):
    """Why a mutant could not be put in place in the child."""

    NONE = ""
    """It was applied."""
    COMPILE = "compile"
    """The mutated source does not compile."""
    APPLY = "apply"
    """The target is missing, the replacement raised, or the module would not load."""


def shallow(value: Any, **override: object) -> dict[str, Any]:
    """A record's fields as JSON takes them, ``ran`` (records of ``CodeRun``) by
    ``to_json``: ``asdict`` copies every nested value, which on a baseline's
    thousands of records cost a second a run. Only for records whose other
    fields are plain values."""
    data = {f.name: getattr(value, f.name) for f in fields(value)}
    if "ran" in data:
        data["ran"] = [r.to_json() for r in data["ran"]]
    return {**data, **override}


@dataclass(frozen=True, slots=True)
class CodeRun:
    """One function (code object) that ran in the baseline, and the tests that ran it.

    Keyed by module name, not file: the tests may import an installed copy of
    the package while the mutants are made from the project's own files.
    """

    module: str
    file: str
    line: int
    """``co_firstlineno``: the ``def`` line, or its first decorator's."""
    name: str
    tests: tuple[str, ...]
    lines: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()
    """The lines of this code object that ran under a test, grouped by who ran
    them: (line numbers, indices into ``tests``). Most lines of a function run
    in the same tests, so the groups are few."""
    at_import: bool = False
    """It also ran outside every test (at import, while collecting), where no line
    is recorded: what it made then (a registry entry, a constant) any test may
    see, whichever of its lines the tests ran themselves."""

    def to_json(self) -> dict[str, Any]:
        """What ``asdict`` gives, built directly: a baseline holds thousands."""
        return {"module": self.module, "file": self.file, "line": self.line,
                "name": self.name, "tests": self.tests, "lines": self.lines,
                "at_import": self.at_import}

    @staticmethod
    def from_json(data: dict[str, Any]) -> CodeRun:
        return CodeRun(data["module"], data["file"], data["line"], data["name"],
                       tuple(data["tests"]),
                       tuple((tuple(ls), tuple(ts)) for ls, ts in data.get("lines", ())),
                       bool(data.get("at_import", False)))


READ = "<read>"
"""The name of a ``CodeRun`` that is no function but a data file the tests read
(``child.reads``): module "" and line 0, so no mutant's function is ever it."""


def read_record(file: str, tests: tuple[str, ...]) -> CodeRun:
    """The record of a data file ``tests`` read, by its path in the project."""
    return CodeRun("", file, 0, READ, tests)


def is_read(run: CodeRun) -> bool:
    """Whether ``run`` records a data file read, not code run."""
    return run.name == READ and run.module == ""


@dataclass(frozen=True, slots=True)
class Reuse:
    """The records of an earlier baseline that still hold, for the warm process."""

    tests: dict[str, float]
    """Node id to its duration in that baseline (it passed)."""
    ran: tuple[CodeRun, ...]
    """What those tests ran, and nothing of the tests that are traced again."""
    stale: int = 0
    """Tests of the earlier map that changed: traced again."""
    old: dict[str, float] = field(default_factory=dict)
    """The earlier baseline's times of the tests not reused (stale, skipped, untraced):
    the limits of mutants that run before those are traced again (the overlap of
    ``fork.warm_session``)."""

    def write(self, path: Path) -> None:
        path.write_text(json.dumps({"tests": self.tests, "ran": [r.to_json() for r in self.ran],
                                    "stale": self.stale, "old": self.old}), encoding="utf-8")

    @staticmethod
    def read(path: Path) -> Reuse:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Reuse({str(k): float(v) for k, v in data["tests"].items()},
                     tuple(CodeRun.from_json(r) for r in data["ran"]), int(data["stale"]),
                     {str(k): float(v) for k, v in data["old"].items()})
