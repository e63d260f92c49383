"""A baseline recorder for Python 3.11: coverage.py's C tracer, with one dynamic
context per test, instead of a trace function written in Python; and how any
recorder's lines become the record of the functions each test ran (``fill``).

A Python trace function is called for every call of every frame, which made the
traced baseline 2.3x the plain suite on inspect_ai's scorers; coverage.py's
tracer, in C, decides once per file whether to trace it, and costs 1.4x. It
records lines, not calls, so the functions that ran under a test are read from
the lines: a function ran under a test when one of its own lines did (a lambda
sharing its line with the code around it counts as run with that line: the safe
side, its mutants run those tests rather than being called unreached).

It fills the ``CallRecorder`` it is given (the warm process's, which saw the
imports and the collection), so the record is the one that recorder would
have made: ``runs()`` as before. The probes (``line_probes``) cost less still, and
are the default; ``fork.baseline.baseline_recorder`` falls back to this tracer when a
module cannot be probed (``METAEVAL_RECORDER=ctrace`` chooses it), and to the
trace function without coverage.py's C tracer (``METAEVAL_RECORDER=settrace``).
On 3.12 and later the ``sys.monitoring`` recorder (``monitor``) is used.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import Any

from metaeval.mutation.child import monitor
from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.coverage import code_objects
from metaeval.mutation.wire import CodeRun

OWN_FILES = frozenset(os.path.realpath(f) for f in (
    *monitor.OWN_FILES, __file__, os.path.join(os.path.dirname(__file__), "line_probes.py")))
"""The recorders' own files, never recorded: when metaeval mutates itself they would
be recorded while they file the record."""
QUIET = ["module-not-imported", "module-not-measured", "no-data-collected",
         "already-imported", "module-not-python", "no-ctracer", "couldnt-parse"]
"""coverage.py's warnings, none of which concern the user's run: the packages are
imported before the tracer starts, by design."""


def c_tracer() -> Any | None:
    """coverage.py's Coverage class when its C tracer is installed, else None."""
    try:
        import coverage
        from coverage.tracer import CTracer  # noqa: F401  (the C extension)
    except ImportError:
        return None
    return coverage.Coverage


class LineRecorder:
    """``CallRecorder``'s record of the tests, from coverage.py's C tracer."""

    def __init__(self, into: CallRecorder, make: Any) -> None:
        self.into = into
        self.cov = make(data_file=None, config_file=False, source_pkgs=sorted(into.packages),
                        concurrency="thread")
        self.cov.set_option("run:disable_warnings", QUIET)
        self.tracer: object = None

    def start(self) -> None:
        if self.tracer is not None:  # again, after a test replaced the tracer
            self.cov.stop()
        self.cov.start()
        self.tracer = sys.gettrace()

    def stop(self) -> None:
        self.cov.stop()

    def intact(self) -> bool:
        """Whether it still records: a test may replace the trace function."""
        return sys.gettrace() is self.tracer

    def begin(self, nodeid: str) -> None:
        self.cov.switch_context(nodeid)

    def end(self) -> None:
        self.cov.switch_context("")

    def runs(self) -> tuple[CodeRun, ...]:
        """The record ``CallRecorder.runs`` gives, the tests' lines filled in."""
        data = self.cov.get_data()
        ran: dict[str, dict[int, set[str]]] = {}
        for path in data.measured_files():
            lines = {line: {c for c in contexts if c}
                     for line, contexts in data.contexts_by_lineno(path).items()}
            ran[os.path.realpath(path)] = {line: tests for line, tests in lines.items() if tests}
        return fill(self.into, ran)


def fill(into: CallRecorder, ran: dict[str, dict[int, set[str]]]) -> tuple[CodeRun, ...]:
    """``into``'s record (``CallRecorder.runs``) with the lines each test ran, by
    the real path of their file: a function ran under a test when one of its own
    lines did (a lambda sharing its line with the code around it counts as run
    with that line: the safe side, its mutants run those tests rather than being
    called unreached). Files of no loaded module of the packages, and the
    recorders' own, are left out."""
    modules = file_modules(into.packages)
    live = {(os.path.realpath(code.co_filename), code.co_firstlineno, code.co_name): code
            for code, wanted in into.wanted.items() if wanted}
    for real, lines in ran.items():
        found = modules.get(real)
        if found is not None and lines and real not in OWN_FILES:
            _file(into, found, real, lines, live)
    return into.runs()


def _file(into: CallRecorder, found: tuple[str, str], real: str, ran: dict[int, set[str]],
          live: dict[tuple[str, int, str], types.CodeType]) -> None:
    module, filename = found
    try:
        source = Path(real).read_text(encoding="utf-8")
        top = compile(source, filename, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        return
    for compiled in code_objects(top):
        code = live.get((real, compiled.co_firstlineno, compiled.co_name), compiled)
        own = {line for _, _, line in compiled.co_lines() if line in ran}
        if not own:
            continue
        into.modules.setdefault(code, module)
        into.wanted[code] = True
        tests = into.seen.setdefault(code, set())
        lines = into.lines.setdefault(code, {})
        for line in own:
            tests.update(ran[line])
            lines.setdefault(line, set()).update(ran[line])


def file_modules(packages: frozenset[str]) -> dict[str, tuple[str, str]]:
    """Each loaded module of ``packages`` by the real path of its file: its name and
    the file name its code objects carry."""
    found = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and name.partition(".")[0] in packages and file.endswith(".py"):
            found[os.path.realpath(file)] = (name, file)
    return found
