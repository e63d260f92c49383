"""The manifest a shard of ``metaeval mutate --shard k/n`` leaves, and the checks
``--merge`` makes before it trusts a set of them.

A manifest is one JSON file, ``shard-K-of-N.json`` in the ``--shard-out``
directory: the plan's hash (``plan_hash``: the planned mutants and their code,
the config's mutate section, the operator set, the ``--since`` ref, the test
files' hashes), ``k`` and ``n``, the ids the shard was assigned, whether it
finished, and each result. It is written twice: when the run starts
(``finished: false``) and when it ends, so a shard that died leaves a manifest
that says so.

``check_shards`` proves a set of manifests is one whole run of one plan: none
missing, none twice, none from another plan or another count of mutants, each
finished with a result for every mutant it was assigned and for no other, and
the shares together exactly the plan. Each problem is one line naming the file
(the first few missing shards by name, the rest counted). Manifests are data:
read as JSON, checked field by field (every number in range: ``k`` and ``n`` as
``--shard`` takes them, times within ``limits.SECONDS``), never executed. What
they cannot prove is that a shard ran what it says: the merge trusts the
artifacts of its own workflow run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from metaeval.data_paths import file_digest
from metaeval.errors import InputError, shown
from metaeval.files import write_atomic
from metaeval.mutation.caches.result_cache import project_test_files
from metaeval.mutation.limits import COUNT, SECONDS, Range, clamp_seconds
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.mutation.run.shards import MAX_SHARDS
from metaeval.untrusted_json import JsonInputError, join_field, read_json_file

FORMAT = 1
KIND = "metaeval-mutate-shard"
GLOB = "shard-*-of-*.json"
SHARD_COUNT = Range(1, MAX_SHARDS, f"a shard count from 1 to {MAX_SHARDS}", integer=True)
"""What ``--shard k/n`` takes (``shards.parse_shard``)."""
MISSING_NAMED = 5


def manifest_name(k: int, n: int) -> str:
    return f"shard-{k}-of-{n}.json"


def plan_hash(mutants: Sequence[Mutant], mutate_section: Mapping[str, object],
              operators: Sequence[str], since_ref: str | None, root: Path) -> str:
    """A hash of everything that decides which mutants a plan holds and what their
    tests are: each mutant's id and code, the config's mutate section, the operator
    set, the ``--since`` ref, and the project's test and conftest files' bytes."""
    digest = hashlib.sha256()

    def add(value: object) -> None:
        digest.update(json.dumps(value, sort_keys=True, default=str).encode("utf-8"))
        digest.update(b"\0")

    add([FORMAT, dict(mutate_section), sorted(operators), since_ref])
    for m in mutants:
        s = m.span
        add([m.id, m.kind.value, m.operator, m.path, m.module, m.qualname, m.original,
             m.replacement, hashlib.sha256(m.mutated_source.encode("utf-8")).hexdigest(),
             m.target, m.ignored_reason, s.start_line, s.start_column, s.end_line,
             s.end_column])
    for name in project_test_files(root):
        try:  # a test file linked to /dev/zero or a fifo is hashed as a name, never read
            add([name, file_digest(root, name, name)])
        except InputError:
            add([name, "refused"])
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class ShardPlan:
    """What a shard was given: its place, the plan it is a share of, its ids."""

    k: int
    n: int
    plan: str
    """``plan_hash`` of the whole plan, before the share was taken."""
    planned: int
    """Mutants in the whole plan."""
    assigned: tuple[str, ...]
    out_dir: Path

    @property
    def path(self) -> Path:
        return self.out_dir / manifest_name(self.k, self.n)


def _result_entry(r: MutantResult) -> dict[str, object]:
    # Times within the range the merge reads: a shard's own manifest always merges.
    return {"status": r.status.value, "killed_by": list(r.killed_by),
            "covered_by": list(r.covered_by), "duration": clamp_seconds(r.duration),
            "in_tests": clamp_seconds(r.in_tests), "detail": r.detail, "cached": r.cached}


def write_manifest(shard: ShardPlan, results: Sequence[MutantResult] | None, *,
                   finished: bool, baseline: float = 0.0, timeout: float = 0.0) -> None:
    """Write the shard's manifest; ``OutputError`` when it cannot be written."""
    document = {
        "format": FORMAT, "kind": KIND, "plan": shard.plan, "k": shard.k, "n": shard.n,
        "planned": shard.planned, "assigned": list(shard.assigned), "finished": finished,
        "baseline": clamp_seconds(baseline), "timeout": clamp_seconds(timeout),
        "results": {r.mutant.id: _result_entry(r) for r in results or ()},
    }
    write_atomic(shard.path, json.dumps(document, indent=1) + "\n", follow_links=False)


@dataclass(frozen=True, slots=True)
class Manifest:
    """One shard's manifest as read and checked for shape."""

    path: Path
    plan: str
    k: int
    n: int
    planned: int
    assigned: tuple[str, ...]
    finished: bool
    baseline: float
    timeout: float
    results: Mapping[str, Mapping[str, object]] = field(default_factory=dict)


def _field(data: Mapping[str, object], name: str, kind: type | tuple[type, ...],
           path: Path, expected: str) -> object:
    value = data.get(name)
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise InputError(f"{path}: {name}: got {shown(value)}; expected {expected}")
    return value


def _seconds(data: Mapping[str, object], name: str, path: Path, where: str = "") -> float:
    value = data.get(name)
    # Bounded, not only finite: 1e308 seconds twice is infinity, and a merged report
    # must never say Infinity (nor a --write-timings file hold what --timings refuses).
    if not SECONDS.holds(value):
        raise InputError(f"{path}: {where}{name}: got {shown(value)}; expected "
                         f"{SECONDS.expected}")
    assert isinstance(value, int | float)
    return float(value)


def _number(data: Mapping[str, object], name: str, path: Path, allowed: Range) -> int:
    value = data.get(name)
    if not allowed.holds(value):
        raise InputError(f"{path}: {name}: got {shown(value)}; expected {allowed.expected}")
    assert isinstance(value, int)
    return value


def read_manifest(path: Path) -> Manifest:
    """A manifest's fields; ``InputError`` naming the file and field when it is not one."""
    try:
        data = read_json_file(path)
    except (OSError, JsonInputError) as e:
        raise InputError(f"{path}: cannot read the shard manifest: {e}") from e
    if not isinstance(data, dict) or data.get("kind") != KIND or data.get("format") != FORMAT:
        raise InputError(f"{path}: not a shard manifest: expected an object with kind "
                         f"{KIND!r} and format {FORMAT}")
    assigned = _field(data, "assigned", list, path, "a list of mutant ids")
    results = _field(data, "results", dict, path, "an object of results by mutant id")
    assert isinstance(assigned, list) and isinstance(results, dict)
    if not all(isinstance(i, str) for i in assigned):
        raise InputError(f"{path}: assigned: expected a list of mutant ids")
    for key, entry in results.items():
        # An id is data too: bounded and escaped where an error echoes it.
        mutant_id = join_field("", key)
        if not isinstance(entry, dict):
            raise InputError(f"{path}: results: {mutant_id}: got {shown(entry)}; expected "
                             "an object")
        try:
            Status(entry.get("status"))
        except ValueError:
            raise InputError(f"{path}: results: {mutant_id}: status: got "
                             f"{shown(entry.get('status'))}; expected one of "
                             f"{', '.join(s.value for s in Status)}") from None
        for name in ("killed_by", "covered_by"):
            if not isinstance(entry.get(name), list) or not all(
                    isinstance(t, str) for t in entry[name]):
                raise InputError(f"{path}: results: {mutant_id}: {name}: expected a list of "
                                 "test ids")
        _seconds(entry, "duration", path, f"results: {mutant_id}: ")
        _seconds(entry, "in_tests", path, f"results: {mutant_id}: ")
        if not isinstance(entry.get("detail"), str):
            raise InputError(f"{path}: results: {mutant_id}: detail: expected a string")
    # Within what --shard k/n takes: "n": 100000000 once meant a message per missing
    # shard and a MemoryError.
    n = _number(data, "n", path, SHARD_COUNT)
    k = _number(data, "k", path, Range(1, n, f"a shard number from 1 to n ({n})", integer=True))
    planned = _number(data, "planned", path, COUNT)
    plan = _field(data, "plan", str, path, "the plan's hash")
    finished = _field(data, "finished", bool, path, "true or false")
    assert isinstance(plan, str) and isinstance(finished, bool)
    return Manifest(path, plan, k, n, planned, tuple(assigned), finished,
                    _seconds(data, "baseline", path), _seconds(data, "timeout", path),
                    results)


def find_manifests(dirs: Sequence[Path]) -> list[Path]:
    """Every manifest in ``dirs``: each a manifest file, or a directory searched at
    every depth (a CI job's downloaded artifacts, one folder per shard)."""
    found: list[Path] = []
    for d in dirs:
        if d.is_file():
            found.append(d)
        elif d.is_dir():
            found.extend(sorted(d.rglob(GLOB)))
        else:
            raise InputError(f"--merge: {d}: no such file or directory")
    return found


def check_shards(manifests: Sequence[Manifest], plan: str,
                 planned_ids: Sequence[str]) -> list[str]:
    """What keeps these manifests from being one whole run of the plan ``plan``
    whose mutants are ``planned_ids``: one line per problem, empty when none."""
    if not manifests:
        return ["no shard manifest found (shard-K-of-N.json, written with --shard-out)"]
    problems: list[str] = []
    counts = sorted({m.n for m in manifests})
    for m in manifests:
        if m.plan != plan:
            problems.append(f"{m.path}: shard {m.k}/{m.n} is from another plan: its code, "
                            "config, operators, --since ref or test files differ from this "
                            "checkout's (merge in the same checkout, with the shards' "
                            "targets and --since)")
    if len(counts) > 1:
        problems.append("the shards disagree on how many there are: "
                        + ", ".join(f"{m.path} says {m.k}/{m.n}" for m in manifests))
        return problems
    n = counts[0]
    by_k: dict[int, list[Manifest]] = {}
    for m in manifests:
        by_k.setdefault(m.k, []).append(m)
    absent = [k for k in range(1, n + 1) if k not in by_k]
    # The first few by name, the rest as a count: n may be large, the log is read.
    problems.extend(f"shard {k}/{n} is missing (no {manifest_name(k, n)})"
                    for k in absent[:MISSING_NAMED])
    if len(absent) > MISSING_NAMED:
        problems.append(f"... and {len(absent) - MISSING_NAMED} more shards of {n} missing "
                        f"({len(absent)} in all)")
    for k, ms in sorted(by_k.items()):
        if len(ms) > 1:
            problems.append(f"shard {k}/{n} is there {len(ms)} times: "
                            + ", ".join(str(m.path) for m in ms))
        if not 1 <= k <= n:
            problems.append(f"{ms[0].path}: shard {k}/{n} is out of range")
    for m in manifests:
        missing = [i for i in m.assigned if i not in m.results]
        if not m.finished or missing:
            problems.append(f"{m.path}: shard {m.k}/{m.n} did not finish ("
                            f"{len(m.assigned) - len(missing)} of {len(m.assigned)} results)")
        # A shard reports on its own share of this plan, nothing else.
        if m.planned != len(planned_ids):
            problems.append(f"{m.path}: shard {m.k}/{m.n} says its plan holds {m.planned} "
                            f"mutants; this plan holds {len(planned_ids)}")
        if len(set(m.assigned)) != len(m.assigned):
            problems.append(f"{m.path}: shard {m.k}/{m.n} is assigned "
                            f"{len(m.assigned) - len(set(m.assigned))} mutants twice")
        unassigned = set(m.results) - set(m.assigned)
        if unassigned:
            problems.append(f"{m.path}: shard {m.k}/{m.n} has {len(unassigned)} results for "
                            f"mutants not assigned to it, e.g. {shown(min(unassigned))}")
    if problems:
        return problems
    assigned = [i for m in manifests for i in m.assigned]
    if sorted(assigned) != sorted(planned_ids):
        extra = sorted(set(assigned) - set(planned_ids))
        lost = sorted(set(planned_ids) - set(assigned))
        twice = len(assigned) - len(set(assigned))
        problems.append(f"the shards' shares are not the plan: {len(lost)} planned mutants "
                        f"in no share, {len(extra)} not planned, {twice} in two shares")
    return problems
