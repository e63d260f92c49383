"""The baseline's recorder on Python 3.11: coverage.py's C tracer, with one
dynamic context per test, instead of a trace function written in Python.

A Python trace function is called for every call of every frame, which made the
traced baseline 2.3x the plain suite on inspect_ai's scorers; coverage.py's
tracer, in C, decides once per file whether to trace it, and costs 1.4x. It
records lines, not calls, so the functions that ran under a test are read from
the lines: a function ran under a test when one of its own lines did (a lambda
sharing its line with the code around it counts as run with that line: the safe
side, its mutants run those tests rather than being called unreached).

It fills the ``CallRecorder`` it is given (the warm process's, which saw the
imports and the collection), so the record is the one that recorder would
have made: ``runs()`` as before. Chosen by ``baseline_recorder`` in a traced
child; ``METAEVAL_RECORDER=settrace`` keeps the trace function, and without
coverage.py's C tracer the trace function stays too. On 3.12 and later the
``sys.monitoring`` recorder (``monitor``) is cheaper still.
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

OWN_FILES = frozenset(os.path.realpath(f) for f in (*monitor.OWN_FILES, __file__))
QUIET = ["module-not-imported", "module-not-measured", "no-data-collected",
         "already-imported", "module-not-python", "no-ctracer", "couldnt-parse"]
"""coverage.py's warnings, none of which concern the user's run: the packages are
imported before the tracer starts, by design."""


def _c_tracer() -> Any | None:
    """coverage.py's Coverage class when its C tracer is installed, else None."""
    try:
        import coverage
        from coverage.tracer import CTracer  # noqa: F401  (the C extension)
    except ImportError:
        return None
    return coverage.Coverage


def baseline_recorder(recorder: CallRecorder) -> CallRecorder | LineRecorder:
    """What a traced baseline child records with: ``LineRecorder`` on Python before
    3.12 when coverage.py's C tracer is installed (and ``METAEVAL_RECORDER`` is
    not ``settrace``); else ``recorder`` itself."""
    if (sys.version_info >= (3, 12) or type(recorder) is not CallRecorder
            or os.environ.get("METAEVAL_RECORDER") == "settrace"):
        return recorder
    make = _c_tracer()
    return recorder if make is None else LineRecorder(recorder, make)


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
        modules = _modules_by_file(self.into.packages)
        live = {(os.path.realpath(code.co_filename), code.co_firstlineno, code.co_name): code
                for code, wanted in self.into.wanted.items() if wanted}
        for path in data.measured_files():
            real = os.path.realpath(path)
            found = modules.get(real)
            if found is None or real in OWN_FILES:
                continue
            ran = {line: {c for c in contexts if c}
                   for line, contexts in data.contexts_by_lineno(path).items()}
            ran = {line: tests for line, tests in ran.items() if tests}
            if ran:
                self._file(found, real, ran, live)
        return self.into.runs()

    def _file(self, found: tuple[str, str], real: str, ran: dict[int, set[str]],
              live: dict[tuple[str, int, str], types.CodeType]) -> None:
        module, filename = found
        try:
            source = Path(real).read_text(encoding="utf-8")
            top = compile(source, filename, "exec", dont_inherit=True)
        except (OSError, SyntaxError, ValueError):
            return
        into = self.into
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


def _modules_by_file(packages: frozenset[str]) -> dict[str, tuple[str, str]]:
    """Each loaded module of ``packages`` by the real path of its file: its name and
    the file name its code objects carry."""
    found = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and name.partition(".")[0] in packages and file.endswith(".py"):
            found[os.path.realpath(file)] = (name, file)
    return found
