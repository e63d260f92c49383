"""``metaeval mutate --merge DIR...``: the shards' results as one run.

The merge plans the mutants again in its own checkout, exactly as each shard
did (the same targets, ``--mutants`` and ``--since``), and runs none of them.
It trusts the shards' manifests (``run.shard_manifest``) only when together
they are one whole run of that very plan: otherwise it exits 3 with one line
per problem, naming the shard and its file. Then the merged results, in the
plan's order, are concluded as a single run's are (``mutate_conclude.conclude``):
the same exit code, the same survivors against the findings file, and the same
report, SARIF and table from ``report.mutate_outcome.finish``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from metaeval.commands.mutate_conclude import conclude
from metaeval.commands.mutate_plan import plan_mutate
from metaeval.commands.mutate_values import Message, MutateRequest, MutateResult, Ran
from metaeval.errors import ExitCode, InputError, OutputError
from metaeval.mutation.isolation.options import Isolation
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.mutation.run.runner import MutationRun
from metaeval.mutation.run.shard_manifest import (
    Manifest,
    check_shards,
    find_manifests,
    read_manifest,
)
from metaeval.mutation.run.timings import write_timings


def _result(mutant: Mutant, entry: dict[str, object]) -> MutantResult:
    killed = entry["killed_by"]
    covered = entry["covered_by"]
    assert isinstance(killed, list) and isinstance(covered, list)
    duration, in_tests = entry["duration"], entry["in_tests"]
    assert isinstance(duration, int | float) and isinstance(in_tests, int | float)
    return MutantResult(mutant, Status(entry["status"]), killed_by=tuple(killed),
                        covered_by=tuple(covered), duration=float(duration),
                        detail=str(entry["detail"]), in_tests=float(in_tests),
                        cached=entry.get("cached") is True)


def merge_shards(request: MutateRequest, dirs: Sequence[Path]) -> MutateResult:
    """Merge the manifests found in ``dirs`` into one run's result, or exit 3 naming
    every shard that is missing, twice, from another plan or unfinished.

    Raises ``InputError`` for a manifest that is not one (exit 2).
    """
    if request.trace_only:
        raise InputError("--merge runs no mutant and traces nothing: --trace-only is a job "
                         "of its own, before the shards")
    # Planning only: no warm runner is started, and the shard's cost data (and coverage
    # file, had the command line been copied from a shard's) is not read.
    planning = dataclasses.replace(request, shard=(1, 1), timings_path=None, no_cache=True,
                                   isolation=Isolation.SUBPROCESS, coverage_path=None)
    plan = plan_mutate(planning)
    if plan.stop is ExitCode.VOID:  # no mutant found at all: as a run says it
        return MutateResult(plan.stop, plan.root, plan.notes)
    # The share of shard 1/1 is every mutant: the plan's own mutants.
    manifests: list[Manifest] = [read_manifest(p) for p in find_manifests(dirs)]
    ids = [m.id for m in plan.mutants]
    problems = check_shards(manifests, plan.plan_hash, ids)
    if problems:
        lines = tuple(Message(f"error: --merge: {p}", stderr=True) for p in problems)
        return MutateResult(ExitCode.VOID, plan.root, (), after=lines)
    notes = (Message(f"--merge: {len(manifests)} shards, {len(ids)} mutants", stderr=True),)
    entries = {i: dict(e) for m in manifests for i, e in m.results.items()}
    results = tuple(_result(m, entries[m.id]) for m in plan.mutants)
    run = MutationRun(results, max(m.baseline for m in manifests),
                      max(m.timeout for m in manifests), Isolation.FORK,
                      sum(r.duration for r in results))
    plan = dataclasses.replace(plan, request=dataclasses.replace(plan.request, shard=None),
                               notes=notes, shard=None)
    if not ids:
        return MutateResult(ExitCode.OK, plan.root, notes)
    result = conclude(Ran(plan, run))
    if request.write_timings is not None:  # the next pipeline's --timings
        try:
            write_timings(Path.cwd() / request.write_timings, results)
        except OutputError as e:
            code = result.code if result.code is ExitCode.VOID else ExitCode.BAD_INPUT
            return dataclasses.replace(result, code=code,
                                       write_errors=(*result.write_errors, e))
    return result
