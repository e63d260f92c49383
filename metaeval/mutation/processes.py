"""What the runners ask of the operating system for their processes: to die
with their parent, how big a process is and how big it may grow, and to end a
child with every process its tests started.

Every pytest child leads a process group of its own; whatever its tests start
(a background ``sleep``, a server) joins that group, and is killed with it
when the child ends, answered or not. A process that leaves the group on
purpose (``setsid``, a daemon) is out of reach. The group is killed before the
child is reaped: until then its number cannot be reused by another process.

Linux only where it says so; elsewhere each is a no-op or 0, and the
runner's own limits (time, process groups) still apply.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

FORKED_POLL = 0.002
"""Seconds between looks at a ``forked_ok`` child."""


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


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds process ``pid`` has used (user and system, its own since its
    fork; not its children's), from ``/proc``; None when it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def cap_address_space(cap: int) -> None:
    """Limit this process's address space to ``cap`` bytes (0: no limit), so that a
    mutant that allocates without bound gets a MemoryError, not the machine's memory."""
    if cap:
        with contextlib.suppress(ValueError, OSError):  # below what is already mapped
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads; nothing if it is gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def has_exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether ``proc`` has exited, without reaping it (its group stays ours to kill)."""
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except (AttributeError, ChildProcessError):  # no waitid (macOS), or reaped elsewhere
        return proc.poll() is not None


def wait_exited(proc: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Wait up to ``timeout`` seconds (None: for ever) for ``proc`` to exit, without
    reaping it; whether it did."""
    if proc.returncode is not None:
        return True
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux 5.3+: poll, as Popen.wait does
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005
        while not has_exited(proc):
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        return bool(ready)
    finally:
        os.close(fd)


def end_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc``'s process group (it, and what its tests started), then reap it.
    Once reaped, its number may be another process's: never killed again."""
    if proc.returncode is None:
        kill_group(proc.pid)
    proc.wait()


class Stopped(Exception):
    """The run was interrupted: no more children are started."""


class Children:
    """The pytest children of one run that are running now, each the leader of its
    own process group. An interrupted run ``close``s it: every group is killed, and
    no child starts after that. The threads that started them still reap them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()
        self._closed = False

    def start(self, command: Sequence[str], **popen: object) -> subprocess.Popen[bytes]:
        """``subprocess.Popen(command, **popen)`` in a new session; ``Stopped`` once closed."""
        with self._lock:
            if self._closed:
                raise Stopped
            proc: subprocess.Popen[bytes] = subprocess.Popen(
                command, start_new_session=True, **popen)  # type: ignore[call-overload]
            self._running.add(proc)
        return proc

    def end(self, proc: subprocess.Popen[bytes]) -> None:
        """Kill what is left of ``proc``'s group and reap it."""
        end_group(proc)
        with self._lock:
            self._running.discard(proc)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            running = list(self._running)
        for proc in running:
            kill_group(proc.pid)


def forked_ok(work: Callable[[], bool], limit: float) -> bool:
    """Whether ``work``, run in a forked child leading its own process group, says
    True within ``limit`` seconds; an exception in it, or running past the limit
    (the whole group is killed), is False. Whatever it changes dies with the child."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setpgid(0, 0)
            code = 0 if work() else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + limit
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        if time.monotonic() >= deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return False
        time.sleep(FORKED_POLL)
