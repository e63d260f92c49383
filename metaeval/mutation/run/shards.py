"""Which mutants one shard of ``metaeval mutate --shard k/n`` runs: a pure function.

Every shard plans every mutant the same way, then keeps its share. The shares
come from a cost per mutant (seconds, from a timings file or the result cache)
by longest-processing-time-first: the heaviest mutant goes into the shard that
is lightest so far, ties broken by mutant id and then by shard number, so that
every shard computes the same split without talking to the others. Balancing by
time rather than by count keeps the slowest shard near the mean: LPT's makespan
is at most 4/3 of the best possible one, and within the mean plus the longest
single mutant.

With no cost data at all, a stable hash of the mutant id stands in for a cost
(``hashed_costs``): the split is then about even by count, and the command says so.
This module reads no file and runs nothing.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Mapping, Sequence

from metaeval.errors import InputError

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
MAX_SHARDS = 10_000


def parse_shard(text: str) -> tuple[int, int]:
    """``"k/n"`` as ``(k, n)`` with ``1 <= k <= n``; ``InputError`` otherwise."""
    match = _SHARD.match(text)
    if match is None:
        raise InputError(f"--shard: got {text!r}; expected k/n, e.g. 2/4")
    k, n = int(match.group(1)), int(match.group(2))
    if not 1 <= n <= MAX_SHARDS or not 1 <= k <= n:
        raise InputError(f"--shard: got {text!r}; expected k/n with 1 <= k <= n <= "
                         f"{MAX_SHARDS}")
    return k, n


def hashed_costs(ids: Sequence[str]) -> dict[str, float]:
    """A stand-in cost per mutant from a stable hash of its id, in [1, 2)."""
    return {i: 1.0 + int(hashlib.sha256(i.encode("utf-8")).hexdigest()[:8], 16) / 2**32
            for i in ids}


def fill_costs(ids: Sequence[str], known: Mapping[str, float]) -> dict[str, float]:
    """A cost for every id: the known one, else the median of the known ones (a new
    mutant is taken to be a typical one); ``hashed_costs`` when none is known."""
    seen = sorted(float(known[i]) for i in ids if i in known)
    if not seen:
        return hashed_costs(ids)
    typical = seen[len(seen) // 2]
    return {i: float(known[i]) if i in known else typical for i in ids}


def assign(costs: Mapping[str, float], n: int) -> list[list[str]]:
    """Split the ids of ``costs`` into ``n`` shares by longest-processing-time-first.

    Deterministic: the ids are taken by cost, heaviest first, then by id; each goes
    to the lightest share so far, the lowest-numbered one on a tie. Each share is
    returned sorted by id.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    shares: list[list[str]] = [[] for _ in range(n)]
    heap = [(0.0, index) for index in range(n)]
    for mutant_id in sorted(costs, key=lambda i: (-costs[i], i)):
        load, index = heapq.heappop(heap)
        shares[index].append(mutant_id)
        heapq.heappush(heap, (load + costs[mutant_id], index))
    return [sorted(share) for share in shares]


def share(costs: Mapping[str, float], k: int, n: int) -> list[str]:
    """The ids shard ``k`` of ``n`` (1-based) runs."""
    return assign(costs, n)[k - 1]


def makespans(costs: Mapping[str, float], shares: Sequence[Sequence[str]]) -> list[float]:
    """The total cost of each share."""
    return [sum(costs[i] for i in s) for s in shares]
