"""How far `metaeval mutate`'s time left is from the time that was actually left.

Runs `metaeval mutate` as a user does, with its stderr on a pseudo-terminal so
the progress line is redrawn as each mutant finishes, and stamps each redraw
with the clock: `mutants 225/633 (...) ~1m40s left`. When the run ends, each
shown estimate is set against the time that was really left (from its redraw to
the last `mutants N/N` line), and the error, (shown - actual) / actual, is
printed from the halfway point of the mutants' time on, as issue 51 asks: within
25% from there. Estimates with less than `--floor` seconds really left are
counted apart: the line shows whole seconds and the last mutant alone can be a
few seconds, so a few seconds' slip there is not what the bound is about.

Targets: this repository (its own `[tool.metaeval.mutate]`, a fresh copy of
its files), inspect_ai's scorers (the shared snapshot, offline selection,
with the shared tiktoken cache; set up as `bench_inspect_ai.py` does) and, held
out, jsonschema 4.26.0 (set up as `in_tests_time.py` does). Each run
gets a fresh copy, so no result comes from a cache.

    python3 benchmarks/time_left_error.py --target inspect_ai [--runs 1] [--jobs 2]
    python3 benchmarks/time_left_error.py --target metaeval
    python3 benchmarks/time_left_error.py --target jsonschema --floor 3

`--record` also writes down what each run's estimate was given and each result
(`time_left_recorder.py`), for `time_left_replay.py` to replay offline.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_inspect_ai as bi
import bench_tools as bt
import in_tests_time as jt
from bench_report import say

REPO = Path(__file__).resolve().parent.parent
LINE = re.compile(r"mutants (\d+)/(\d+)(?: \([^)]*\))?"
                  r"(?: ~(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)? left)?")
BOUND = 0.25


@dataclass(frozen=True, slots=True)
class Shown:
    """One redraw of the progress line: when, how many done of how many, the time left shown."""

    at: float
    done: int
    total: int
    left: float | None
    settled: int = 0
    """Of ``done``, the ignored ones: settled before the baseline, at the start."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", choices=("inspect_ai", "metaeval", "jsonschema"),
                   default="inspect_ai")
    p.add_argument("--runs", type=int, default=1, help="runs (default 1)")
    p.add_argument("--jobs", type=int, default=2, help="--jobs of every run (default 2)")
    p.add_argument("--floor", type=float, default=10.0,
                   help="estimates with fewer seconds really left are counted apart (default 10)")
    p.add_argument("--work", type=Path, default=REPO / "benchmarks" / ".work",
                   help="scratch directory (default benchmarks/.work, git-ignored)")
    p.add_argument("--record", action="store_true",
                   help="also write down, per run, each mutant's selected tests and result as "
                        "the estimate saw them (time_left_recorder.py), for time_left_replay.py")
    p.add_argument("--venv", type=Path, default=None,
                   help="metaeval target: a venv holding this checkout's metaeval with its dev "
                        "extras (default: the one sys.executable runs in)")
    bi.add_arguments(p, REPO)
    args = p.parse_args(argv)
    if args.runs < 1 or args.jobs < 1 or args.floor < 0:
        p.error("--runs and --jobs must be at least 1, --floor at least 0")
    args.work = args.work.resolve()
    return args


def parse_line(text: str, at: float) -> Shown | None:
    """A redraw of the progress line, or None for any other text (a step line, a note)."""
    match = LINE.search(text)
    if match is None:
        return None
    done, total, hours, minutes, seconds = match.groups()
    left = None
    if "left" in text:
        left = float(int(hours or 0) * 3600 + int(minutes or 0) * 60 + int(seconds or 0))
    ignored = re.search(r"ignored (\d+)", text)
    return Shown(at, int(done), int(total), left, int(ignored.group(1)) if ignored else 0)


def watch(cmd: Sequence[str], cwd: Path, env: dict[str, str]
          ) -> tuple[list[Shown], str, int, float]:
    """Run cmd with its stderr on a pseudo-terminal: every progress redraw, stamped
    from its start; its stdout; its exit code; its wall seconds."""
    began = time.monotonic()
    main, side = pty.openpty()
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=side, stdin=subprocess.DEVNULL)
    os.close(side)
    shown: list[Shown] = []
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()  # type: ignore[union-attr]
                                                        ), daemon=True)
    reader.start()
    pending = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the other side closed: the process is gone
            break
        if not chunk:
            break
        now = time.monotonic() - began
        pending += chunk
        *pieces, pending = re.split(rb"[\r\n]", pending)
        for piece in pieces:
            line = parse_line(piece.decode("utf-8", "replace"), now)
            if line is not None:
                shown.append(line)
    os.close(main)
    code = proc.wait()
    reader.join()
    return shown, b"".join(out).decode("utf-8", "replace"), code, time.monotonic() - began


@dataclass(frozen=True, slots=True)
class Errors:
    """The shown estimates' errors against the time really left, from the halfway point."""

    first_shown: float | None
    """Seconds after the first mutant line when an estimate was first shown."""
    mutants_seconds: float
    errors: tuple[float, ...]
    """(shown - actual) / actual, for each estimate from halfway with at least the floor left."""
    under_floor: int

    def within(self) -> float:
        return sum(abs(e) <= BOUND for e in self.errors) / len(self.errors) if self.errors else 0.0


def errors(shown: Sequence[Shown], floor: float) -> Errors:
    """Each estimate shown from the halfway point of the mutants' time, against the time left."""
    # From the first mutant that ran: ignored ones are counted before the baseline.
    lines = [s for s in shown if s.done > s.settled]
    if not lines:
        raise bt.BenchError("no progress line counted a mutant that ran")
    start, end = lines[0].at, lines[-1].at
    half = start + (end - start) / 2
    estimates = [s for s in lines if s.left is not None]
    kept = [s for s in estimates if s.at >= half and end - s.at >= floor]
    under = sum(1 for s in estimates if s.at >= half and end - s.at < floor)
    return Errors(estimates[0].at - start if estimates else None, end - start,
                  tuple(((s.left or 0.0) - (end - s.at)) / (end - s.at) for s in kept), under)


def target_for(args: argparse.Namespace) -> tuple[Path, bt.Target]:
    if args.target == "inspect_ai":
        return bi.setup(args.inspect_ai_source, args.work, REPO, args.inspect_ai_targets,
                        args.inspect_ai_selection)
    if args.target == "jsonschema":  # held out: set up as in_tests_time.py does
        args.work.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        pristine, dl = args.work / jt.NAME, args.work / "dl"
        if not list(dl.glob(f"{jt.NAME}.tar.gz")):
            bt.run_cmd([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:",
                        "--no-deps", jt.SDIST, "-d", str(dl)], args.work, env)
        if not pristine.exists():
            with tarfile.open(dl / f"{jt.NAME}.tar.gz") as tar:
                tar.extractall(args.work, filter="data")
            with (pristine / "pyproject.toml").open("a", encoding="utf-8") as f:
                f.write(jt.CONFIG)
            # The deselection by the test's name too: under a --work inside a project
            # with a pytest config, pytest's rootdir is that project's.
            (pristine / "conftest.py").write_text(jt.CONFTEST, encoding="utf-8")
        return (jt.venv_with(args.work, "after", REPO, env, sys.executable),
                bt.Target("jsonschema", pristine, jt.TARGETS, "", (), (), src_on_path=False))
    own = args.work / "metaeval-src-time-left"
    shutil.rmtree(own, ignore_errors=True)
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, check=True, capture_output=True, text=True).stdout.split("\n")
    for rel in filter(None, files):
        if (REPO / rel).is_file():
            (own / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, own / rel)
    venv = (args.venv or Path(sys.executable).parent.parent).resolve()
    return venv, bt.Target("metaeval", own, (), "", (), (), src_on_path=False)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    venv, target = target_for(args)
    found = []
    for run in range(1, args.runs + 1):
        copy = bt.fresh_copy(target, args.work, f"{target.name}-time-left-{run}")
        env = bt.tool_env(venv, copy, target)
        env["COLUMNS"] = "400"  # one line, never wrapped
        load = os.getloadavg()[0]
        cmd = bt.metaeval_cmd(venv, target, args.jobs)
        if args.record:
            recorded = args.work / f"time-left-{target.name}-{run}.recording.json"
            cmd[:1] = [str(venv / "bin" / "python"), str(REPO / "benchmarks" /
                                                         "time_left_recorder.py"), str(recorded)]
        shown, out, code, wall = watch(cmd, copy, env)
        if code not in (0, 1):
            raise bt.BenchError(f"metaeval mutate exited {code}\n{out[-2000:]}")
        report = json.loads(out)
        e = errors(shown, args.floor)
        first = "never" if e.first_shown is None else f"{e.first_shown:.1f} s in"
        say(f"run {run}: {shown[-1].total} mutants; the command {wall:.1f} s, its first "
            f"result at {next(s.at for s in shown if s.done > s.settled):.1f} s, then "
            f"{e.mutants_seconds:.1f} s of mutants "
            f"(load {load:.1f} before, {os.getloadavg()[0]:.1f} after); "
            f"time left first shown {first}")
        if e.errors:
            ordered = sorted(abs(x) for x in e.errors)
            say(f"  from halfway, {len(e.errors)} estimates with {args.floor:g} s or more left "
                f"({e.under_floor} with less): |error| median {statistics.median(ordered):.0%}, "
                f"90th percentile {ordered[int(0.9 * (len(ordered) - 1))]:.0%}, "
                f"max {ordered[-1]:.0%}; within {BOUND:.0%}: {e.within():.0%}; "
                f"signed: min {min(e.errors):+.0%}, max {max(e.errors):+.0%}")
        found.append({"run": run, "load_before": load, "wall": wall,
                      "mutants_seconds": e.mutants_seconds,
                      "first_shown": e.first_shown, "errors": e.errors,
                      "under_floor": e.under_floor,
                      "statuses": report.get("counts", {}),
                      "shown": [(s.at, s.done, s.total, s.left) for s in shown],
                      "timing": report.get("timing", {})})
    (args.work / f"time-left-{target.name}.json").write_text(json.dumps(found, indent=1))
    say(f"written: {args.work / f'time-left-{target.name}.json'}")
    return 0 if all(r["errors"] and all(abs(x) <= BOUND for x in r["errors"])
                    for r in found) else 1


if __name__ == "__main__":
    sys.exit(main())
