"""Rendering a mutation run: the status table, survivors' diffs, the report files.

The JSON report follows the mutation-testing-report-schema (schemaVersion 2),
so the standard mutation-testing-elements HTML report renders it. This module
only renders what the runner returned; it never runs anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from metaeval.contract import JsonObject, JsonValue
from metaeval.mutation.find.diffs import rewrite_diff
from metaeval.mutation.isolation.ran import ForkStats
from metaeval.mutation.model import MutantResult, Status
from metaeval.mutation.run.runner import MutationRun
from metaeval.mutation.score import (
    UNDETECTED,
    by_file,
    by_operator,
    mutation_score,
    status_counts,
)
from metaeval.report.escape import lines, one_line

SCHEMA_VERSION = "2"
THRESHOLDS: JsonObject = {"high": 80, "low": 60}
DEFAULT_SHOW = 5
"""Survivors' diffs a run shows by default: a first run's hundred survivors are
for ``metaeval findings list`` and the HTML report, not for one screen."""


OWN_PROCESS_SHOWN = 5
"""Mutants in a process of their own named in the text; the JSON names every one."""


@dataclass(frozen=True, slots=True)
class Shown:
    """Which survivors' diffs the text shows, and in what order."""

    limit: int | None = DEFAULT_SHOW
    """At most this many diffs (``--show N``); None: every one (``--show all``)."""
    new: frozenset[str] | None = None
    """The mutant ids of the survivors the findings file does not know, shown first
    under a heading of their own; None when the run was not compared with one."""
    html: Path | None = None
    """The HTML report written (``--html``), for the pointer to the rest."""


def _score_text(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.1%}"


def mutation_table(run: MutationRun) -> str:
    """Counts per status, then the mutation score."""
    counts = status_counts(run.results)
    rows: list[list[str | int]] = [[status.value, counts[status]] for status in Status]
    rows.append(["total", len(run.results)])
    rows.append(["mutation score", _score_text(mutation_score(run.results))])
    return tabulate(rows, headers=["status", "mutants"], tablefmt="simple")


def _count_rows(groups: dict[str, tuple[MutantResult, ...]]) -> list[list[str | int]]:
    """Per group: its mutants, detected (Killed + Timeout), survived, no coverage,
    errors (CompileError + RuntimeError), Ignored, and its mutation score."""
    rows: list[list[str | int]] = []
    for name, results in groups.items():
        counts = status_counts(results)
        rows.append([one_line(name), len(results),
                     counts[Status.KILLED] + counts[Status.TIMEOUT],
                     counts[Status.SURVIVED], counts[Status.NO_COVERAGE],
                     counts[Status.COMPILE_ERROR] + counts[Status.RUNTIME_ERROR],
                     counts[Status.IGNORED], _score_text(mutation_score(results))])
    return rows


_COUNT_HEADERS = ["mutants", "detected", "survived", "no coverage", "errors", "ignored",
                  "score"]


def operator_table(run: MutationRun) -> str:
    """One row per operator, the noisiest first, so a team sees which operator makes
    the noise on its code. Empty when there is no mutant."""
    rows = _count_rows(by_operator(run.results))
    if not rows:
        return ""
    return "By operator:\n" + tabulate(rows, headers=["operator", *_COUNT_HEADERS],
                                        tablefmt="simple")


def file_table(run: MutationRun) -> str:
    """One row per file, the one with the most undetected mutants first: where the
    tests are thinnest. Empty when there is no mutant."""
    rows = _count_rows(by_file(run.results))
    if not rows:
        return ""
    return "By file:\n" + tabulate(rows, headers=["file", *_COUNT_HEADERS],
                                    tablefmt="simple")


def _survivor_block(result: MutantResult, root: Path) -> str:
    m = result.mutant
    # The header is one line whatever the path or id holds; the diff is lines by
    # design, each escaped on its own.
    head = f"{result.status.value}: {one_line(m.id)} ({one_line(m.path)}:{m.span.start_line})"
    if m.breaks:
        head += f"\n  breaks: {one_line(m.breaks)}"
    return f"{head}\n{lines(rewrite_diff(result, root).rstrip())}"


def survivors_text(run: MutationRun, root: Path, shown: Shown | None = None) -> str:
    """The undetected mutants' headers (id, status, the ``breaks`` sentence) and
    diffs: the new ones first under a heading of their own when the run was
    compared with a findings file, then the known ones; at most ``shown.limit``
    in all, with where to find the rest."""
    shown = shown or Shown(limit=None)
    undetected = _spread([r for r in run.results if r.status in UNDETECTED])
    if not undetected:
        return ""
    new = shown.new
    fresh = [] if new is None else [r for r in undetected if r.mutant.id in new]
    known = [r for r in undetected if new is None or r.mutant.id not in new]
    room = len(undetected) if shown.limit is None else shown.limit
    parts = []
    for title, group in (("New survivors (not in the baseline)", fresh),
                         ("Known survivors (in the baseline)", known)):
        if new is not None and group:
            parts.append(f"{title}: {len(group)}"
                         + (f", {min(room, len(group))} shown" if room < len(group) else ""))
        parts += [_survivor_block(r, root) for r in group[:room]]
        room -= min(room, len(group))
    held = len(undetected) - (len(undetected) if shown.limit is None
                              else min(shown.limit, len(undetected)))
    if held:
        parts.append(_rest_pointer(len(undetected) - held, len(undetected), shown.html))
    return "\n\n".join(parts)


def _spread(results: list[MutantResult]) -> list[MutantResult]:
    """The first survivor of each function, then the second of each, and so on (in
    run order within a round): the first few shown cover the code, not the five
    constants of one line."""
    seen: dict[tuple[str, str], int] = {}
    rounds = []
    for r in results:
        key = (r.mutant.path, r.mutant.qualname)
        rounds.append(seen.get(key, 0))
        seen[key] = rounds[-1] + 1
    return [r for _, _, r in sorted(zip(rounds, range(len(results)), results,
                                        strict=True), key=lambda t: t[:2])]


def _rest_pointer(count: int, total: int, html: Path | None) -> str:
    """Where the undetected mutants a run does not show are, by the commands that
    show them."""
    page = (f"open {one_line(str(html))}" if html is not None
            else "metaeval mutate --html FILE")
    return "\n".join([
        f"{count} of {total} undetected mutants shown; all of them:",
        "  metaeval findings list         this run's survivors; metaeval findings show ID "
        "for one",
        "  metaeval mutate --show all     every diff (a rerun, from the cache)",
        f"  {page:<30} the report in a browser, each mutant in its source"])


def errors_text(run: MutationRun) -> str:
    out = []
    for result in run.results:
        if result.status in (Status.COMPILE_ERROR, Status.RUNTIME_ERROR):
            first = result.detail.strip().splitlines()[-1:] or [""]
            out.append(f"{result.status.value}: {one_line(result.mutant.id)}: "
                       f"{one_line(first[0])}")
    return "\n".join(out)


def mutation_text(run: MutationRun, root: Path, report_path: Path | None,
                  shown: Shown | None = None) -> str:
    """What ``metaeval mutate`` prints on a terminal: the status, operator and file
    tables, then the survivors ``shown`` says (every one when None)."""
    parts = [mutation_table(run)]
    parts += [t for t in (operator_table(run), file_table(run)) if t]
    survivors = survivors_text(run, root, shown)
    if survivors:
        parts.append(survivors)
    errors = errors_text(run)
    if errors:
        parts.append(errors)
    if run.fork is not None:
        footer = (f"time limit per mutant: its tests' baseline time, scaled (at most "
                  f"{run.timeout:.1f}s; whole baseline {run.baseline_duration:.1f}s)")
    else:
        footer = (f"time limit per mutant {run.timeout:.1f}s "
                  f"(baseline {run.baseline_duration:.1f}s)")
    if report_path is not None:
        footer += f"; report: {report_path}"
    parts.append(f"{footer}\n{overhead_text(run)}")
    own = own_process_text(run)
    if own:
        parts.append(own)
    return "\n\n".join(parts)


def own_process_text(run: MutationRun) -> str:
    """Fork isolation: each mutant that needed a pytest process of its own, and why;
    those are the slow ones, and the reason says what in the code made them so."""
    own = [r for r in run.results if r.own_process]
    if not own:
        return ""
    shown = [f"In a pytest process of their own ({len(own)}):"]
    shown += [f"  {one_line(r.mutant.id)}: {one_line(r.own_process)}"
              for r in own[:OWN_PROCESS_SHOWN]]
    if len(own) > OWN_PROCESS_SHOWN:  # one reason is usually behind them all
        shown.append(f"  and {len(own) - OWN_PROCESS_SHOWN} more (--format json: each "
                     "mutant's own_process)")
    return "\n".join(shown)


def overhead_text(run: MutationRun) -> str:
    """Where the time went: inside the tests, and everywhere else (starting or
    forking a child, applying the mutant, reaping), in total and per mutant run."""
    ran = len(run.ran)
    fork = run.fork or ForkStats()
    how = [f"{fork.reloaded} with their module executed again"] if fork.reloaded else []
    how += [f"{fork.deferred} in a pytest process of their own"] if fork.deferred else []
    own = f" ({', '.join(how)})" if how else ""
    text = (f"{run.isolation.value}: {ran} mutants run{own}, {run.cached} from cache, "
            f"{run.wall:.1f}s in all")
    if ran:
        text += (f"; in tests {run.in_tests:.1f}s, elsewhere {run.elsewhere:.1f}s "
                 f"(per mutant {run.in_tests / ran * 1000:.1f} ms in tests, "
                 f"{run.elsewhere / ran * 1000:.1f} ms elsewhere")
        if fork.forking:
            # What the overhead is made of: forking is paid again by every mutant, and
            # grows with what the tests import (page tables of the whole process).
            text += (f": {fork.forking / ran * 1000:.1f} ms forking the warm process "
                     f"({fork.resident / 2**20:.0f} MiB), {fork.placing / ran * 1000:.1f} ms "
                     "putting the mutant in place")
        text += ")"
        if fork.deferred:
            own = ("the process of its own" if fork.deferred == 1
                   else f"the {fork.deferred} processes of their own")
            text += f"; {own} spent {fork.deferred_elsewhere:.1f}s of it"
    said = []
    if fork.traced_tests or fork.reused_tests:
        beside = " beside the mutants" if fork.traced_beside else ""
        said.append(f"{fork.traced_tests} tests traced{beside}")
    if fork.reused_tests:
        said.append(f"{fork.reused_tests} reused from a coverage map "
                    "(the last run's, or --coverage)")
    said += _before_mutants(fork)
    return text + (f"; baseline: {', '.join(said)}" if said else "")


def _before_mutants(fork: ForkStats) -> list[str]:
    """What the run paid before its first mutant could start: collecting the tests
    (under the import-time recorder), then tracing them."""
    if fork.baseline_ready:
        return [f"ready {fork.baseline_ready:.1f}s after the warm process started "
                f"({fork.collected:.1f}s of it collecting)"]
    if fork.collected:  # traced beside the mutants: they started after collection
        return [f"collected in {fork.collected:.1f}s"]
    return []


def _location(result: MutantResult) -> JsonObject:
    span = result.mutant.span
    return {"start": {"line": max(span.start_line, 1), "column": max(span.start_column, 1)},
            "end": {"line": max(span.end_line, 1), "column": max(span.end_column, 1)}}


def _schema_mutant(result: MutantResult) -> JsonObject:
    m = result.mutant
    entry: JsonObject = {
        "id": m.id,
        "mutatorName": m.operator,
        "location": _location(result),
        "status": result.status.value,
        "replacement": m.replacement,
        "killedBy": list(result.killed_by),
        "coveredBy": list(result.covered_by),
        "duration": round(result.duration * 1000, 1),
    }
    if m.breaks:
        entry["description"] = m.breaks
    if result.detail:
        entry["statusReason"] = result.detail
    return entry


def mutation_report(run: MutationRun, root: Path) -> JsonObject:
    """The mutation-testing-report-schema document (schemaVersion 2)."""
    files: dict[str, JsonValue] = {}
    for result in run.results:
        path = result.mutant.path
        if path not in files:
            try:
                source = (root / path).read_text(encoding="utf-8")
            except OSError:
                source = ""
            files[path] = {"language": "python", "source": source, "mutants": []}
        entry = files[path]
        assert isinstance(entry, dict)
        mutants = entry["mutants"]
        assert isinstance(mutants, list)
        mutants.append(_schema_mutant(result))
    return {"schemaVersion": SCHEMA_VERSION, "thresholds": dict(THRESHOLDS),
            "projectRoot": str(root), "files": files, "testFiles": _test_files(run)}


def _test_files(run: MutationRun) -> JsonObject:
    """The tests named by ``killedBy`` and ``coveredBy``, by file: the viewer lists a
    mutant's killing and covering tests by these ids (pytest node ids)."""
    by_file: dict[str, list[str]] = {}
    for result in run.results:
        for node in (*result.killed_by, *result.covered_by):
            tests = by_file.setdefault(node.partition("::")[0], [])
            if node not in tests:
                tests.append(node)
    return {path: {"tests": [{"id": node, "name": node.partition("::")[2] or node}
                             for node in sorted(tests)]}
            for path, tests in sorted(by_file.items())}


def mutation_json(run: MutationRun, root: Path, report_path: Path | None) -> str:
    """``--format json``: counts, score and every mutant's outcome, stable keys."""
    counts = status_counts(run.results)
    score = mutation_score(run.results)
    fork = run.fork or ForkStats()
    mutants: list[JsonValue] = []
    for r in run.results:
        m = r.mutant
        mutants.append({"id": m.id, "kind": m.kind.value, "operator": m.operator,
                        "path": m.path, "line": m.span.start_line, "status": r.status.value,
                        "killed_by": list(r.killed_by), "covered_by": list(r.covered_by),
                        "breaks": m.breaks, "detail": r.detail,
                        "own_process": r.own_process,
                        "diff": rewrite_diff(r, root) if r.status in UNDETECTED else ""})
    document: JsonObject = {
        "counts": {s.value: n for s, n in counts.items()},
        "score": score,
        "executed": run.executed,
        "timeout_seconds": round(run.timeout, 3),
        "timing": {"isolation": run.isolation.value, "ran": len(run.ran),
                   "deferred": fork.deferred,
                   "deferred_elsewhere_seconds": round(fork.deferred_elsewhere, 3),
                   "reloaded": fork.reloaded,
                   "cached": run.cached, "wall_seconds": round(run.wall, 3),
                   "in_tests_seconds": round(run.in_tests, 3),
                   "elsewhere_seconds": round(run.elsewhere, 3),
                   "forking_seconds": round(fork.forking, 3),
                   "placing_seconds": round(fork.placing, 3),
                   "warm_resident_bytes": fork.resident,
                   "traced_tests": fork.traced_tests, "reused_tests": fork.reused_tests,
                   "traced_beside": fork.traced_beside,
                   "collect_seconds": round(fork.collected, 3),
                   "baseline_ready_seconds": round(fork.baseline_ready, 3)},
        "report": str(report_path) if report_path is not None else None,
        "by_operator": {
            name: {"mutants": len(results),
                   "counts": {s.value: n for s, n in status_counts(results).items()},
                   "score": mutation_score(results)}
            for name, results in by_operator(run.results).items()},
        "mutants": mutants,
    }
    return json.dumps(document, indent=2, sort_keys=True)
