"""The ``--timings`` file: each mutant's seconds, written at the end of one run
(``--write-timings``, by a run or a merge) and read by the next plan, whose
shards are balanced by them (``shards``).

One JSON object of mutant id to seconds. It comes from another job, so it is
data: every value is checked against ``limits.SECONDS``, and what is written is
within that range, so the file always reads back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from metaeval.errors import InputError, shown
from metaeval.files import write_atomic
from metaeval.mutation.limits import SECONDS, clamp_seconds
from metaeval.mutation.model import MutantResult
from metaeval.untrusted_json import JsonInputError, read_json_file


def read_timings(path: Path) -> dict[str, float]:
    """A ``--timings`` file: a JSON object of mutant id to seconds. ``InputError``
    naming the file, the id and the value when it is not one."""
    try:
        data = read_json_file(path)
    except (OSError, JsonInputError) as e:
        raise InputError(f"--timings: {path}: cannot read it: {e}") from e
    if not isinstance(data, dict):
        raise InputError(f"--timings: {path}: got {shown(data)}; expected an object of "
                         "mutant id to seconds")
    timings: dict[str, float] = {}
    for mutant_id, value in data.items():
        if not SECONDS.holds(value):
            raise InputError(f"--timings: {path}: {mutant_id}: got {shown(value)}; expected "
                             f"{SECONDS.expected}")
        assert isinstance(value, int | float)
        timings[mutant_id] = float(value)
    return timings


def write_timings(path: Path, results: Sequence[MutantResult]) -> None:
    """Each result's duration (a cached one's as measured when it ran), for
    ``--timings``; mutants settled without running are left out."""
    # Within the range ``read_timings`` takes, so the file always reads back.
    timings = {r.mutant.id: round(clamp_seconds(r.duration), 4) for r in results
               if r.duration > 0}
    write_atomic(path, json.dumps(timings, indent=1, sort_keys=True) + "\n",
                 follow_links=True)
