"""`metaeval mutate --shard k/n` against one run: equal statuses, balance, overhead.

On itsdangerous 2.2.0 and on this repository (set up as mutation_speed.py does:
a scratch venv, the sdist, a copy of this checkout), each run of the benchmark:

1. one run of every mutant (`--jobs 1 --no-cache --write-timings`), timed;
2. `--trace-only --write-coverage` once, the baseline every shard shares;
3. for n in 2 and 4, the n shards one at a time, each a separate process with
   one job in a fresh copy (as CI jobs would be), reading the coverage file:
   balanced by time (`--timings` from step 1's file) and by count (no cost data:
   a stable hash of each mutant id); then `--merge`, whose statuses must equal
   step 1's, mutant for mutant.

It prints each shard's wall time, the slowest shard over the mean shard, the
bound of issue 18 (the slowest time-balanced shard within max(1.15 x the mean,
the longest single mutant)), and the CPU time of the trace plus every shard
against the single run's (the cost of sharding); medians over --runs. Then a
simulation from the single run's per-mutant seconds (and from the 609 measured
on inspect_ai, tests/data/mutant_durations.json): the predicted slowest of 8,
32 and 128 shares for longest-processing-time-first and for count-balanced
shares, against the ideal (total / n). CPU time is that of the waited-for
processes (RUSAGE_CHILDREN), the warm runner's forked children included.

    python3 benchmarks/bench_shards.py [--runs 3] [--target itsdangerous|metaeval|both]
                                       [--shards 2,4] [--balance time,count]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_tools as bt
import mutation_speed as ms
from bench_report import Check, print_checks, say, table

from metaeval.mutation.run.shards import assign, hashed_costs, makespans

REPO = Path(__file__).resolve().parent.parent
SIMULATED = (8, 32, 128)
INSPECT_AI = REPO / "tests" / "data" / "mutant_durations.json"
BALANCES = ("time", "count")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3, help="runs of the whole set (default 3)")
    p.add_argument("--target", choices=("itsdangerous", "metaeval", "both"),
                   default="itsdangerous")
    p.add_argument("--shards", default="2,4", help="shard counts, comma-separated (default 2,4)")
    p.add_argument("--balance", default=",".join(BALANCES),
                   help="time (--timings), count (no cost data), or both (default)")
    p.add_argument("--work", type=Path, default=REPO / "benchmarks" / ".work",
                   help="scratch directory (default benchmarks/.work, git-ignored)")
    args = p.parse_args(argv)
    try:
        args.shards = [int(n) for n in args.shards.split(",")]
    except ValueError:
        p.error(f"--shards: got {args.shards!r}; expected numbers, e.g. 2,4")
    args.balance = [b.strip() for b in args.balance.split(",") if b.strip()]
    if not args.balance or set(args.balance) - set(BALANCES):
        p.error(f"--balance: got {args.balance!r}; expected time, count or both")
    if args.runs < 1 or any(n < 2 for n in args.shards):
        p.error("--runs must be at least 1 and every shard count at least 2")
    args.work = args.work.resolve()
    args.chosen = ["itsdangerous", "metaeval"] if args.target == "both" else [args.target]
    return args


@dataclass(frozen=True, slots=True)
class Timed:
    """A finished metaeval command: its wall and CPU seconds and its output."""

    wall: float
    cpu: float
    stdout: str
    stderr: str


def timed(cmd: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Timed:
    """Run one command; its CPU time is what its waited-for process tree used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = bt.run_cmd(cmd, cwd, env, ok=(0, 1))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(m.wall, cpu, m.stdout, m.stderr)


def statuses(stdout: str) -> dict[str, str]:
    """Status by mutant id, from `--format json`."""
    return {m["id"]: m["status"] for m in json.loads(stdout)["mutants"]}


def spread(walls: Sequence[float]) -> float:
    """The slowest shard over the mean shard (1.0: perfectly even)."""
    return max(walls) / statistics.fmean(walls)


@dataclass(frozen=True, slots=True)
class Sharded:
    """One set of n shards and its merge, in one run of the benchmark."""

    n: int
    balance: str
    walls: tuple[float, ...]
    cpu: float
    """CPU seconds of every shard together (the trace not included)."""
    same: bool
    """The merge's statuses equal the single run's, mutant for mutant."""
    differing: tuple[str, ...]
    traced: tuple[int, ...]
    """Tests each shard's baseline traced again (0: the coverage file held them all)."""
    missing_named: bool
    """The merge without the last shard's output exits 3 naming it."""


def run_shards(target: bt.Target, venv: Path, work: Path, run: int, n: int, balance: str,
               coverage: Path, timings: Path, want: Mapping[str, str]) -> Sharded:
    out = work / "shards" / f"{target.name}-{run}-{n}-{balance}"
    walls, cpu, traced = [], 0.0, []
    extra = ["--timings", str(timings)] if balance == "time" else []
    for k in range(1, n + 1):
        copy = bt.fresh_copy(target, work, f"{target.name}-shard-{k}")
        env = bt.tool_env(venv, copy, target)
        done = timed(bt.metaeval_cmd(venv, target, 1, [
            "--no-cache", "--shard", f"{k}/{n}", "--coverage", str(coverage),
            "--shard-out", str(out / f"s{k}"), *extra]), copy, env)
        walls.append(done.wall)
        cpu += done.cpu
        traced.append(_traced(done.stdout))
    copy = bt.fresh_copy(target, work, f"{target.name}-merge")
    env = bt.tool_env(venv, copy, target)
    merged = statuses(bt.run_cmd(bt.metaeval_cmd(venv, target, 1, ["--merge", str(out)]),
                                 copy, env, ok=(0, 1)).stdout)
    differing = tuple(sorted(i for i in {*want, *merged} if want.get(i) != merged.get(i)))
    return Sharded(n, balance, tuple(walls), cpu, not differing, differing, tuple(traced),
                   missing_named(target, venv, work, out, n))


def missing_named(target: bt.Target, venv: Path, work: Path, out: Path, n: int) -> bool:
    """Whether the merge, with shard n's output deleted, exits 3 naming that shard."""
    partial = out.with_name(out.name + "-partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(out, partial, ignore=shutil.ignore_patterns(f"s{n}"))
    copy = bt.fresh_copy(target, work, f"{target.name}-merge")
    m = bt.run_cmd(bt.metaeval_cmd(venv, target, 1, ["--merge", str(partial)]), copy,
                   bt.tool_env(venv, copy, target), ok=(0, 1, 3))
    return m.returncode == 3 and f"shard {n}/{n} is missing" in m.stderr


def _traced(stdout: str) -> int:
    """Tests a shard's baseline traced (0 with the coverage file); 0 when it ran nothing."""
    try:
        timing = json.loads(stdout).get("timing") or {}
    except ValueError:  # a shard with no mutant prints a line, not JSON
        return 0
    return int(timing.get("traced_tests", 0))


@dataclass(frozen=True, slots=True)
class Run:
    single_wall: float
    single_cpu: float
    trace_wall: float
    trace_cpu: float
    longest: float
    """The longest single mutant of the single run, in seconds."""
    costs: dict[str, float]
    sharded: tuple[Sharded, ...]


def bench_once(target: bt.Target, venv: Path, work: Path, run: int,
               args: argparse.Namespace) -> Run:
    copy = bt.fresh_copy(target, work, f"{target.name}-single")
    env = bt.tool_env(venv, copy, target)
    timings = work / "shards" / f"{target.name}-{run}-timings.json"
    timings.parent.mkdir(parents=True, exist_ok=True)
    single = timed(bt.metaeval_cmd(venv, target, 1, ["--no-cache", "--write-timings",
                                                     str(timings)]), copy, env)
    want = statuses(single.stdout)
    costs = {k: float(v) for k, v in json.loads(timings.read_text()).items()}
    copy = bt.fresh_copy(target, work, f"{target.name}-trace")
    env = bt.tool_env(venv, copy, target)
    coverage = work / "shards" / f"{target.name}-{run}-coverage.json"
    trace = timed(bt.metaeval_cmd(venv, target, 1, ["--no-cache", "--trace-only",
                                                    "--write-coverage", str(coverage)]),
                  copy, env)
    say(f"  run {run}: single {single.wall:.1f} s, {single.cpu:.1f} s CPU ({len(want)} "
        f"mutants, the longest {max(costs.values()):.2f} s), trace {trace.wall:.1f} s, "
        f"{trace.cpu:.1f} s CPU: {trace.stderr.strip().splitlines()[-1]}")
    sharded = []
    for n in args.shards:
        for balance in args.balance:
            s = run_shards(target, venv, work, run, n, balance, coverage, timings, want)
            say(f"    {n} shards by {balance}: " + ", ".join(f"{w:.1f}" for w in s.walls)
                + f" s; slowest/mean {spread(s.walls):.2f}; CPU {s.cpu:.1f} s; tests traced again "
                + f"{sum(s.traced)}; merged == single: {s.same}; without shard {n}: "
                + ("exit 3 naming it" if s.missing_named else "NOT exit 3 naming it")
                + (f" (differ: {', '.join(s.differing[:5])})" if s.differing else ""))
            sharded.append(s)
    return Run(single.wall, single.cpu, trace.wall, trace.cpu, max(costs.values()), costs,
               tuple(sharded))


def report(name: str, runs: Sequence[Run]) -> list[Check]:
    """The medians over the runs, and the checks of issue 18."""
    med = statistics.median
    single_wall, single_cpu = med(r.single_wall for r in runs), med(r.single_cpu for r in runs)
    trace_cpu = med(r.trace_cpu for r in runs)
    say(f"\n{name}: single run {single_wall:.1f} s wall, {single_cpu:.1f} s CPU; trace-only "
        f"{med(r.trace_wall for r in runs):.1f} s wall, {trace_cpu:.1f} s CPU "
        f"(medians of {len(runs)})")
    rows = [["shards", "balance", "shard walls (s, median run)", "slowest", "mean",
             "slowest/mean", "bound", "CPU trace+shards", "vs single", "merged == single"]]
    checks: list[Check] = []
    for i, first in enumerate(runs[0].sharded):
        sets = [r.sharded[i] for r in runs]
        slowest, mean = med(max(s.walls) for s in sets), med(statistics.fmean(s.walls)
                                                             for s in sets)
        ratio = med(spread(s.walls) for s in sets)
        bound = max(1.15 * mean, med(r.longest for r in runs))
        cpu = trace_cpu + med(s.cpu for s in sets)
        middle = sorted(sets, key=lambda s: max(s.walls))[len(sets) // 2]
        same = all(s.same for s in sets)
        rows.append([str(first.n), first.balance, ", ".join(f"{w:.1f}" for w in middle.walls),
                     f"{slowest:.1f}", f"{mean:.1f}", f"{ratio:.2f}", f"{bound:.1f}",
                     f"{cpu:.1f}", f"{cpu / single_cpu:.2f}x", f"{sum(s.same for s in sets)}"
                     f"/{len(sets)}"])
        checks.append((f"{name}: {first.n} shards by {first.balance} merge to the single run",
                       same, f"{sum(s.same for s in sets)} of {len(sets)} runs equal, status "
                             "for status"))
        checks.append((f"{name}: {first.n} shards by {first.balance}, the last one's output "
                       "deleted: the merge exits 3 naming it",
                       all(s.missing_named for s in sets),
                       f"{sum(s.missing_named for s in sets)} of {len(sets)} runs"))
        if first.balance == "time":
            checks.append((f"{name}: {first.n} time-balanced shards: slowest within "
                           "max(1.15 x mean, longest mutant)", slowest <= bound,
                           f"slowest {slowest:.1f} s, mean {mean:.1f} s, bound {bound:.1f} s"))
    say(table(rows))
    return checks


def simulate(name: str, costs: Mapping[str, float]) -> list[Check]:
    """Predicted makespans of LPT and of count-balanced shares (the stable-hash split
    metaeval makes without cost data) against the ideal, from measured seconds."""
    total, longest = sum(costs.values()), max(costs.values())
    say(f"\nsimulation, {name}: {len(costs)} mutants, {total:.1f} s in all, the longest "
        f"{longest:.2f} s")
    rows = [["shards", "ideal (total/n)", "LPT slowest", "LPT/ideal", "count slowest",
             "count/ideal", "bound max(1.15 x mean, longest)"]]
    checks: list[Check] = []
    for n in SIMULATED:
        ideal = total / n
        lpt = max(makespans(costs, assign(costs, n)))
        by_count = max(makespans(costs, assign(hashed_costs(list(costs)), n)))
        bound = max(1.15 * ideal, longest)
        rows.append([str(n), f"{ideal:.2f}", f"{lpt:.2f}", f"{lpt / ideal:.2f}",
                     f"{by_count:.2f}", f"{by_count / ideal:.2f}", f"{bound:.2f}"])
        if n == 32:
            checks.append((f"simulation {name}: LPT at 32 shards within the bound",
                           lpt <= bound, f"{lpt:.2f} s <= {bound:.2f} s"))
    say(table(rows))
    return checks


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    info = ms.machine()
    say(f"bench_shards: {info['date']}, {info['cores']} cores ({info['cpu']}), Python "
        f"{info['python']}, load {info['load']}; metaeval at {ms.bi.metaeval_commit(REPO)}")
    venv, its, own = ms.setup(args.work)
    known = ms.targets(its, own)
    checks: list[Check] = []
    for name in args.chosen:
        say(f"\n== {name}: {args.runs} runs, shards {args.shards}, balanced by "
            f"{' and '.join(args.balance)}; one job per process, one process at a time")
        runs = [bench_once(known[name], venv, args.work, run, args) for run in
                range(1, args.runs + 1)]
        checks += report(name, runs)
        checks += simulate(f"{name} (run 1's --write-timings)", runs[0].costs)
    checks += simulate("inspect_ai (tests/data/mutant_durations.json)",
                       json.loads(INSPECT_AI.read_text()))
    say(f"\nload at the end: {ms.machine()['load']}")
    return 1 if print_checks("issue 18 targets", checks) else 0


if __name__ == "__main__":
    sys.exit(main())
