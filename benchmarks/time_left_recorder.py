"""`metaeval mutate` with what its time left is estimated from written down.

Run with the Python of the venv that holds metaeval, in place of its `metaeval`
command; the first argument is the file to write, the rest are metaeval's:

    python benchmarks/time_left_recorder.py run.json mutate src --jobs 2

The run itself is unchanged: its estimate (``mutation.run.time_left.TimeLeft``)
is wrapped so that, when the baseline is in, each mutant's selected tests (with
the tests that ran its code, run first, for a function that also ran at import),
every test's baseline seconds and the tests every mutant runs too are kept, then
each result as it comes, stamped with the estimate's clock. What is written is
what ``time_left_replay.py`` feeds to the estimator again, offline.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from metaeval.mutation.coverage import Coverage
from metaeval.mutation.model import Mutant, MutantKind, MutantResult
from metaeval.mutation.run import runner, time_left

recording: dict[str, Any] = {"plan": {}, "durations": {}, "always": [], "jobs": 0,
                             "began": None, "results": []}
_costs = time_left.expected_costs


def expected_costs(mutants: Iterable[Mutant], coverage: Coverage,
                   durations: Mapping[str, float], always: Iterable[str] = ()
                   ) -> dict[str, time_left.Expected]:
    mutants, always = list(mutants), tuple(always)
    for mutant in mutants:
        selection = coverage.select(mutant)
        recording["plan"][mutant.id] = {
            "tests": None if selection.tests is None else list(selection.tests),
            "reached": selection.reached, "first": list(selection.first),
            "patch": mutant.kind is MutantKind.PATCH}
    recording["durations"] = dict(durations)
    recording["always"] = list(always)
    return _costs(mutants, coverage, durations, always)


class Recorded(time_left.TimeLeft):
    """The run's own estimate, each result written down as it comes."""

    def __init__(self, expected: Mapping[str, time_left.Expected], jobs: int,
                 clock: Any = None) -> None:
        if clock is None:
            super().__init__(expected, jobs)
        else:
            super().__init__(expected, jobs, clock)
        recording["jobs"] = jobs
        recording["began"] = self.clock()

    def finished(self, result: MutantResult) -> None:
        super().finished(result)
        recording["results"].append({
            "at": self.clock(), "id": result.mutant.id, "status": result.status.value,
            "duration": result.duration, "in_tests": result.in_tests,
            "cached": result.cached, "own_process": bool(result.own_process),
            "killed_by": list(result.killed_by), "shown": self.seconds()})


def main() -> int:
    out = Path(sys.argv[1])
    sys.argv = ["metaeval", *sys.argv[2:]]
    # The runner's own names, replaced for this process only.
    setattr(runner, "TimeLeft", Recorded)  # noqa: B010
    setattr(runner, "expected_costs", expected_costs)  # noqa: B010
    from metaeval.cli import main as metaeval
    try:
        metaeval()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    else:
        code = 0
    finally:
        out.write_text(json.dumps(recording), encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
