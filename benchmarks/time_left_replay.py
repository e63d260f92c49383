"""`metaeval mutate`'s time left, replayed offline over recorded runs.

A recording (``time_left_error.py --record``, written by ``time_left_recorder.py``)
holds what a real run's estimate was given: each mutant's selected tests, every
test's baseline seconds, then each result as it came, stamped with the clock.
Here those results are fed again, in their order, to this checkout's estimator
(``metaeval.mutation.run.time_left``) on a fake clock set to each result's time,
and each estimate is set against the time that was really left (to the last
result), as ``time_left_error.py`` does with the live line: the error,
(estimate - actual) / actual, from the halfway point of the mutants' time on,
estimates with less than ``--floor`` seconds left counted apart. ``--against
REV`` replays the estimator as it was at a git revision too, beside it.

    python3 benchmarks/time_left_replay.py benchmarks/.work/*.recording.json [--against REV]
    python3 benchmarks/time_left_replay.py run.recording.json --steps   # every estimate

Exit 0 when every recording's median error from halfway is within 25%.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import types
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from metaeval.mutation.coverage import Selection  # noqa: E402
from metaeval.mutation.model import MutantKind, MutantResult, Status  # noqa: E402
from metaeval.mutation.run import time_left  # noqa: E402

BOUND = 0.25
MODULE = "metaeval/mutation/run/time_left.py"


@dataclass(frozen=True, slots=True)
class Step:
    """One estimate of a replay: when (seconds from the first result), what it said,
    what was really left."""

    at: float
    shown: float | None
    actual: float

    @property
    def error(self) -> float:
        return ((self.shown or 0.0) - self.actual) / self.actual


class _Recorded:
    """The selections a recording kept, as ``Coverage.select`` gave them."""

    def __init__(self, plan: dict[str, dict[str, Any]]) -> None:
        self.plan = plan

    def select(self, mutant: Any) -> Selection:
        kept = self.plan[mutant.id]
        tests = None if kept["tests"] is None else tuple(kept["tests"])
        return Selection(tests, kept["reached"], tuple(kept["first"]))


def estimator_at(rev: str) -> types.ModuleType:
    """``time_left`` as it was at git revision ``rev`` of this checkout."""
    source = subprocess.run(["git", "show", f"{rev}:{MODULE}"], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(f"time_left_{rev}", f.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def expected_for(recording: dict[str, Any], estimator: types.ModuleType) -> dict[str, Any]:
    """What the estimator expects of each recorded mutant, from its recorded selection."""
    plan = recording["plan"]
    # Recordings before "patch" was kept: a rewrite mutant's id is path::qualname::...
    mutants = [types.SimpleNamespace(id=name, kind=MutantKind.PATCH if kept.get(
        "patch", "::" not in name) else MutantKind.REWRITE) for name, kept in plan.items()]
    costs: dict[str, Any] = estimator.expected_costs(
        mutants, _Recorded(plan), recording["durations"], recording["always"])
    return costs


def replay(recording: dict[str, Any], estimator: types.ModuleType) -> list[Step]:
    """Every estimate the estimator gives, fed the recorded results in order."""
    costs = expected_for(recording, estimator)
    now = [recording["began"]]
    left = estimator.TimeLeft(costs, recording["jobs"], clock=lambda: now[0])
    results = recording["results"]
    end = results[-1]["at"]
    steps = []
    for kept in results:
        now[0] = kept["at"]
        left.finished(MutantResult(
            types.SimpleNamespace(id=kept["id"]),  # type: ignore[arg-type]
            Status(kept["status"]), tuple(kept["killed_by"]), duration=kept["duration"],
            in_tests=kept["in_tests"], cached=kept["cached"],
            own_process="own" if kept["own_process"] else ""))
        steps.append(Step(kept["at"], left.seconds(), end - kept["at"]))
    return steps


@dataclass(frozen=True, slots=True)
class Summary:
    errors: tuple[float, ...]
    """From halfway, with at least the floor left."""
    under_floor: int

    def line(self) -> str:
        if not self.errors:
            return "no estimate from halfway with the floor left"
        ordered = sorted(abs(e) for e in self.errors)
        return (f"{len(ordered)} estimates ({self.under_floor} under the floor): |error| "
                f"median {statistics.median(ordered):.0%}, 90th percentile "
                f"{ordered[int(0.9 * (len(ordered) - 1))]:.0%}, worst {ordered[-1]:.0%}; "
                f"signed {min(self.errors):+.0%} to {max(self.errors):+.0%}")

    def median(self) -> float:
        return statistics.median(abs(e) for e in self.errors) if self.errors else float("inf")


def summary(steps: Sequence[Step], first: float, floor: float) -> Summary:
    """The errors from halfway between ``first`` (the first result of a mutant that ran)
    and the last result."""
    end = steps[-1].at
    half = first + (end - first) / 2
    late = [s for s in steps if s.at >= half and s.shown is not None]
    return Summary(tuple(s.error for s in late if s.actual >= floor),
                   sum(1 for s in late if s.actual < floor))


def first_run(recording: dict[str, Any]) -> float:
    """When the first mutant that ran finished (as ``time_left_error.py`` counts)."""
    return float(next((r["at"] for r in recording["results"] if r["duration"] > 0),
                      recording["results"][0]["at"]))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("recordings", nargs="+", type=Path)
    p.add_argument("--against", default=None, metavar="REV",
                   help="also replay the estimator as it was at this git revision")
    p.add_argument("--floor", type=float, default=10.0,
                   help="estimates with fewer seconds really left are counted apart (default 10)")
    p.add_argument("--steps", action="store_true", help="print every estimate from halfway")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    estimators = [("this checkout", time_left)]
    if args.against:
        estimators.insert(0, (args.against, estimator_at(args.against)))
    met = True
    for path in args.recordings:
        recording = json.loads(path.read_text(encoding="utf-8"))
        results = recording["results"]
        first = first_run(recording)
        ran = sum(1 for r in results if r["duration"] > 0)
        print(f"{path.name}: {len(results)} results, {ran} ran, {results[-1]['at'] - first:.1f} s "
              f"of mutants, jobs {recording['jobs']}")
        for name, estimator in estimators:
            steps = replay(recording, estimator)
            found = summary(steps, first, args.floor)
            shown = next((s.at for s in steps if s.shown is not None), None)
            since = ("never shown" if shown is None else
                     f"first shown {shown - first:.1f} s in "
                     f"({(shown - first) / (steps[-1].at - first):.0%} of the mutants' time)")
            print(f"  {name}: {since}; {found.line()}")
            if args.steps:
                for s in steps:
                    if s.shown is not None and s.actual > 0 and \
                            s.at >= first + (steps[-1].at - first) / 2:
                        print(f"    {s.at - first:7.1f} s  shown {s.shown:7.1f}  "
                              f"left {s.actual:7.1f}  {s.error:+.0%}")
            if estimator is time_left:
                met = met and found.median() <= BOUND
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
