"""The mutation score and the counts it comes from.

A number about a run, not a rendering: the table, the JSON and the per-operator
breakdown all show this one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from metaeval.mutation.model import MutantResult, Status

UNDETECTED = (Status.SURVIVED, Status.NO_COVERAGE)
"""What a team must look at: the tests did not notice the fault."""


def mutation_score(results: tuple[MutantResult, ...]) -> float | None:
    """Detected (killed + timeout) over every mutant that is not Ignored, in 0..1.

    Errors stay in the denominator: a mutant that could not run detected nothing.
    None when there is no such mutant (a score of nothing is undefined, not 1).
    """
    counted = [r for r in results if r.status is not Status.IGNORED]
    if not counted:
        return None
    return sum(1 for r in counted if r.status.detected) / len(counted)


def status_counts(results: tuple[MutantResult, ...]) -> dict[Status, int]:
    counts = Counter(r.status for r in results)
    return {status: counts.get(status, 0) for status in Status}


def by_operator(results: tuple[MutantResult, ...]) -> dict[str, tuple[MutantResult, ...]]:
    """Each operator's results (patch mutants under ``patch``), the noisiest first:
    most undetected (Survived + NoCoverage), then by name."""
    return _grouped(results, lambda r: r.mutant.operator)


def by_file(results: tuple[MutantResult, ...]) -> dict[str, tuple[MutantResult, ...]]:
    """Each file's results (a patch mutant under its target's file), the one with
    the most undetected first, then by path."""
    return _grouped(results, lambda r: r.mutant.path)


def _grouped(results: tuple[MutantResult, ...], key: Callable[[MutantResult], str]
             ) -> dict[str, tuple[MutantResult, ...]]:
    grouped: dict[str, list[MutantResult]] = {}
    for r in results:
        grouped.setdefault(key(r), []).append(r)

    def noisiest(item: tuple[str, list[MutantResult]]) -> tuple[int, str]:
        return -sum(1 for r in item[1] if r.status in UNDETECTED), item[0]

    return {name: tuple(rs) for name, rs in sorted(grouped.items(), key=noisiest)}
