"""What the warm runner asks of the operating system for its processes: to die
with their parent, and how big a process is.

Linux only where it says so; elsewhere each is a no-op or 0, and the
runner's own limits (time, process groups) still apply.
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Callable
from pathlib import Path


@functools.cache
def look_up_prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, looked up once (before the forks: a child would pay for it
    each time); None where there is none."""
    try:
        import ctypes

        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):  # not Linux
        return None


def die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this process when ``parent`` dies (``kill -9`` included)."""
    prctl = look_up_prctl()
    if prctl is None:
        return
    pr_set_pdeathsig = 1
    prctl(pr_set_pdeathsig, signal.SIGKILL)
    if parent and os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(3)


def process_size(field: int) -> int:
    """A size of this process in bytes from ``/proc/self/statm`` (0: virtual, 1:
    resident), 0 when it cannot be read."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[field])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")
