"""What the benchmark prints: per-tool summaries, the speed table, PASS/FAIL lines.

Shared by every target of mutation_speed.py (itsdangerous, this repository,
inspect_ai): the numbers are computed and shown the same way for each.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import bench_tools as bt


@dataclass(frozen=True, slots=True)
class Summary:
    """One tool on one target over all its runs."""

    tool: str
    mutants: int
    statuses: dict[str, int]
    median_wall: float
    min_wall: float
    max_wall: float
    runs: int
    done: int = 0
    stopped_runs: int = 0

    @property
    def measured(self) -> int:
        """The mutants the rate is over: all of them, or those done when a run hit the limit."""
        return self.done if self.stopped_runs else self.mutants

    @property
    def per_second(self) -> float:
        return self.measured / self.median_wall if self.median_wall > 0 else 0.0

    @property
    def ms_per_mutant(self) -> float:
        return 1000 * self.median_wall / self.measured if self.measured else 0.0

    def as_json(self) -> dict[str, object]:
        data = asdict(self) | {"per_second": self.per_second}
        del data["done"], data["stopped_runs"]
        if self.stopped_runs:
            data |= {"stopped_at_limit": True, "done": self.done,
                     "stopped_runs": self.stopped_runs}
        return data


def summarize(runs: Sequence[bt.ToolRun]) -> Summary:
    """Median wall time over the runs; mutants and statuses from the last run.

    A run stopped at the time limit counts the limit as its wall; the mutants
    done are then the median over the runs of those with a final status.
    """
    walls = [r.wall for r in runs]
    last = runs[-1]
    return Summary(
        last.tool, len(last.mutants), last.statuses(), statistics.median(walls),
        min(walls), max(walls), len(runs), statistics.median_low(r.done for r in runs),
        sum(r.stopped_at_limit for r in runs),
    )


def speed_ratio(metaeval: Summary, other: Summary) -> float:
    """How many times metaeval's mutants per second is the other tool's (>1: metaeval is faster)."""
    return metaeval.per_second / other.per_second if other.per_second > 0 else float("inf")


def table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def speed_table(summaries: Sequence[Summary]) -> str:
    me = next((s for s in summaries if s.tool == "metaeval"), None)
    rows = [["tool", "mutants", "statuses", "wall median (min-max)", "mutants/s", "ms/mutant",
             "metaeval is x faster"]]
    for s in summaries:
        statuses = ", ".join(f"{k} {v}" for k, v in s.statuses.items())
        ratio = f"{speed_ratio(me, s):.2f}" if me else "n/a"
        mutants = f"{s.done} of {s.mutants} done *" if s.stopped_runs else str(s.mutants)
        rows.append([s.tool, mutants, statuses,
                     f"{s.median_wall:.1f} s ({s.min_wall:.1f}-{s.max_wall:.1f}, {s.runs} runs)",
                     f"{s.per_second:.2f}", f"{s.ms_per_mutant:.0f}", ratio])
    return table(rows)


def stopped_note(s: Summary, time_limit: float | None) -> str:
    """The footnote for a tool stopped at the time limit: what its rate is measured over."""
    runs = "its run" if s.runs == 1 else f"{s.stopped_runs} of its {s.runs} runs"
    return (f"* {s.tool}: {runs} stopped at the {time_limit:g} s time limit with {s.done} of "
            f"{s.mutants} mutants done; its wall is the limit, and mutants/s, ms/mutant and "
            f"the x faster ratio are measured over the part it finished ({s.done} mutants / "
            f"{s.median_wall:.1f} s, start-up included)")


def say(line: str = "") -> None:
    print(line, flush=True)


Check = tuple[str, bool | None, str]


def print_checks(title: str, checks: Sequence[Check]) -> bool:
    """Print each target as PASS, FAIL or n/a under title; True when one failed."""
    say(f"\n{title}")
    failed = False
    for label, ok, detail in checks:
        mark = "n/a " if ok is None else ("PASS" if ok else "FAIL")
        failed |= ok is False
        say(f"  {mark}  {label}: {detail}")
    return failed
