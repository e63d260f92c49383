"""`metaeval mutate` on itsdangerous: one local run vs `--executor ray` on a local
two-node Ray cluster (issue 18, item 6, the Ray column).

Uses mutation_speed.py's scratch venv and itsdangerous 2.2.0 (set up the same
way; Ray is added to the venv), runs the single local run (`--jobs 2`) and then,
on a cluster it starts on loopback (a head and a second node, one CPU each,
usage statistics off), the Ray run; each `--runs` times, fresh copies, no cache.
Prints, and writes to the scratch dir: statuses (merged must equal single, mutant
for mutant), wall time (median), and CPU time: the local run's processes; the
Ray run's driver (the head's plan and trace included) plus what the cluster's
processes used meanwhile (idle Ray daemons included: that is Ray's overhead).
The cluster's start (seconds, once) and its CPU when idle are printed apart.
Stops the cluster by the ids of its processes in any case.

    python3 benchmarks/bench_ray.py [--runs 3] [--work benchmarks/.work]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import bench_inspect_ai as bi
import bench_tools as bt
import mutation_speed as ms
from bench_report import say

from tests.mutation.ray_cluster import LocalCluster

POLL = 0.1
"""Seconds between two looks at the cluster's processes."""
IDLE = 20.0
"""Seconds the cluster's idle CPU is measured for, before the first run."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=ms.REPO / "benchmarks" / ".work")
    return parser.parse_args(argv)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class ClusterCpu:
    """The CPU seconds a cluster's processes use while it runs: polled, since a job's
    workers end with their driver, their time gone from /proc before a last look."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.before = cluster.cpu_ticks()
        self.latest = dict(self.before)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        while not self.done.wait(POLL):
            self.latest.update(self.cluster.cpu_ticks())

    def stop(self) -> float:
        self.done.set()
        self.thread.join()
        self.latest.update(self.cluster.cpu_ticks())
        used = sum(self.latest.values()) - sum(self.before.values())
        return used / os.sysconf("SC_CLK_TCK")


def timed(cmd: list[str], cwd: Path, env: dict[str, str], cluster: LocalCluster | None
          ) -> tuple[bt.Measured, float, float]:
    """Run ``cmd``: its wall time, the CPU seconds it used (its reaped children's with
    it), and those the cluster used meanwhile."""
    before = _children_cpu()
    sampler = ClusterCpu(cluster) if cluster else None
    measured = bt.run_cmd(cmd, cwd, env, ok=(0, 1))
    on_cluster = sampler.stop() if sampler else 0.0
    return measured, _children_cpu() - before, on_cluster


def statuses(stdout: str) -> dict[str, str]:
    return {m["id"]: m["status"] for m in json.loads(stdout)["mutants"]}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    info = ms.machine()
    say(f"machine: {info['cores']} cores, {info['cpu']}, Python {info['python']}; "
        f"{info['date']}; load average at start {info['load']}")
    venv, its, _ = ms.setup(args.work)
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    bt.run_cmd([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                f"{ms.REPO}[ray]"], args.work, env)
    target = ms.targets(its, its)["itsdangerous"]
    say(f"metaeval at {bi.metaeval_commit(ms.REPO)}")
    runs: dict[str, list[tuple[float, float]]] = {"single": [], "ray": []}
    seen: dict[str, dict[str, str]] = {}
    for run in range(args.runs):
        copy = bt.fresh_copy(target, args.work, "ray-single")
        measured, cpu, _ = timed(bt.metaeval_cmd(venv, target, 2, ["--no-cache"]), copy,
                                 bt.tool_env(venv, copy, target), None)
        runs["single"].append((measured.wall, cpu))
        seen["single"] = statuses(measured.stdout)
        say(f"single run {run + 1}: {measured.wall:.1f}s wall, {cpu:.1f}s CPU")
    # The workers import itsdangerous from their copy's src/, as the local run does
    # from its own (PYTHONPATH, relative to the working directory Ray gives them).
    cluster = LocalCluster(nodes=2, env={"PYTHONPATH": "src"}, bin=venv / "bin")
    idle_rate = 0.0
    started = time.monotonic()
    try:
        cluster.start()
        say(f"cluster of 2 nodes started in {time.monotonic() - started:.1f}s")
        idle = ClusterCpu(cluster)
        time.sleep(IDLE)
        idle_rate = idle.stop() / IDLE
        say(f"the cluster idle: {idle_rate:.3f} CPU seconds a second")
        for run in range(args.runs):
            copy = bt.fresh_copy(target, args.work, "ray-cluster")
            ray_env = {**bt.tool_env(venv, copy, target),
                       **{k: v for k, v in cluster.driver_env.items() if k.startswith("RAY_")}}
            measured, driver, on_cluster = timed(
                bt.metaeval_cmd(venv, target, 2, ["--no-cache", "--executor", "ray",
                                                  "--ray-address", cluster.address]),
                copy, ray_env, cluster)
            runs["ray"].append((measured.wall, driver + on_cluster))
            seen["ray"] = statuses(measured.stdout)
            say(f"ray run {run + 1}: {measured.wall:.1f}s wall, {driver + on_cluster:.1f}s "
                f"CPU ({driver:.1f}s the driver with the head's trace, {on_cluster:.1f}s "
                "the cluster)")
    finally:
        left = cluster.stop()
        if left:
            say(f"warning: cluster processes still running: {sorted(left)}")
    same = seen["single"] == seen["ray"]
    differ = sorted(k for k in seen["single"] if seen["ray"].get(k) != seen["single"][k])
    say(f"\nstatuses: {len(seen['single'])} mutants; ray == single: "
        f"{'PASS' if same else 'FAIL ' + ', '.join(differ[:10])}")
    result: dict[str, object] = {"machine": info, "metaeval_commit": bi.metaeval_commit(ms.REPO),
                                 "runs": runs, "same": same, "idle_cpu_per_second": idle_rate}
    for name, pairs in runs.items():
        wall = statistics.median(w for w, _ in pairs)
        cpu = statistics.median(c for _, c in pairs)
        say(f"{name}: wall median {wall:.1f}s, CPU median {cpu:.1f}s")
        result[name] = {"wall": wall, "cpu": cpu}
    say(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    out = args.work / "results-ray.json"
    out.write_text(json.dumps(result, indent=1))
    say(f"results: {out}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
