"""How each mutation tool is run and read, and how a run is timed and weighed.

One adapter per tool (metaeval, mutmut 3.8.1, cosmic-ray 8.7.0): each takes a
fresh scratch copy of a project, runs the tool there, and returns its mutants
with a status and a diff in one shape, so the benchmark compares like with
like. It must never write outside the scratch directory it is given, and never
tune a tool against the numbers: every tool runs with its own defaults, told
only where the code and the tests are and how many workers to use.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Target:
    """A project the tools are measured on, and where its code and tests are."""

    name: str
    pristine: Path
    metaeval_paths: tuple[str, ...]
    mutmut_config: str
    cosmic_ray_modules: tuple[str, ...]
    test_args: tuple[str, ...]
    src_on_path: bool
    env: tuple[tuple[str, str], ...] = ()
    """Variables every tool's run gets (inspect_ai's: tiktoken's cache folder)."""


@dataclass(frozen=True, slots=True)
class Mutant:
    """One mutant as a tool reported it: where, what it ended as, and its diff."""

    function: str
    status: str
    diff: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ToolRun:
    """One timed run of one tool on one target."""

    tool: str
    target: str
    run: int
    wall: float
    mutants: tuple[Mutant, ...]
    note: str = ""
    report: Mapping[str, object] = field(default_factory=dict)
    stopped_at_limit: bool = False

    @property
    def done(self) -> int:
        """Mutants with a final status; below len(mutants) only when stopped at the limit."""
        return sum(m.status not in UNFINISHED for m in self.mutants)

    def statuses(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for m in self.mutants:
            counts[m.status] = counts.get(m.status, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


@dataclass(frozen=True, slots=True)
class Measured:
    """A finished command: exit code, output, wall time, peak memory seen."""

    returncode: int
    stdout: str
    stderr: str
    wall: float
    root_peak_kb: int
    child_peak_kb: int
    stopped_at_limit: bool = False


# What a tool reports for a mutant it never finished: mutmut's unchecked and
# interrupted mutants, cosmic-ray's work items without a result.
UNFINISHED = frozenset({"not checked", "check was interrupted by user", "not run"})

# How long a tool stopped at the time limit gets to wind down after SIGINT
# before its whole process group is killed.
GRACE_SECONDS = 15.0


class BenchError(Exception):
    """A tool or a setup step failed; the message says which and shows its output."""


def run_cmd(
    cmd: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    *,
    ok: Sequence[int] = (0,),
    watch_memory: bool = False,
    time_limit: float | None = None,
) -> Measured:
    """Run cmd, time it, and (when asked) poll /proc for the peak RSS of it and its children.

    Polling costs a little CPU, so timed runs leave it off and memory is read
    in a run of its own. With a time limit, cmd runs in a process group of its
    own and is stopped there when it passes the limit (see stop_group); its
    wall is then the limit and its exit code is not checked.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd), cwd=cwd, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=time_limit is not None,
    )
    peaks: dict[int, int] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(proc.pid, peaks, stop), daemon=True)
    if watch_memory:
        watcher.start()
    stopped = False
    try:
        out, err = proc.communicate(timeout=time_limit)
        wall = time.perf_counter() - start
    except subprocess.TimeoutExpired:
        out, err = stop_group(proc)
        wall, stopped = time_limit or 0.0, True
    stop.set()
    if watch_memory:
        watcher.join()
    if proc.returncode not in ok and not stopped:
        raise BenchError(
            f"{' '.join(cmd)!r} in {str(cwd)!r} exited {proc.returncode}, expected one of "
            f"{list(ok)}\n--- stdout (end)\n{out[-3000:]}\n--- stderr (end)\n{err[-3000:]}"
        )
    children = [kb for pid, kb in peaks.items() if pid != proc.pid]
    return Measured(
        proc.returncode, out, err, wall, peaks.get(proc.pid, 0), max(children, default=0),
        stopped_at_limit=stopped,
    )


def stop_group(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Stop proc's process group as Ctrl-C would, then kill what is left; return its output.

    SIGINT first: mutmut and cosmic-ray then stop through their own
    interrupted path, which leaves their result files whole (a SIGKILL in
    the middle of mutmut writing a meta file would leave it cut short). What
    still runs after GRACE_SECONDS, the group leader or any child it forked,
    gets SIGKILL; the function returns only when nothing of the group is left.
    """
    pgid = proc.pid  # start_new_session: the leader's pid is the group id
    _signal_group(pgid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _signal_group(pgid, signal.SIGKILL)
        out, err = proc.communicate()
    # The leader may be gone while children it forked live on in the group.
    _signal_group(pgid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while left := group_members(pgid):
        if time.monotonic() > deadline:
            raise BenchError(f"process group {pgid} still has processes {left} after SIGKILL")
        time.sleep(0.05)
    return out, err


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def group_members(pgid: int) -> list[int]:
    """Live processes of a process group; zombies waiting for their reaper are not counted."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _watch(root: int, peaks: dict[int, int], stop: threading.Event) -> None:
    # VmHWM is each process's own high-water mark, so a poll late in a short
    # child's life still sees its peak; a child that lives under one poll
    # interval may be missed.
    while not stop.is_set():
        for pid in _descendants(root):
            hwm = _vm_hwm(pid)
            if hwm > peaks.get(pid, 0):
                peaks[pid] = hwm
        time.sleep(0.02)


def _descendants(root: int) -> list[int]:
    parent: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = Path(entry.path, "stat").read_text()
            parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, ppid in parent.items() if ppid in frontier]
        found.extend(frontier)
    return found


def _vm_hwm(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def tool_env(venv: Path, copy: Path, target: Target) -> dict[str, str]:
    """The environment every tool runs in: the scratch venv first, the target's src/ importable."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    if target.src_on_path:
        env["PYTHONPATH"] = str(copy / "src")
    env.update(target.env)
    return env


# ---------------------------------------------------------------- copies and plain runs


DURATIONS_PLUGIN = '''
"""Write each test's own time (setup + call + teardown) to $BENCH_DURATIONS_OUT."""
import json, os
_times = {}
def pytest_runtest_logreport(report):
    _times[report.nodeid] = _times.get(report.nodeid, 0.0) + report.duration
def pytest_sessionfinish(session):
    with open(os.environ["BENCH_DURATIONS_OUT"], "w") as f:
        json.dump(_times, f)
'''


def write_durations_plugin(work: Path) -> None:
    """The plugin plain_test_run loads, under work/plugins."""
    (work / "plugins").mkdir(parents=True, exist_ok=True)
    (work / "plugins" / "bench_durations.py").write_text(DURATIONS_PLUGIN)


def fresh_copy(target: Target, work: Path, name: str) -> Path:
    """A copy of target.pristine at work/runs/name, made anew."""
    copy = work / "runs" / name
    shutil.rmtree(copy, ignore_errors=True)
    # No tool reuses a result, and no copy carries an install's metadata of another path.
    shutil.copytree(target.pristine, copy,
                    ignore=shutil.ignore_patterns(".metaeval", "*.egg-info"))
    return copy


def plain_test_run(
    target: Target, venv: Path, work: Path
) -> tuple[Measured, dict[str, float]]:
    """The suite alone: its wall time, its peak RSS, and each test's own time."""
    copy = fresh_copy(target, work, f"{target.name}-plain")
    env = tool_env(venv, copy, target)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (env.get("PYTHONPATH", ""), str(work / "plugins")) if p)
    env["BENCH_DURATIONS_OUT"] = str(copy / "durations.json")
    cmd = [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "bench_durations",
           *target.test_args]
    m = run_cmd(cmd, copy, env, watch_memory=True)
    return m, json.loads((copy / "durations.json").read_text())


# ---------------------------------------------------------------- metaeval


def metaeval_cmd(venv: Path, target: Target, jobs: int, extra: Sequence[str] = ()) -> list[str]:
    return [
        str(venv / "bin" / "metaeval"), "mutate", *target.metaeval_paths,
        "--jobs", str(jobs), "--format", "json", *extra,
    ]


# The report carries a diff for survivors only; the killed ones' diffs come
# from metaeval's own mutant generator, run in the scratch venv.
_DIFFS = """
import json, sys
from pathlib import Path
from metaeval.mutation.find.diffs import mutant_diff
from metaeval.mutation.find.targets import find_mutants
root = Path.cwd()
print(json.dumps({m.id: mutant_diff(m, root) for m in find_mutants(sys.argv[1:], root)}))
"""


def metaeval_diffs(
    venv: Path, copy: Path, env: Mapping[str, str], paths: Sequence[str]
) -> dict[str, str]:
    if not paths:
        return {}
    out = run_cmd([str(venv / "bin" / "python"), "-c", _DIFFS, *paths], copy, env).stdout
    diffs: dict[str, str] = json.loads(out)
    return diffs


def read_metaeval(
    stdout: str, diffs: Mapping[str, str] | None = None
) -> tuple[tuple[Mutant, ...], dict[str, object]]:
    report = json.loads(stdout)
    mutants = []
    for m in report["mutants"]:
        function = m["id"].split("::")[1] if m["kind"] == "rewrite" else m["id"]
        diff = tuple(str(m.get("diff") or (diffs or {}).get(m["id"], "")).splitlines())
        mutants.append(Mutant(function, m["status"], diff))
    return tuple(mutants), report


# ---------------------------------------------------------------- mutmut


def write_mutmut_config(copy: Path, target: Target) -> None:
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n" + target.mutmut_config)


def mutmut_cmd(venv: Path, jobs: int) -> list[str]:
    return [str(venv / "bin" / "mutmut"), "run", "--max-children", str(jobs)]


def read_mutmut(venv: Path, copy: Path, env: Mapping[str, str]) -> tuple[Mutant, ...]:
    """Statuses from `mutmut results --all true`; diffs rebuilt from mutmut's own spans files."""
    out = run_cmd([str(venv / "bin" / "mutmut"), "results", "--all", "true"], copy, env).stdout
    mutants = []
    bodies = _mutmut_bodies(copy / "mutants")
    for line in out.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if not sep or "__mutmut_" not in name:
            continue
        module, _, mangled = name.rpartition(".")
        function = _mutmut_function(mangled)
        orig = bodies.get((module, mangled.rsplit("__mutmut_", 1)[0] + "__mutmut_orig"), ())
        diff = difflib.unified_diff(orig, bodies.get((module, mangled), ()), lineterm="")
        mutants.append(Mutant(function, status, tuple(diff)))
    return tuple(mutants)


def _mutmut_function(mangled: str) -> str:
    # x_name__mutmut_3 is a function; xǁClassǁname__mutmut_3 a method.
    base = mangled.rsplit("__mutmut_", 1)[0]
    if base.startswith("xǁ"):
        return ".".join(base[2:].split("ǁ"))
    return base.removeprefix("x_")


def _mutmut_bodies(root: Path) -> dict[tuple[str, str], tuple[str, ...]]:
    """Each mutant's function body (def line left out, it carries the mutant's name)."""
    bodies: dict[tuple[str, str], tuple[str, ...]] = {}
    for spans_file in root.rglob("*.py.spans"):
        source = spans_file.with_suffix("")
        rel = source.relative_to(root).with_suffix("")
        parts = rel.parts[1:] if rel.parts[0] in ("src", "source") else rel.parts
        module = ".".join(parts)
        lines = source.read_text().splitlines()
        for name, (start, end) in json.loads(spans_file.read_text())["spans"].items():
            body = lines[start + 1 : end + 1]
            while body and not body[-1].strip():
                body.pop()
            bodies[(module, name)] = tuple(body)
    return bodies


# ---------------------------------------------------------------- cosmic-ray


def write_cosmic_ray_config(copy: Path, target: Target, venv: Path, urls: Sequence[str]) -> Path:
    modules = ", ".join(json.dumps(m) for m in target.cosmic_ray_modules)
    test = " ".join([str(venv / "bin" / "python"), "-m", "pytest", "-x", "-q", *target.test_args])
    distributor = '[cosmic-ray.distributor]\nname = "local"\n'
    if urls:
        worker_urls = ", ".join(json.dumps(u) for u in urls)
        distributor = (
            '[cosmic-ray.distributor]\nname = "http"\n\n'
            f"[cosmic-ray.distributor.http]\nworker-urls = [{worker_urls}]\n"
        )
    config = copy / "cosmic-ray.toml"
    config.write_text(
        f"[cosmic-ray]\nmodule-path = [{modules}]\ntimeout = 30.0\nexcluded-modules = []\n"
        f"test-command = {json.dumps(test)}\n\n{distributor}"
    )
    return config


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def http_workers(
    venv: Path, copies: Sequence[Path], envs: Sequence[Mapping[str, str]], *,
    own_groups: bool = False,
) -> Iterator[list[str]]:
    """One `cosmic-ray http-worker` per copy: each mutates files on disk, so each needs its own.

    With own_groups (a time-limited run) each worker gets a process group of
    its own and the whole group is killed at the end: a worker stopped in the
    middle of a mutant still has that mutant's pytest running.
    """
    procs: list[subprocess.Popen[bytes]] = []
    urls = []
    try:
        for copy, env in zip(copies, envs, strict=True):
            port = free_port()
            procs.append(subprocess.Popen(
                [str(venv / "bin" / "cosmic-ray"), "http-worker", "--port", str(port)],
                cwd=copy, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=own_groups,
            ))
            urls.append(f"http://127.0.0.1:{port}")
            _wait_for_port(port)
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            if own_groups:
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
                deadline = time.monotonic() + 10
                while group_members(proc.pid) and time.monotonic() < deadline:
                    time.sleep(0.05)


def _wait_for_port(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise BenchError(f"cosmic-ray http-worker on port {port} did not start within 30 s")


def read_cosmic_ray(dump: str) -> tuple[Mutant, ...]:
    """`cosmic-ray dump` lines: [work_item, result]; the status is the test outcome if it ran."""
    mutants = []
    for line in dump.splitlines():
        if not line.strip():
            continue
        item, result = json.loads(line)
        if result is None:
            status = "not run"
        elif result["worker_outcome"] == "normal":
            status = result["test_outcome"]
        else:
            status = result["worker_outcome"]
        diff = tuple(str((result or {}).get("diff") or "").splitlines())
        where = ",".join(f"{m['module_path']}:{m['start_pos'][0]}" for m in item["mutations"])
        mutants.append(Mutant(where, status, diff))
    return tuple(mutants)
