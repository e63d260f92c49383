"""What the fork runner's parent (``fork.parent``) and its warm pytest process
(``fork.warm_session``) tell each other, and what the warm process's forked
children tell it.

Parent to warm process: a ``WarmSpec`` file, then the mutants (``WarmMutant``s,
written once the parent has found them). Warm process to parent: a stream of
JSON lines (``warm_line``), first one ``baseline`` (``WarmBaseline``), then one
``mutant`` line per mutant (``WarmOutcome``). A baseline child to the warm
process: a ``BaselinePart`` file; a mutant's child: one ``ChildReport`` line on
its pipe. Imports only the standard library and ``mutation.wire``/``model``:
the warm process loads it before any of the user's modules.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from metaeval.mutation.model import Mutant, MutantKind, Span
from metaeval.mutation.wire import CodeRun, ErrorKind, shallow


@dataclass(frozen=True, slots=True)
class WarmMutant:
    """One mutant as the warm runner needs it: where it is, and how to apply it."""

    index: int
    """Its position in the runner's list; results come back tagged with it."""
    id: str
    kind: MutantKind
    module: str
    path: str
    """Relative to the project root, as in ``Mutant.path``."""
    file: str
    """Absolute path of the module file (``__file__`` of a rewritten module)."""
    qualname: str
    span: tuple[int, int, int, int]
    """The mutant's ``Span``: start line and column, end line and column."""
    source: str = ""
    """For a rewrite mutant: the whole module with the fault in place."""
    killers: tuple[str, ...] = ()
    """The tests that killed it in an earlier run (the result cache's entry for it,
    kept though what it depends on changed): a hint of what to run first, never a
    result."""

    def mutant(self) -> Mutant:
        """As much of the ``Mutant`` as coverage needs to place it."""
        return Mutant(self.id, self.kind, "", self.path, self.module,
                      self.qualname, Span(*self.span), "", "")


@dataclass(frozen=True, slots=True)
class WarmSpec:
    """What the warm runner is asked to do, written by the runner to a scratch file."""

    stream_path: str
    """Where the warm runner appends one JSON object a line as things happen."""
    scratch: str
    root: str
    mutants_dir: str
    packages: tuple[str, ...]
    parent_pid: int
    jobs: int
    timeout_factor: float
    timeout_constant: float
    memory_limit: int
    """RLIMIT_AS for each child, in bytes, added to the warm process's own size; 0: none."""
    mutants_path: str
    """Where the mutants arrive, once the runner has found them (``write_warm_mutants``):
    the warm runner collects and traces the baseline meanwhile."""
    reuse_path: str = ""
    """Records of an earlier baseline that still hold (``coverage_cache.Reuse``): those
    tests are not traced again. "" to trace every test."""

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)), encoding="utf-8")

    @staticmethod
    def read(path: Path) -> WarmSpec:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["packages"] = tuple(data["packages"])
        return WarmSpec(**data)


def write_warm_mutants(path: Path, mutants: Sequence[WarmMutant]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([{**asdict(m), "kind": m.kind.value} for m in mutants]),
                   encoding="utf-8")
    tmp.replace(path)  # the warm runner never reads half a file


def read_warm_mutants(path: Path) -> tuple[WarmMutant, ...]:
    return tuple(WarmMutant(**{**m, "kind": MutantKind(m["kind"]), "span": tuple(m["span"]),
                               "killers": tuple(m.get("killers", ()))})
                 for m in json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True, slots=True)
class WarmBaseline:
    """The traced baseline run in the warm process (the first line of the stream)."""

    failed: tuple[str, ...]
    """Failing tests or collectors; the run proves nothing unless this is empty."""
    tests_run: int
    duration: float
    """Seconds the suite takes once in order: collecting it and running its tests (the
    per-mutant limits scale with it)."""
    ran: tuple[CodeRun, ...]
    tests: tuple[str, ...]
    """Every collected test, in collection order."""
    wiring: str
    """Empty when the forced-fail child was killed as it must be; else what went wrong."""
    detail: str = ""
    durations: dict[str, float] = field(default_factory=dict)
    """Each test's seconds (setup, call, teardown), traced now or reused."""
    passed: tuple[str, ...] = ()
    """The tests that ran and passed (not skipped), traced now or reused."""
    reused: int = 0
    """Tests whose records came from an earlier baseline instead of a trace."""
    stale: int = 0
    """Tests of that earlier baseline traced again because a file they depend on changed."""
    untraced: tuple[str, ...] = ()
    """Tests during which the tracer was replaced or switched off: their records
    are incomplete, so every mutant runs them (``BaselinePart.untraced``)."""
    beside: bool = False
    """The traced tests ran beside the mutants' children, not before them."""
    collected: float = 0.0
    """Seconds the warm process took to start, import and collect the tests."""


@dataclass(frozen=True, slots=True)
class ChildTimes:
    """Where one forked mutant's time went, each measured where it happens."""

    wall: float = 0.0
    """Seconds from planning the mutant to reaping its child."""
    in_tests: float = 0.0
    """Seconds inside the selected tests' setup, call and teardown."""
    forking: float = 0.0
    """Seconds the warm process spent in ``os.fork`` for this child."""
    placing: float = 0.0
    """Seconds from the child's start to its first test: putting the mutant in place
    (swapping code, executing modules again)."""
    resident: int = 0
    """Bytes of the warm process resident in memory when it forked this child: what
    a fork copies the page tables of, and a child's exit tears down."""
    limit: float = 0.0
    """Seconds the mutant was allowed (from its selected tests' baseline times)."""


@dataclass(frozen=True, slots=True)
class WarmOutcome:
    """One forked child, seen from the warm process."""

    index: int
    selected: tuple[str, ...] | None
    """The tests run, in order; None when the mutant was not run (no test reaches it)."""
    failed: str = ""
    """The first failing test: the run stopped there."""
    timed_out: bool = False
    error_kind: ErrorKind = ErrorKind.NONE
    error: str = ""
    exit_status: int = 0
    """``os.waitpid`` status; a child that dies without a result is a RuntimeError."""
    reported: bool = True
    """False when the child ended without writing its result."""
    deferred: bool = False
    """To run in a pytest process of its own: no child could put it in place
    faithfully; ``error`` says why."""
    reloaded: bool = False
    """Put in place by executing its module and their dependents again in the child
    (a change outside a function, or in code that ran at import)."""
    times: ChildTimes = ChildTimes()


@dataclass(frozen=True, slots=True)
class BaselinePart:
    """What one traced baseline child saw of its part of the suite."""

    failed: tuple[str, ...] = ()
    tests_run: int = 0
    ran: tuple[CodeRun, ...] = ()
    durations: dict[str, float] = field(default_factory=dict)
    passed: tuple[str, ...] = ()
    """Tests whose call phase ran and passed."""
    untraced: tuple[str, ...] = ()
    """Tests during which the tracer was replaced (a coverage tool's) or switched
    off (CPython drops a trace function that raises, as on a RecursionError in a
    test of deeply nested input); it was started again after each."""
    seconds: float = 0.0
    imported: tuple[str, ...] = ()
    """Modules the tests imported, in the order they did: the warm process imports
    them before forking the mutants' children (``preload``)."""

    def write(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(shallow(self)), encoding="utf-8")
        tmp.replace(path)  # the warm process never reads half a file

    @staticmethod
    def read(path: Path) -> BaselinePart:
        data = json.loads(path.read_text(encoding="utf-8"))
        return BaselinePart(tuple(data["failed"]), data["tests_run"],
                            tuple(CodeRun.from_json(r) for r in data["ran"]),
                            dict(data["durations"]), tuple(data["passed"]),
                            tuple(data["untraced"]), data["seconds"],
                            tuple(data.get("imported", ())))

    def __add__(self, other: BaselinePart) -> BaselinePart:
        """Two parts as one run of the suite (their seconds added up, as if in order)."""
        return BaselinePart(self.failed + other.failed, self.tests_run + other.tests_run,
                            self.ran + other.ran, {**self.durations, **other.durations},
                            self.passed + other.passed, self.untraced + other.untraced,
                            self.seconds + other.seconds,
                            self.imported + tuple(m for m in other.imported
                                                  if m not in set(self.imported)))


@dataclass(frozen=True, slots=True)
class ChildReport:
    """The one line a forked child writes to its pipe: how its tests went, or why it
    could not put its mutant in place (``deferred``: a process of its own may)."""

    failed: str = ""
    error_kind: ErrorKind = ErrorKind.NONE
    error: str = ""
    in_tests: float = 0.0
    placing: float = 0.0
    reloaded: bool = False
    deferred: bool = False
    raised_in: str | None = None
    """Deferred because this module raised when executed again."""

    def line(self) -> bytes:
        return json.dumps({**asdict(self), "error_kind": self.error_kind.value}
                          ).encode("utf-8") + b"\n"

    @staticmethod
    def parse(data: bytes) -> ChildReport:
        """ValueError when the bytes are not a whole report (the child died writing)."""
        try:
            fields = json.loads(data.decode("utf-8"))
            return ChildReport(**{**fields, "error_kind": ErrorKind(fields["error_kind"])})
        except (KeyError, TypeError) as e:
            raise ValueError(f"not a child report: {e}") from e


@dataclass(frozen=True, slots=True)
class WarmPhase:
    """What the warm process is doing before its baseline line, and how far along:
    the tests collected, then those traced of them (a line a second at most)."""

    phase: str
    """``collected`` or ``tracing``."""
    done: int
    total: int


def warm_line(kind: str, value: WarmBaseline | WarmOutcome | WarmPhase) -> str:
    if isinstance(value, WarmBaseline):
        data = shallow(value)
    elif isinstance(value, WarmPhase):
        data = asdict(value)
    else:
        data = asdict(value)
        data["error_kind"] = value.error_kind.value
    return json.dumps({"event": kind, **data}) + "\n"


def read_warm_line(line: str) -> WarmBaseline | WarmOutcome | WarmPhase:
    data = json.loads(line)
    kind = data.pop("event")
    if kind == "phase":
        return WarmPhase(**data)
    if kind == "baseline":
        data["failed"] = tuple(data["failed"])
        data["tests"] = tuple(data["tests"])
        data["ran"] = tuple(CodeRun.from_json(r) for r in data["ran"])
        data["passed"] = tuple(data.get("passed", ()))
        data["untraced"] = tuple(data.get("untraced", ()))
        return WarmBaseline(**data)
    data["error_kind"] = ErrorKind(data["error_kind"])
    if data["selected"] is not None:
        data["selected"] = tuple(data["selected"])
    data["times"] = ChildTimes(**data["times"])
    return WarmOutcome(**data)
