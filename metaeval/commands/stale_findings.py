"""``metaeval findings`` beyond reading the file: which tracked entries are stale
(their file or function is no longer targeted, or their mutant is no longer
made), and the findings file without them.

What is targeted is planned as ``metaeval mutate`` plans it, from the config
(or the targets given): the targets scanned (through the scan cache, which is
read and never written here), the operators and ``message_strings``, the patch
mutants loaded in a process of their own. An entry is stale when no mutant of
that plan has its fingerprint: a run can never find it again, so it can never
be fixed, only forgotten. This module runs no test, never prints, and writes
only the findings file, and that only when asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from metaeval.config import Config
from metaeval.errors import InputError
from metaeval.mutation.apart import load_patch_mutants
from metaeval.mutation.caches.result_cache import CACHE_FILE
from metaeval.mutation.find.operators import configured_operators
from metaeval.mutation.find.resolve import relative_path, resolve_targets
from metaeval.mutation.find.scan_cache import SCAN_FILE_NAME, ScanCache
from metaeval.mutation.find.targets import find_mutants
from metaeval.mutation.findings_file import Findings, Stale, StaleWhy, fingerprints
from metaeval.mutation.run.settings import mutate_settings


@dataclass(frozen=True, slots=True)
class Planned:
    """What a run of the current config would mutate, as the fingerprints see it."""

    prints: frozenset[str]
    files: frozenset[str]
    scopes: frozenset[tuple[str, str]]
    """(path, qualname) of every planned mutant."""


def planned(config: Config, paths: Sequence[str] = ()) -> Planned:
    """The current plan of ``metaeval mutate`` (``paths``, else the configured
    targets). ``InputError`` when there is nothing to compare with (no target and
    no patch mutant), or for a bad target or mutants file, as ``mutate`` says it."""
    root = config.root
    settings = mutate_settings(config.mutate)
    targets = list(paths) or list(config.mutate_targets)
    patches = load_patch_mutants(root / settings.mutants, root)
    if not targets and not patches:
        raise InputError("no [tool.metaeval.mutate] targets and no patch mutants: nothing "
                         "is targeted, so every finding would look stale; configure the "
                         "targets, or name them: metaeval findings prune PATHS")
    scan = ScanCache(root, (root / CACHE_FILE).with_name(SCAN_FILE_NAME))
    mutants = (find_mutants(targets, root, configured_operators(config.mutate), scan,
                            settings.message_strings) if targets else [])
    mutants += patches
    files = {relative_path(t.path, root) for t in resolve_targets(targets, root)}
    return Planned(frozenset(fingerprints(mutants).values()),
                   frozenset(files | {m.path for m in mutants}),
                   frozenset((m.path, m.qualname) for m in mutants))


def stale_entries(findings: Findings, plan: Planned) -> tuple[Stale, ...]:
    """The entries of ``findings`` no mutant of ``plan`` has the fingerprint of."""
    found = []
    for e in findings.entries:
        if e.fingerprint in plan.prints:
            continue
        why = (StaleWhy.FILE if e.path not in plan.files
               else StaleWhy.FUNCTION if (e.path, e.qualname) not in plan.scopes
               else StaleWhy.MUTANT)
        found.append(Stale(e, why))
    return tuple(found)


def pruned(findings: Findings, stale: Sequence[Stale]) -> Findings:
    gone = {s.entry.fingerprint for s in stale}
    return Findings(tuple(e for e in findings.entries if e.fingerprint not in gone))
