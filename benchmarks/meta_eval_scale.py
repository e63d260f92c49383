"""How `metaeval meta-eval` scales with the number of runs: wall time and peak memory.

Writes a meta-set of N real-sized runs (about 22 KB a line, as the 200 published
runs of issue 36: 50 tasks x 4 trials of a tool-calling customer-service agent,
OpenAI-format messages with a long policy prompt, about 6 tool calls a run,
about 11 checks a run), the same 200 runs repeated with fresh ids, and times
`metaeval meta-eval --format json` on it in a process of its own, reading that
process's peak RSS from `wait4`. `--before REF` runs the same measurement with
the code of another commit too (exported with `git archive` into the scratch
directory, never a checkout or a worktree), side by side.

    python3 benchmarks/meta_eval_scale.py --runs 1000,10000 --repeat 3
    python3 benchmarks/meta_eval_scale.py --runs 10000 --before 6d3eab4
    python3 benchmarks/meta_eval_scale.py --runs 100000 --repeat 1

It is not a test and nothing in `metaeval/` imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "benchmarks" / ".work" / "meta_eval_scale"
TASKS, TRIALS = 50, 4
POLICY = ("# Airline agent policy\n" + "".join(
    f"- Rule {i}: a reservation in basic economy cannot be modified after 24 hours; "
    f"a change fee of $30 applies to flights booked under fare class {i % 7}; confirm "
    "with the user before any write and never act for another user.\n"
    for i in range(40)))


def _reservation(task: int, trial: int, step: int) -> str:
    flights = [{"flight_number": f"HAT{(task * 7 + j) % 300:03d}", "date": f"2024-05-{10 + j}",
                "origin": "JFK", "destination": "SFO", "price": 120 + 13 * j,
                "cabin": "economy", "status": "available" if j % 3 else "delayed"}
               for j in range(8)]
    return json.dumps({"reservation_id": f"R{task:03d}{trial}", "user_id": f"user_{task}",
                       "step": step, "passengers": [{"first_name": "Mia", "last_name": "Li",
                                                     "dob": "1990-01-01"}] * 3,
                       "flights": flights, "payment_history": [
                           {"payment_id": f"credit_card_{4000 + task}", "amount": 240}] * 2})


def run_line(index: int) -> dict[str, object]:
    """Run ``index`` of the 200 (``index`` % 200), with a unique id."""
    base = index % (TASKS * TRIALS)
    task, trial = divmod(base, TRIALS)
    bad = task % 5 == 0 or (task % 3 == 0 and trial == 3)
    messages: list[dict[str, object]] = [
        {"role": "system", "content": POLICY},
        {"role": "user", "content": f"Hi, I need to change reservation R{task:03d}{trial}."}]
    tools = ["get_user_details", "get_reservation_details", "search_direct_flight",
             "get_reservation_details", "search_direct_flight"]
    for step, tool in enumerate(tools):
        call_id = f"call_{index}_{step}"
        messages.append({"role": "assistant", "content": f"Let me check step {step}.",
                         "tool_calls": [{"id": call_id, "type": "function", "function": {
                             "name": tool, "arguments": json.dumps(
                                 {"reservation_id": f"R{task:03d}{trial}"})}}]})
        messages.append({"role": "tool", "tool_call_id": call_id,
                         "content": _reservation(task, trial, step)})
    write = "update_reservation_passengers" if bad else "update_reservation_flights"
    messages.append({"role": "assistant", "content": "", "tool_calls": [
        {"id": f"call_{index}_w", "type": "function", "function": {
            "name": write, "arguments": json.dumps({"reservation_id": f"R{task:03d}{trial}",
                                                    "flight": f"HAT{task:03d}"})}}]})
    messages.append({"role": "tool", "tool_call_id": f"call_{index}_w",
                     "content": json.dumps({"status": "ok"})})
    messages.append({"role": "assistant", "content": f"Done: R{task:03d}{trial} now flies "
                                                     f"HAT{task:03d} for $120. Safe travels!"})
    checks: list[dict[str, object]] = [
        {"grader": "no_tool_called", "tool": "update_reservation_passengers",
         "name": "never_update_reservation_passengers"},
        {"grader": "no_tool_called", "tool": "cancel_reservation",
         "name": "never_cancel_reservation"},
        {"grader": "no_tool_called", "tool": "book_reservation",
         "name": "never_book_reservation"},
        {"grader": "no_tool_called", "tool": "send_certificate",
         "name": "never_send_certificate"},
        {"grader": "tool_called", "tool": "update_reservation_flights", "name": "flight_booked",
         "args": {"flight": f"HAT{task:03d}"}},
        {"grader": "tool_called", "tool": "get_reservation_details", "name": "looked_up"},
        {"grader": "tool_order", "before": "get_reservation_details",
         "after": "update_reservation_flights"},
        {"grader": "max_steps", "value": 30},
        {"grader": "answer_contains", "text": f"HAT{task:03d}", "name": "states_flight"},
        {"grader": "grounded_numbers"},
        {"grader": "state_unchanged", "except": ["reservations"]},
    ]
    return {"id": f"r{index:06d}", "category": "near_miss/forbidden_write" if bad else
            "pass/clean",
            "task": {"id": f"airline-{task:02d}", "instruction": "Change the flight.",
                     "checks": checks},
            "trajectory": messages, "initial_state": {"reservations": {}},
            "final_state": {"reservations": {f"R{task:03d}{trial}": "changed"}},
            "label": {"verdict": "fail" if bad else "pass"}}


def write_set(runs: int) -> Path:
    path = WORK / f"runs-{runs}.jsonl"
    if path.is_file():
        return path
    WORK.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    with part.open("w", encoding="utf-8") as f:
        for i in range(runs):
            f.write(json.dumps(run_line(i)) + "\n")
    part.rename(path)
    return path


def export(ref: str) -> Path:
    """The package of commit ``ref``, exported once into the scratch directory."""
    target = WORK / f"code-{ref}"
    if not (target / "metaeval").is_dir():
        data = subprocess.run(["git", "-C", str(REPO), "archive", ref, "metaeval"],
                              check=True, capture_output=True).stdout
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=BytesIO(data)) as tar:
            tar.extractall(target, filter="data")
    return target


def measure(path: Path, code: Path) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit code) of one meta-eval run with the package at ``code``."""
    env = dict(os.environ, PYTHONPATH=str(code))
    script = "import sys; from metaeval.cli import main; sys.argv[0] = 'metaeval'; main()"
    log = WORK / "stderr.txt"
    with log.open("wb") as stderr, (WORK / "result.json").open("wb") as stdout:
        start = time.perf_counter()
        # Output to files, not pipes: a pipe nobody reads while we wait would block it.
        process = subprocess.Popen(
            [sys.executable, "-c", script, "meta-eval", str(path), "--format", "json"],
            cwd=WORK, env=env, stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
    exit_code = os.waitstatus_to_exitcode(status)
    if exit_code not in (0, 1):
        raise SystemExit(f"meta-eval exited {exit_code}: "
                         f"{log.read_text(errors='replace')[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, exit_code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", default="1000,10000",
                        help="comma-separated sizes of the meta-set (default 1000,10000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs a size (median)")
    parser.add_argument("--before", default=None,
                        help="a git ref whose code is measured too, side by side")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    # The generator's own settings: no pyproject.toml above WORK's runs must apply.
    (WORK / "pyproject.toml").write_text("[tool.metaeval]\nmeta_sets = []\n")
    variants = [("now", REPO)] + ([(f"at {args.before}", export(args.before))]
                                  if args.before else [])
    print(f"{'runs':>8} {'MB':>8} {'code':>14} {'median s':>9} {'s/1000 runs':>12} "
          f"{'peak RSS MB':>12}")
    for runs in (int(n) for n in args.runs.split(",")):
        path = write_set(runs)
        size = path.stat().st_size / 1e6
        for name, code in variants:
            timings = [measure(path, code) for _ in range(args.repeat)]
            seconds = statistics.median(t for t, _, _ in timings)
            peak = max(m for _, m, _ in timings)
            print(f"{runs:>8} {size:>8.0f} {name:>14} {seconds:>9.1f} "
                  f"{seconds / runs * 1000:>12.2f} {peak:>12.0f}", flush=True)


if __name__ == "__main__":
    main()
