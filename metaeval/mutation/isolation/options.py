"""How a mutation run runs: its options, its isolations, and the errors that void it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from metaeval.errors import MetaevalError
from metaeval.mutation.caches.coverage_file import CoverageFile

DEFAULT_TIMEOUT_FACTOR = 3.0
DEFAULT_TIMEOUT_CONSTANT = 5.0
OUTPUT_TAIL = 2000


class Isolation(Enum):
    """How one mutant's tests are kept apart from another's."""

    FORK = "fork"
    """One warm pytest process collects once and forks a child per mutant (POSIX)."""
    SUBPROCESS = "subprocess"
    """A fresh pytest process per mutant: slow, shares nothing; the reference."""


class Executor(Enum):
    """Where the mutants run (``--executor``)."""

    LOCAL = "local"
    """This machine, in the chosen isolation."""
    RAY = "ray"
    """A Ray cluster, in small batches of fork-isolated mutants (``ray_executor``)."""


DEFAULT_ISOLATION = Isolation.FORK if hasattr(os, "fork") else Isolation.SUBPROCESS
DEFAULT_MEMORY_LIMIT = 4 << 30
"""Bytes of address space a mutant's process may add to its size before its tests
run: a forked child to the warm process's, a pytest child to its own at start."""
WARM_GRACE = 2.0
"""Seconds a warm runner told to stop (SIGTERM) has to kill its children's groups."""


class VoidRun(MetaevalError):
    """The run proves nothing: the suite fails unmutated, the plugin is not wired,
    or no mutant ran. The message names the failing tests or the cause."""


class ScratchError(VoidRun):
    """The scratch directory under the system temp dir cannot be written (full, or
    read-only): no mutant can run, so the run proves nothing (exit 3). Not exit 2:
    the user named no such path; the temp dir is the machine's."""


@contextmanager
def scratch_writes(where: Path | str) -> Iterator[None]:
    try:
        yield
    except OSError as e:
        raise ScratchError(f"cannot write the scratch files in {where}: {e.strerror or e}; "
                           "free space there, or point TMPDIR at a directory that has "
                           "room") from e


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How to run the suite; ``root`` is the project root (the children's cwd)."""

    root: Path
    mutants_dir: Path
    jobs: int = 0
    """Parallel children; 0 means the number of cores."""
    timeout_factor: float = DEFAULT_TIMEOUT_FACTOR
    timeout_constant: float = DEFAULT_TIMEOUT_CONSTANT
    pytest_args: tuple[str, ...] = ()
    python: str = sys.executable
    isolation: Isolation = DEFAULT_ISOLATION
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    """RLIMIT_AS headroom of a mutant's process, in bytes, in either isolation; 0 for none."""
    coverage_cache: Path | None = None
    """Fork mode: where the baseline's coverage map is kept between runs, so a run
    traces only the tests whose files changed; None traces every test."""
    coverage_file: CoverageFile | None = None
    """Fork mode: a coverage file (``caches.coverage_file``, ``--coverage``) whose map the
    warm runner reuses instead of ``coverage_cache``'s, as whoever read the file found
    it (the plan, checked against its hash; a Ray task, the head's map): the runner
    never reads the file again."""

    @property
    def workers(self) -> int:
        return self.jobs if self.jobs > 0 else (os.cpu_count() or 1)

