"""Side-by-side speed of `metaeval mutate`, mutmut 3.8.1 and cosmic-ray 8.7.0.

Downloads itsdangerous 2.2.0's sdist from the package index, installs it, its
test dependencies, the three tools and this repository's metaeval into a
scratch venv, then runs the tools on the same source files, alternating the
order run by run, and prints for each tool: mutants, statuses, wall time
(median of the runs), mutants per second, and how many times faster metaeval
is. The same for metaeval's own repository. It also checks issue 7's targets
(speed, detection, overhead per mutant, rerun time, memory, fork == subprocess)
and prints PASS or FAIL for each with the numbers.

Everything is written under the scratch directory (default
benchmarks/.work/, git-ignored); the repository's files are only read. The
benchmark never changes a tool's settings to flatter a number: a missed target
is printed as FAIL.

    python3 benchmarks/mutation_speed.py [--runs 3] [--tools metaeval,mutmut,cosmic-ray]
                                         [--target itsdangerous|metaeval|both] [--jobs 2]
                                         [--time-limit SECONDS] [--skip-isolation-check]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_inspect_ai as bi
import bench_tools as bt
from bench_report import (
    Check,
    print_checks,
    say,
    speed_ratio,
    speed_table,
    stopped_note,
    summarize,
)

REPO = Path(__file__).resolve().parent.parent
TOOLS = ("metaeval", "mutmut", "cosmic-ray")
TOOL_PINS = ("pytest", "freezegun", "mutmut==3.8.1", "cosmic-ray==8.7.0")
SDIST = "itsdangerous==2.2.0"
CHOICES = ("itsdangerous", "metaeval", bi.NAME)




def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3, help="timed runs per tool (default 3)")
    p.add_argument("--cosmic-ray-runs", type=int, default=None,
                   help="timed runs of cosmic-ray (default: --runs); it is the slowest")
    p.add_argument("--tools", default=",".join(TOOLS),
                   help="comma-separated, from metaeval,mutmut,cosmic-ray")
    p.add_argument("--target", choices=(*CHOICES, "both", "all"), default="both",
                   help="both: itsdangerous and metaeval (default); all: the three")
    p.add_argument("--jobs", type=int, default=2, help="workers for every tool (default 2)")
    p.add_argument("--work", type=Path, default=REPO / "benchmarks" / ".work",
                   help="scratch directory (default benchmarks/.work, git-ignored)")
    p.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="stop a mutmut or cosmic-ray run after this long and report the "
                        "mutants it finished (default: no limit; metaeval is never stopped)")
    p.add_argument("--skip-isolation-check", action="store_true",
                   help="do not compare --isolation fork with subprocess (on metaeval the "
                        "subprocess run alone takes half an hour)")
    bi.add_arguments(p, REPO)
    args = p.parse_args(argv)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = [t for t in tools if t not in TOOLS]
    if bad or not tools:
        p.error(f"--tools: got {args.tools!r}; expected a comma-separated subset of {TOOLS}")
    if args.runs < 1 or args.jobs < 1:
        p.error("--runs and --jobs must be at least 1")
    if args.time_limit is not None and not args.time_limit > 0:
        p.error(f"--time-limit: got {args.time_limit!r}; expected a number of seconds above 0")
    args.tools = tools
    args.work = args.work.resolve()  # commands run with a copy as their cwd
    args.chosen = {"both": ["itsdangerous", "metaeval"], "all": list(CHOICES)}.get(
        args.target, [args.target])
    if args.cosmic_ray_runs is None:
        args.cosmic_ray_runs = args.runs
    return args


def machine() -> dict[str, str]:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": str(os.cpu_count()),
        "cpu": cpu,
        "python": platform.python_version(),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def setup(work: Path) -> tuple[Path, Path, Path]:
    """Scratch venv with the tools, the itsdangerous sdist, a copy of this repository."""
    work.mkdir(parents=True, exist_ok=True)
    venv = work / "venv"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    if not (venv / "bin" / "python").exists():
        bt.run_cmd([sys.executable, "-m", "venv", str(venv)], work, env)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    bt.run_cmd([*pip, *TOOL_PINS], work, env)
    # Reinstalled every time, so the benchmark measures the metaeval in this checkout.
    bt.run_cmd([*pip, "--force-reinstall", "--no-deps", str(REPO)], work, env)
    bt.run_cmd([*pip, f"{REPO}[dev]"], work, env)
    bt.write_durations_plugin(work)

    dl = work / "dl"
    if not list(dl.glob("itsdangerous-2.2.0.tar.gz")):
        bt.run_cmd([str(venv / "bin" / "pip"), "download", "-q", "--no-binary", ":all:",
                    "--no-deps", SDIST, "-d", str(dl)], work, env)
    its = work / "itsdangerous-2.2.0"
    if not its.exists():
        with tarfile.open(dl / "itsdangerous-2.2.0.tar.gz") as tar:
            tar.extractall(work, filter="data")

    own = work / "metaeval-src"
    shutil.rmtree(own, ignore_errors=True)
    files = bt.run_cmd(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                       REPO, env).stdout.splitlines()
    for rel in files:
        if (REPO / rel).is_file():
            (own / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, own / rel)
    return venv, its, own


def targets(its: Path, own: Path) -> dict[str, bt.Target]:
    return {
        "itsdangerous": bt.Target(
            "itsdangerous", its, ("src/itsdangerous",),
            '[tool.mutmut]\nsource_paths = ["src/itsdangerous"]\n'
            'pytest_add_cli_args_test_selection = ["tests"]\n',
            ("src/itsdangerous/signer.py", "src/itsdangerous/timed.py"),
            ("-p", "no:cacheprovider", "tests"), src_on_path=True,
        ),
        # metaeval's own config: rewrite mutants of metaeval/graders plus the patch
        # mutants in mutants/; mutmut and cosmic-ray get the same graders.
        "metaeval": bt.Target(
            "metaeval", own, (),
            '[tool.mutmut]\nsource_paths = ["metaeval"]\nonly_mutate = ["metaeval/graders/*"]\n'
            'pytest_add_cli_args_test_selection = ["tests"]\n'
            'pytest_add_cli_args = ["--ignore=tests/mutation"]\n'
            # mutmut runs the tests inside its mutants/ copy: the files they read come along.
            'also_copy = ["meta_sets", "mutants", "benchmarks", "README.md", "docs",'
            ' "ARCHITECTURE.md", "CHANGELOG.md"]\n',
            ("metaeval/graders",),
            ("-p", "no:cacheprovider", "--ignore=tests/mutation", "tests"), src_on_path=False,
        ),
    }


def run_tool(tool: str, target: bt.Target, venv: Path, work: Path, run: int,
             jobs: int, time_limit: float | None = None) -> bt.ToolRun:
    """One timed run on a fresh copy; mutmut and cosmic-ray stop at time_limit, metaeval never."""
    copy = bt.fresh_copy(target, work, f"{target.name}-{tool}-{run}")
    env = bt.tool_env(venv, copy, target)
    if tool == "metaeval":
        m = bt.run_cmd(bt.metaeval_cmd(venv, target, jobs), copy, env, ok=(0, 1))
        diffs = bt.metaeval_diffs(venv, copy, env, target.metaeval_paths)
        mutants, report = bt.read_metaeval(m.stdout, diffs)
        return bt.ToolRun(tool, target.name, run, m.wall, mutants, report=report)
    if tool == "mutmut":
        bt.write_mutmut_config(copy, target)
        m = bt.run_cmd(bt.mutmut_cmd(venv, jobs), copy, env, time_limit=time_limit)
        # Stopped or not, `mutmut results` reads what its meta files hold so far.
        return bt.ToolRun(tool, target.name, run, m.wall, bt.read_mutmut(venv, copy, env),
                          stopped_at_limit=m.stopped_at_limit)
    return run_cosmic_ray(target, venv, work, run, jobs, copy, env, time_limit)


def _left(time_limit: float | None, start: float) -> float | None:
    """What is left of the time limit since start (perf_counter); a sliver when none is."""
    if time_limit is None:
        return None
    return max(time_limit - (time.perf_counter() - start), 0.01)


def run_cosmic_ray(target: bt.Target, venv: Path, work: Path, run: int, jobs: int,
                   copy: Path, env: dict[str, str],
                   time_limit: float | None = None) -> bt.ToolRun:
    """init + exec, timed together; the time limit, if any, covers the same span as the wall."""
    cr = str(venv / "bin" / "cosmic-ray")
    session = copy / "session.sqlite"
    if jobs == 1:
        config = bt.write_cosmic_ray_config(copy, target, venv, ())
        start = time.perf_counter()
        init = bt.run_cmd([cr, "init", str(config), str(session)], copy, env,
                          time_limit=time_limit)
        m = bt.run_cmd([cr, "exec", str(config), str(session)], copy, env,
                       time_limit=_left(time_limit, start))
        wall, note = init.wall + m.wall, "local distributor (one at a time)"
        stopped = init.stopped_at_limit or m.stopped_at_limit
    else:
        workers = [bt.fresh_copy(target, work, f"{target.name}-cosmic-ray-{run}-w{i}")
                   for i in range(jobs)]
        start = time.perf_counter()
        with bt.http_workers(venv, workers, [bt.tool_env(venv, w, target) for w in workers],
                             own_groups=time_limit is not None) as u:
            config = bt.write_cosmic_ray_config(copy, target, venv, u)
            init = bt.run_cmd([cr, "init", str(config), str(session)], copy, env,
                              time_limit=_left(time_limit, start))
            m = bt.run_cmd([cr, "exec", str(config), str(session)], copy, env,
                           time_limit=_left(time_limit, start))
        wall, note = time.perf_counter() - start, f"{jobs} HTTP workers on 127.0.0.1"
        stopped = init.stopped_at_limit or m.stopped_at_limit
    if stopped and time_limit is not None:
        wall = time_limit
    # Stopped or not, the session database holds a result for every mutant finished.
    dump = bt.run_cmd([cr, "dump", str(session)], copy, env).stdout
    files = ", ".join(target.cosmic_ray_modules)
    return bt.ToolRun("cosmic-ray", target.name, run, wall, bt.read_cosmic_ray(dump),
                      note=f"{note}; mutates {files} only", stopped_at_limit=stopped)


# ---------------------------------------------------------------- detection


def _changed(diff: Sequence[str]) -> tuple[list[str], list[str]]:
    body = [d for d in diff if not d.startswith(("---", "+++", "@@"))]
    return ([d[1:].strip() for d in body if d.startswith("-")],
            [d[1:].strip() for d in body if d.startswith("+")])


def forged_token(mutants: Sequence[bt.Mutant]) -> list[bt.Mutant]:
    """`except Exception: return False` -> `return True` in Signer.verify_signature."""
    found = []
    for m in mutants:
        if m.function != "Signer.verify_signature":
            continue
        body = [d for d in m.diff if not d.startswith(("---", "+++", "@@"))]
        for i, line in enumerate(body[1:], 1):
            if (line.startswith("-") and line[1:].strip() == "return False"
                    and body[i - 1][1:].strip() == "except Exception:"
                    and any(d.startswith("+") and d[1:].strip() == "return True" for d in body)):
                found.append(m)
                break
    return found


def expiry_boundary(mutants: Sequence[bt.Mutant], before: str, after: str) -> list[bt.Mutant]:
    """Mutants of TimestampSigner.unsign turning `before` into its inclusive `after`."""
    found = []
    for m in mutants:
        if m.function == "TimestampSigner.unsign":
            removed, added = _changed(m.diff)
            if any(before in r for r in removed) and any(after in a for a in added):
                found.append(m)
    return found


def first_line_true(mutants: Sequence[bt.Mutant]) -> list[bt.Mutant]:
    """Signer.verify_signature returning True before it checks anything."""
    found = []
    for m in mutants:
        if m.function == "Signer.verify_signature":
            removed, added = _changed(m.diff)
            if not removed and added == ["return True"]:
                found.append(m)
    return found


SURVIVED = {"Survived", "survived", "NoCoverage", "no tests"}
"""Undetected: a survivor, or no coverage ("a survivor by another name": no test
executes the mutated code; metaeval knows it by line, mutmut by function)."""
KILLED = {"Killed", "killed"}


def verdict(found: Sequence[bt.Mutant], want: set[str]) -> tuple[bool, str]:
    if not found:
        return False, "no such mutant generated"
    ok = all(m.status in want for m in found)
    return ok, ", ".join(sorted(m.status for m in found))


# ---------------------------------------------------------------- output



def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    info = machine()
    say(f"machine: {info['cores']} cores, {info['cpu']}, Python {info['python']}; "
        f"{info['date']}; load average at start {info['load']}")
    say("note: other work on this machine slows every tool; runs alternate so it falls on all.")
    chosen = args.chosen
    own_targets = [n for n in chosen if n != bi.NAME]
    try:
        if own_targets:
            venv, its, own = setup(args.work)
        if bi.NAME in chosen:
            inspect_venv, inspect = bi.setup(args.inspect_ai_source, args.work, REPO,
                                             args.inspect_ai_targets, args.inspect_ai_selection)
    except (bt.BenchError, OSError) as e:
        print(f"setup failed: {(str(e).strip().splitlines() or ['?'])[0]}", file=sys.stderr)
        return 2
    run_args: dict[str, object] = {
        "runs": args.runs, "cosmic_ray_runs": args.cosmic_ray_runs, "tools": args.tools,
        "target": args.target, "jobs": args.jobs,
        "inspect_ai_selection": args.inspect_ai_selection}
    if args.time_limit is not None:
        run_args["time_limit"] = args.time_limit
    results: dict[str, object] = {"machine": info, "metaeval_commit": bi.metaeval_commit(REPO),
                                  "args": run_args}
    say(f"metaeval at {results['metaeval_commit']}")
    failed = False
    for name in own_targets:
        checks, data = bench_target(targets(its, own)[name], venv, args)
        results[name] = data
        failed |= print_checks(f"targets on {name}:", checks)
    if own_targets and "metaeval" in args.tools and not args.skip_isolation_check:
        failed |= print_checks("fork == subprocess:",
                               isolation_checks(own, its, venv, args, own_targets))
    if bi.NAME in chosen:
        say(f"load average before {bi.NAME} {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        say(f"{bi.NAME}: the {args.inspect_ai_selection} test selection "
            f"({bi.SELECTIONS[args.inspect_ai_selection]}), tiktoken's encoding cached for "
            "both tools (TIKTOKEN_CACHE_DIR)")
        checks, data = bi.bench(inspect, inspect_venv, args.work, args.tools, args.runs,
                                args.jobs, args.isolation_check)
        results[bi.NAME] = data
        failed |= print_checks(f"targets on {bi.NAME} (issue 14):", checks)
    say(f"\nload average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    selection = ("-networked" if bi.NAME in chosen and args.inspect_ai_selection == "networked"
                 else "")
    out = args.work / f"results-{args.target}{selection}.json"
    out.write_text(json.dumps(results, indent=1, default=str))
    say(f"results: {out}")
    return 1 if failed else 0


def bench_target(target: bt.Target, venv: Path,
                 args: argparse.Namespace) -> tuple[list[Check], dict[str, object]]:
    say(f"\n== {target.name} ==")
    plain, durations = bt.plain_test_run(target, venv, args.work)
    say(f"plain test run: {len(durations)} tests, {plain.wall:.2f} s wall, "
        f"peak RSS {plain.root_peak_kb / 1024:.0f} MiB")
    runs: dict[str, list[bt.ToolRun]] = {t: [] for t in args.tools}
    for i in range(max(args.runs, args.cosmic_ray_runs)):
        order = args.tools[i % len(args.tools):] + args.tools[:i % len(args.tools)]
        for tool in order:
            limit = args.cosmic_ray_runs if tool == "cosmic-ray" else args.runs
            if i >= limit:
                continue
            # metaeval is what is measured: it always runs to the end.
            limit_s = None if tool == "metaeval" else args.time_limit
            r = run_tool(tool, target, venv, args.work, i, args.jobs, limit_s)
            runs[tool].append(r)
            if r.stopped_at_limit:
                say(f"  run {i + 1} {tool}: stopped at the {limit_s:g} s limit, {r.done} of "
                    f"{len(r.mutants)} mutants done" + (f" ({r.note})" if r.note else ""))
            else:
                say(f"  run {i + 1} {tool}: {len(r.mutants)} mutants in {r.wall:.1f} s"
                    + (f" ({r.note})" if r.note else ""))
    summaries = [summarize(runs[t]) for t in args.tools]
    say("")
    say(speed_table(summaries))
    for s in summaries:
        if s.stopped_runs:
            say(stopped_note(s, args.time_limit))
    for t in args.tools:
        if runs[t][-1].note:
            say(f"{t}: {runs[t][-1].note}")
    data: dict[str, object] = {
        "plain": {"tests": len(durations), "wall": plain.wall, "peak_kb": plain.root_peak_kb},
        "summaries": [s.as_json() for s in summaries],
        "walls": {t: [r.wall for r in rs] for t, rs in runs.items()},
    }
    checks: list[Check] = []
    by_tool = {s.tool: s for s in summaries}
    if "metaeval" in by_tool and "mutmut" in by_tool and target.name == "itsdangerous":
        ratio = speed_ratio(by_tool["metaeval"], by_tool["mutmut"])
        over = (" (mutmut's over the mutants it finished before the time limit)"
                if by_tool["mutmut"].stopped_runs else "")
        checks.append(("speed >= 3x mutmut (mutants/s)", ratio >= 3,
                       f"{ratio:.2f}x ({by_tool['metaeval'].per_second:.2f} vs "
                       f"{by_tool['mutmut'].per_second:.2f} mutants/s){over}"))
    if target.name == "itsdangerous":
        checks += detection_checks(runs)
    if "metaeval" in runs:
        checks += metaeval_checks(target, venv, args, runs["metaeval"][-1], plain, durations,
                                  data)
    return checks, data


def detection_checks(runs: dict[str, list[bt.ToolRun]]) -> list[Check]:
    checks: list[Check] = []
    probes: list[tuple[str, Callable[[Sequence[bt.Mutant]], list[bt.Mutant]], set[str]]] = [
        ("forged-token mutant (verify_signature except -> return True) is undetected",
         forged_token, SURVIVED),
        ("expiry boundary `age > max_age` -> `>=` is undetected",
         lambda ms: expiry_boundary(ms, "age > max_age", "age >= max_age"), SURVIVED),
        ("expiry boundary `age < 0` -> `<= 0` is undetected",
         lambda ms: expiry_boundary(ms, "age < 0", "age <= 0"), SURVIVED),
        ("verify_signature returning True from its first line is killed",
         first_line_true, KILLED),
    ]
    for label, probe, want in probes:
        for tool in ("metaeval", "mutmut"):
            if tool not in runs:
                continue
            found = probe(runs[tool][-1].mutants)
            ok, detail = verdict(found, want)
            # mutmut has no operator that inserts an early return: not a miss of its own.
            shown: bool | None = None if tool == "mutmut" and probe is first_line_true else ok
            last = runs[tool][-1]
            if last.stopped_at_limit and any(m.status in bt.UNFINISHED for m in found):
                # Stopped at the time limit before it got to this mutant: nothing to judge.
                shown, detail = None, f"{detail} (the run was stopped at the time limit)"
            checks.append((f"{tool}: {label}", shown, detail))
    return checks


def metaeval_checks(target: bt.Target, venv: Path, args: argparse.Namespace, last: bt.ToolRun,
                    plain: bt.Measured, durations: dict[str, float],
                    data: dict[str, object]) -> list[Check]:
    checks: list[Check] = []
    copy = args.work / "runs" / f"{target.name}-metaeval-{last.run}"
    env = bt.tool_env(venv, copy, target)
    rerun = bt.run_cmd(bt.metaeval_cmd(venv, target, args.jobs), copy, env, ok=(0, 1))
    same = [(m.function, m.status) for m in bt.read_metaeval(rerun.stdout)[0]] == [
        (m.function, m.status) for m in last.mutants]
    say(f"metaeval rerun with nothing changed: {rerun.wall:.2f} s (same results: {same})")
    checks.append(("rerun with nothing changed < 2 s", rerun.wall < 2 and same,
                   f"{rerun.wall:.2f} s, same results: {same}"))

    reported = last.report.get("mutants")
    ran = [m for m in reported if isinstance(m, dict)
           and m.get("status") in ("Killed", "Survived", "Timeout")] if isinstance(
        reported, list) else []
    timing = last.report.get("timing")
    if ran and isinstance(timing, dict):
        checks += overhead_checks(ran, timing, durations, last.wall, args.jobs, data)
    elif ran:
        checks.append(("overhead per mutant <= 10 ms beyond the selected tests", None,
                       "this metaeval reports no timing"))

    mem_copy = bt.fresh_copy(target, args.work, f"{target.name}-metaeval-memory")
    mem = bt.run_cmd(bt.metaeval_cmd(venv, target, args.jobs), mem_copy,
                     bt.tool_env(venv, mem_copy, target), ok=(0, 1), watch_memory=True)
    ratio = mem.child_peak_kb / plain.root_peak_kb if plain.root_peak_kb else float("inf")
    say(f"peak RSS: plain test run {plain.root_peak_kb / 1024:.0f} MiB; metaeval main "
        f"{mem.root_peak_kb / 1024:.0f} MiB, largest worker {mem.child_peak_kb / 1024:.0f} MiB")
    checks.append(("peak memory per worker <= 2x a plain test run", ratio <= 2,
                   f"{ratio:.2f}x ({mem.child_peak_kb / 1024:.0f} vs "
                   f"{plain.root_peak_kb / 1024:.0f} MiB)"))
    data |= {"rerun_wall": rerun.wall, "memory_kb": {
        "plain": plain.root_peak_kb, "main": mem.root_peak_kb, "worker": mem.child_peak_kb}}
    return checks


def overhead_checks(ran: Sequence[dict[str, object]], timing: dict[str, object],
                    durations: dict[str, float], wall: float, jobs: int,
                    data: dict[str, object]) -> list[Check]:
    """Per-mutant overhead from the runner's own split, with two outside views beside it.

    The runner times each mutant's child and the tests inside it; the
    difference (its `elsewhere_seconds`) is the per-mutant overhead the target
    is about. The all-in figure also spreads the baseline, the collection and
    the start-up over the mutants, and assumes every worker was busy all the
    time. The plain-run figure is what the selected tests took in a plain run
    (an upper bound on what a mutant runs: a killed one stops at its first
    failing test).
    """
    n = len(ran)
    in_tests = float(str(timing.get("in_tests_seconds", 0)))
    elsewhere = float(str(timing.get("elsewhere_seconds", 0)))
    covered = [m.get("covered_by") for m in ran]
    selected = sum(durations.get(str(t), 0.0) for c in covered if isinstance(c, list) for t in c)
    per_mutant = elsewhere / n
    all_in = (wall * jobs - in_tests) / n
    # Of the time elsewhere: the warm process's os.fork calls, and the children's
    # start-up to their first test (swapping code, executing modules again).
    forking = float(str(timing.get("forking_seconds", 0))) / n
    placing = float(str(timing.get("placing_seconds", 0))) / n
    resident = float(str(timing.get("warm_resident_bytes", 0))) / 2**20
    say(f"metaeval overhead: {n} mutants ran; in tests {in_tests:.1f} s, elsewhere "
        f"{elsewhere:.1f} s (runner's split) -> {1000 * per_mutant:.0f} ms a mutant, of it "
        f"{1000 * forking:.1f} ms forking the warm process ({resident:.0f} MiB) and "
        f"{1000 * placing:.1f} ms putting the mutant in place; all-in "
        f"({wall:.1f} s x {jobs} jobs - time in tests) -> {1000 * all_in:.0f} ms a mutant; "
        f"the selected tests take {selected:.1f} s in a plain run; "
        f"{timing.get('reloaded', 0)} mutants had their module executed again in the child, "
        f"{timing.get('deferred', 0)} ran in a pytest process of their own "
        f"({timing.get('deferred_elsewhere_seconds', 0)} s outside tests)")
    data["overhead_ms"] = {"per_mutant": 1000 * per_mutant, "all_in": 1000 * all_in,
                           "forking": 1000 * forking, "placing": 1000 * placing,
                           "warm_mib": resident, "in_tests_s": in_tests,
                           "plain_selected_s": selected}
    return [("overhead per mutant <= 10 ms beyond the selected tests", per_mutant <= 0.010,
             f"{1000 * per_mutant:.0f} ms ({1000 * forking:.0f} ms of it forking a "
             f"{resident:.0f} MiB process; all-in, fixed costs spread: {1000 * all_in:.0f} ms)")]


def isolation_checks(own: Path, its: Path, venv: Path, args: argparse.Namespace,
                     chosen: Sequence[str]) -> list[Check]:
    help_text = bt.run_cmd([str(venv / "bin" / "metaeval"), "mutate", "--help"], own,
                           bt.tool_env(venv, own, targets(own, own)["metaeval"])).stdout
    if "--isolation" not in help_text:
        return [("fork vs subprocess", None, "this metaeval has no --isolation flag")]
    fixture = bt.Target("mutate_project", own / "tests" / "fixtures" / "mutate_project",
                        (), "", (), (), src_on_path=False)
    places = [fixture] + [targets(its, own)[name] for name in chosen]
    checks: list[Check] = []
    for target in places:
        statuses = {}
        for mode in ("subprocess", "fork"):
            copy = bt.fresh_copy(target, args.work, f"{target.name}-isolation-{mode}")
            m = bt.run_cmd(bt.metaeval_cmd(venv, target, args.jobs, ("--isolation", mode)),
                           copy, bt.tool_env(venv, copy, target), ok=(0, 1))
            report = json.loads(m.stdout)
            statuses[mode] = {x["id"]: x["status"] for x in report["mutants"]}
        diff = {k for k in statuses["fork"].keys() | statuses["subprocess"].keys()
                if statuses["fork"].get(k) != statuses["subprocess"].get(k)}
        checks.append((f"{target.name}: every status identical", not diff,
                       f"{len(statuses['fork'])} mutants, {len(diff)} differ"
                       + (f": {sorted(diff)[:5]}" if diff else "")))
    return checks


if __name__ == "__main__":
    sys.exit(main())
