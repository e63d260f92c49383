"""A real Ray cluster on loopback for the Ray executor's tests: a head and a second
node, each ``ray start --block`` in a process group of its own, one CPU each,
usage statistics and the dashboard off.

Stopped by the ids of the processes it started, never ``ray stop``: that ends
every Ray process on the machine by name, another user's cluster included.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent
STARTUP = 90.0
"""Seconds a node may take to join (a loaded 2-core machine takes ~10)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _descendants(pids: list[int]) -> set[int]:
    """``pids`` and every process under them, from /proc."""
    return set(_depths(pids))


def _depths(pids: list[int]) -> dict[int, int]:
    """``pids`` (depth 0) and every process under them, with its depth, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rpartition(")")[2].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found: dict[int, int] = {}
    todo = [(pid, 0) for pid in pids]
    while todo:
        pid, depth = todo.pop()
        if pid not in found:
            found[pid] = depth
            todo.extend((child, depth + 1) for child in children.get(pid, ()))
    return found


def _signal(pids: set[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


@dataclass
class LocalCluster:
    """A head and ``nodes - 1`` more nodes on 127.0.0.1, under a temp dir of its own."""

    nodes: int = 2
    env: dict[str, str] = field(default_factory=dict)
    """Added to every node's environment (its workers inherit it)."""
    bin: Path = BIN
    """Where ``ray`` and the ``python`` the nodes and workers run are."""
    address: str = ""
    temp_dir: Path = Path()
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)
    token: str = field(default_factory=lambda: secrets.token_hex(32))
    """The cluster's own token: Ray 2.5x turns token authentication on when it finds
    ~/.ray/auth_token, which another run may have left; the nodes and every driver
    get this one instead, whatever is there."""

    @property
    def driver_env(self) -> dict[str, str]:
        """What a driver of this cluster needs in its environment (``metaeval mutate``)."""
        return {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token",
                "RAY_AUTH_TOKEN": self.token}

    def start(self) -> LocalCluster:
        # Short: Ray's socket paths under it must stay within the 107 bytes of AF_UNIX.
        self.temp_dir = Path(tempfile.mkdtemp(prefix="ray"))
        port = _free_port()
        self.address = f"127.0.0.1:{port}"
        env = {**self.driver_env, **self.env,
               "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}"}
        common = ["--block", "--num-cpus=1", "--disable-usage-stats",
                  "--node-ip-address=127.0.0.1", "--object-store-memory=100000000"]
        self._node(["--head", f"--port={port}", "--include-dashboard=false",
                    f"--temp-dir={self.temp_dir}", *common], env, "head")
        self.wait_for(1)
        for n in range(1, self.nodes):
            self._node([f"--address={self.address}", *common], env, f"node{n}")
        self.wait_for(self.nodes)
        return self

    def _node(self, args: list[str], env: dict[str, str], name: str) -> None:
        with (self.temp_dir / f"{name}.log").open("wb") as log:
            self.started.append(subprocess.Popen(
                [str(self.bin / "ray"), "start", *args], env=env, stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True))

    def alive(self) -> int:
        """Nodes the cluster counts alive (a driver of its own, in a subprocess)."""
        code = ("import ray, logging\n"
                f"ray.init(address={self.address!r}, logging_level=logging.ERROR)\n"
                "print(sum(1 for n in ray.nodes() if n['Alive']))")
        done = subprocess.run([str(self.bin / "python"), "-c", code], capture_output=True,
                              text=True, timeout=60, env=self.driver_env)
        return int(done.stdout.strip() or 0) if done.returncode == 0 else 0

    def wait_for(self, nodes: int) -> None:
        deadline = time.monotonic() + STARTUP
        while time.monotonic() < deadline:
            for proc in self.started:
                if proc.poll() is not None:
                    raise RuntimeError(f"a Ray node exited ({proc.returncode}):\n{self.logs()}")
            if self.alive() >= nodes:
                return
            time.sleep(1)
        raise RuntimeError(f"{nodes} Ray nodes not alive after {STARTUP}s:\n{self.logs()}")

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-2000:]
                         for p in sorted(self.temp_dir.glob("*.log")))

    def pids(self) -> set[int]:
        """Every process of the cluster still running: the nodes and all under them."""
        return {p for p in _descendants([p.pid for p in self.started]) if _running(p)}

    def cpu_ticks(self) -> dict[int, int]:
        """Each cluster process's CPU so far, in clock ticks: the ``ray start`` processes,
        the daemons and the workers, each with its reaped children's (a worker's warm
        runners and their forks); deeper processes arrive through their parents."""
        ticks: dict[int, int] = {}
        for pid, depth in _depths([p.pid for p in self.started]).items():
            if depth > 2:
                continue
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            ticks[pid] = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        return ticks

    def stop(self) -> set[int]:
        """Freeze every process the nodes started (none starts another then), find
        them again, kill them all; remove the temp dir. Returns those still running
        after 30 seconds (none, unless the machine is in trouble)."""
        first = self.pids()
        _signal(first, signal.SIGSTOP)
        everyone = first | self.pids()
        _signal(everyone, signal.SIGKILL)
        for proc in self.started:
            proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while any(_running(p) for p in everyone) and time.monotonic() < deadline:
            time.sleep(0.1)
        shutil.rmtree(self.temp_dir, ignore_errors=True)
        return {p for p in everyone if _running(p)}


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not exited (a zombie has)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return not any(line.startswith("State:") and "zombie" in line
                   for line in status.splitlines())
