"""The child of ``--isolation subprocess``: one pytest process that puts one mutant
in place (a rewrite mutant before conftest files are imported, a patch mutant once
they are) and writes a ``ChildResult``: the failing tests, and for the baseline,
which functions each test ran and which data files it read. Loaded by the plugin
only with ``--metaeval-mutant``.
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path

import pytest

from metaeval.mutation.child.apply import apply_patch, apply_rewrite
from metaeval.mutation.child.monitor import recorder_for
from metaeval.mutation.child.reads import FileReads
from metaeval.mutation.processes import cap_address_space, die_with_parent, process_size
from metaeval.mutation.subprocess.protocol import SPEC_ENV, ChildResult, ChildSpec, ChildTask
from metaeval.mutation.wire import ErrorKind

# Exit code of a child whose mutant could not be applied (pytest's own "internal error").
APPLY_FAILED = 3


class MutantSession:
    """The plugin object, registered only when ``--metaeval-mutant`` is given."""

    def __init__(self, spec: ChildSpec) -> None:
        self.spec = spec
        self.failed: list[str] = []
        self.tests_run = 0
        self.in_tests = 0.0
        self.error_kind = ErrorKind.NONE
        self.error = ""
        self.recorder = recorder_for(spec.packages) if spec.task is ChildTask.BASELINE else None
        # The data files the baseline's tests read, as the fork baseline records them.
        self.reads = (FileReads(Path(spec.root or os.getcwd()))
                      if spec.task is ChildTask.BASELINE else None)

    def fail_to_apply(self, kind: ErrorKind, error: BaseException) -> None:
        self.error_kind = kind
        lines = traceback.format_exception_only(type(error), error)
        self.error = "".join(lines).strip()

    def apply_early(self) -> None:
        """Rewrite mutants go in before any conftest can import their module; the
        baseline starts recording then too, so code run by conftest imports counts."""
        if self.recorder is not None:
            self.recorder.start()
        if self.reads is not None:
            self.reads.start()
        if self.spec.task is not ChildTask.REWRITE:
            return
        try:
            apply_rewrite(self.spec.module, self.spec.file, self.spec.source)
        except SyntaxError as e:
            self.fail_to_apply(ErrorKind.COMPILE, e)
        except Exception as e:  # the mutated module failed while re-executing
            self.fail_to_apply(ErrorKind.APPLY, e)

    def register(self, config: pytest.Config) -> None:
        config.pluginmanager.register(self, "metaeval-mutant-session")
        if self.reads is not None:  # it tells a test's call from its fixtures
            config.pluginmanager.register(self.reads, "metaeval-file-reads")

    def apply_late(self) -> None:
        """Patch mutants go in once conftest files have set up ``sys.path``."""
        if self.spec.task is not ChildTask.PATCH:
            return
        from metaeval.mutation.patches import find_declared  # only in a patch child

        try:
            declared = find_declared(Path(self.spec.mutants_dir), self.spec.mutant_id)
            apply_patch(declared.target, declared.replacement)
        except (Exception, SystemExit) as e:  # missing target, a replacement that raises
            # or calls exit(): this mutant's RuntimeError, with the reason
            self.fail_to_apply(ErrorKind.APPLY, e)

    def result(self) -> ChildResult:
        ran = self.recorder.runs() if self.recorder is not None else ()
        if self.reads is not None:
            ran += self.reads.runs()
        return ChildResult(self.error_kind, self.error, tuple(self.failed), self.tests_run, ran,
                           self.in_tests)

    def write(self) -> None:
        if self.recorder is not None:
            self.recorder.stop()
        self.result().write(Path(self.spec.result_path))

    # --- hooks -------------------------------------------------------------------

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        if self.recorder is not None:
            self.recorder.begin(nodeid)
        if self.reads is not None:
            self.reads.begin(nodeid)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        if self.recorder is not None:
            self.recorder.end()
        if self.reads is not None:
            self.reads.end()

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if self.spec.task is ChildTask.FORCED_FAIL:
            raise AssertionError("metaeval forced-fail check: this test must fail")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.in_tests += report.duration
        if report.when == "call":
            self.tests_run += 1
        if report.failed and report.nodeid not in self.failed:
            self.failed.append(report.nodeid)

    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        if not self.spec.tests:
            return
        order = {nodeid: i for i, nodeid in enumerate(self.spec.tests)}
        kept = sorted((item for item in items if item.nodeid in order),
                      key=lambda item: order[item.nodeid])
        dropped = [item for item in items if item.nodeid not in order]
        items[:] = kept
        if dropped:
            config.hook.pytest_deselected(items=dropped)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.failed.append(report.nodeid or "<collection>")

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.write()


def start(mutant_id: str) -> MutantSession:
    """The session for ``--metaeval-mutant ID``, its rewrite mutant already in place."""
    spec = ChildSpec.from_env()
    if spec is None or spec.mutant_id != mutant_id:
        raise pytest.UsageError(f"--metaeval-mutant {mutant_id!r} needs ${SPEC_ENV} naming "
                                "that mutant's spec file; run it through `metaeval mutate`")
    die_with_parent(spec.parent_pid)
    if spec.memory_limit:
        # As a forked child is capped at the warm process's size plus the limit.
        cap_address_space(process_size(0) + spec.memory_limit)
    session = MutantSession(spec)
    session.apply_early()
    return session


def configure(session: MutantSession, config: pytest.Config) -> None:
    """Put a patch mutant in place once conftest files ran; stop the session when the
    mutant could not be applied."""
    session.apply_late()
    if session.error_kind is not ErrorKind.NONE:
        session.write()
        pytest.exit(f"metaeval: mutant {session.spec.mutant_id!r} could not be applied: "
                    f"{session.error}", returncode=APPLY_FAILED)
    session.register(config)
