"""Hand-written runs shaped like a real tool-calling benchmark: tasks run several
trials each, checks declared once in a suite, metadata per run, labels apart.

Each task's runs either call the write its task expects (a good run) or call the
one its guard forbids (a near miss); which is decided by a fixed table, so each
test can count what a grader must find without running the grader.
"""

from __future__ import annotations

import json
from pathlib import Path

from metaeval.contract import JsonObject
from tests.builders import config_project


def airline_run(task: int, trial: int, *, bad: bool, checks: bool = False,
                label: str | None = None) -> JsonObject:
    """One run of task ``task``: the agent looks the reservation up, then either books
    the flight the task expects (good) or rewrites the passengers (the near miss)."""
    flight = f"HAT{task:03d}"
    write: JsonObject = (
        {"type": "tool_call", "id": "c2", "tool": "update_reservation_passengers",
         "args": {"reservation_id": f"R{task}"}} if bad else
        {"type": "tool_call", "id": "c2", "tool": "update_reservation_flights",
         "args": {"reservation_id": f"R{task}", "flight": flight}})
    run: JsonObject = {
        "id": f"t{task:02d}-trial{trial}",
        "category": "near_miss/forbidden_write" if bad else "pass/clean",
        "task": {"id": f"airline-{task:02d}", "instruction": "Move my flight.",
                 "criteria": {"expected_flight": {"reservation_id": f"R{task}",
                                                  "flight": flight}}},
        "trajectory": [
            {"type": "message", "role": "user", "content": f"Please move R{task}."},
            {"type": "tool_call", "id": "c1", "tool": "get_reservation_details",
             "args": {"reservation_id": f"R{task}"}},
            {"type": "tool_result", "call_id": "c1", "content": {"status": "ok"}},
            write,
            {"type": "tool_result", "call_id": "c2", "content": {"status": "ok"}},
            {"type": "message", "role": "assistant", "content": "Done."}],
        "metadata": {"trial": trial, "model": "m-large" if trial % 2 else "m-small",
                     "cost": 0.01 * (task + 1), "end_reason": "user_stop"},
    }
    if checks:
        task_obj = run["task"]
        assert isinstance(task_obj, dict)
        task_obj["checks"] = [{"grader": "no_tool_called",
                               "tool": "update_reservation_passengers"}]
    if label is not None:
        run["label"] = {"verdict": label}
    return run


def is_bad(task: int, trial: int) -> bool:
    """Which runs are near misses: every trial of every fifth task, and the last
    trial of every third (so trials of one task are alike, as real trials are)."""
    return task % 5 == 0 or (task % 3 == 0 and trial == 3)


def labelled_airline_project(root: Path, tasks: int, trials: int) -> None:
    """``airline_project`` with each run labelled by people as the table says, overall
    and for each of the suite's two checks (a near miss breaks both)."""
    runs = airline_project(root, tasks, trials)
    for i, run in enumerate(runs):
        verdict = "fail" if is_bad(*divmod(i, trials)) else "pass"
        run["label"] = {"verdict": verdict, "criteria": {
            "never_update_passengers": verdict, "flight_booked": verdict}}
    (root / "runs" / "airline.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))


def write_runs(path: Path, tasks: int, trials: int, **kwargs: object) -> list[JsonObject]:
    runs = [airline_run(t, k, bad=is_bad(t, k), **kwargs)  # type: ignore[arg-type]
            for t in range(tasks) for k in range(trials)]
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    return runs


SUITE = """
[[tool.metaeval.meta_eval.suite]]
name = "never_update_passengers"
grader = "no_tool_called"
params = { tool = "update_reservation_passengers" }

[[tool.metaeval.meta_eval.suite]]
name = "flight_booked"
grader = "tool_called"
params = { tool = "update_reservation_flights" }
params_from = { args = "task.criteria.expected_flight" }
"""


def airline_project(root: Path, tasks: int, trials: int, settings: str = "",
                    suite: str = SUITE) -> list[JsonObject]:
    """A project whose runs (no labels in their lines) are under ``runs/`` and whose
    checks are declared once in its pyproject.toml."""
    config_project(root, "[tool.metaeval]\nmeta_sets = ['runs']\n"
                         f"[tool.metaeval.meta_eval]\nresamples = 50\n{settings}{suite}")
    (root / "runs").mkdir()
    return write_runs(root / "runs" / "airline.jsonl", tasks, trials)
