"""Golden and held-out sets: a split of labelled judge items or meta-set runs, drawn
once with a fixed seed, stratified, and kept as a small file beside them.

Tuning a judge's rubric against the items it is then measured on fits the rubric
to them, so the figure overstates the judge. The split keeps a share of the items
aside (the held-out set) to be read only when deciding.

**Drawing.** Items are grouped by stratum (their category and their human
label: ``pass``, ``fail``, ``a``, ``b``, ``tie``, a score, a class, or none), and
within each stratum ordered by ``sha256(seed, id)``; the first
``round(n * fraction)`` of each stratum are held out. The draw depends on the
seed and the ids alone, so anyone regenerates the same split on any machine,
and each stratum keeps the share it has in the whole.

**The file** (``*.split.json``), data like every file another job may write:

```json
{"version": 1, "seed": 42, "held_out_fraction": 0.2,
 "sources": ["items.ndjson"], "golden": ["i1", ...], "held_out": ["i7", ...]}
```

Reading it checks every field (types, ranges, no id in both sets, ids unique,
at most ``MAX_IDS``) and never trusts a path in it: ``sources`` is a note.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import InputError, shown
from metaeval.untrusted_json import JsonInputError, read_json_file

VERSION = 1
MAX_IDS = 1_000_000
SUFFIX = ".split.json"
NONE = "(none)"
"""The stratum part of an item with no category or no label."""


@dataclass(frozen=True, slots=True)
class Unit:
    """What the split sees of one item or run: its id and its stratum."""

    id: str
    category: str
    label: str


@dataclass(frozen=True, slots=True)
class Split:
    """Which ids are golden and which held out, and how they were drawn."""

    seed: int
    held_out_fraction: float
    sources: tuple[str, ...]
    golden: frozenset[str]
    held_out: frozenset[str]

    def json(self) -> JsonObject:
        golden: list[JsonValue] = [*sorted(self.golden)]
        held: list[JsonValue] = [*sorted(self.held_out)]
        return {"version": VERSION, "seed": self.seed,
                "held_out_fraction": self.held_out_fraction,
                "sources": list[JsonValue](self.sources), "golden": golden, "held_out": held}


def rank(seed: int, item_id: str) -> str:
    """Where ``item_id`` falls in the draw of ``seed``."""
    return hashlib.sha256(f"{seed}\0{item_id}".encode()).hexdigest()


def draw(units: Iterable[Unit], fraction: float, seed: int, sources: Sequence[str]) -> Split:
    """The split of ``units``: per stratum, the ``round(n * fraction)`` lowest-ranked
    held out (see the module docstring)."""
    if not 0 < fraction < 1:
        raise InputError(f"--held-out: got {fraction!r}; expected a fraction between 0 and 1, "
                         "e.g. 0.2")
    strata: dict[tuple[str, str], list[str]] = {}
    seen: set[str] = set()
    for unit in units:
        if unit.id in seen:
            raise InputError(f"id {shown(unit.id)}: given twice across the files; expected "
                             "each item once")
        seen.add(unit.id)
        strata.setdefault((unit.category, unit.label), []).append(unit.id)
    held: set[str] = set()
    for ids in strata.values():
        ordered = sorted(ids, key=lambda i: rank(seed, i))
        held.update(ordered[:round(len(ordered) * fraction)])
    return Split(seed, fraction, tuple(sources), frozenset(seen - held), frozenset(held))


def _ids(value: object, field: str, where: str) -> frozenset[str]:
    if not isinstance(value, list) or len(value) > MAX_IDS or not all(
            isinstance(i, str) and i for i in value):
        raise InputError(f"{where}: {field}: got {shown(value)}; expected a list of at most "
                         f"{MAX_IDS} non-empty ids")
    ids = frozenset(value)
    if len(ids) != len(value):
        raise InputError(f"{where}: {field}: an id is listed twice; expected each once")
    return ids


def read_split(path: Path) -> Split:
    """The split file ``path``, every field checked."""
    where = str(path)
    try:
        data = read_json_file(path)
    except (OSError, JsonInputError) as e:
        raise InputError(f"{where}: cannot read the split: {e}") from e
    if not isinstance(data, dict):
        raise InputError(f"{where}: got {shown(data)}; expected a split object")
    unknown = sorted(set(data) - {"version", "seed", "held_out_fraction", "sources", "golden",
                                  "held_out"})
    if unknown:
        raise InputError(f"{where}: {unknown[0]}: unknown key in a split file")
    if data.get("version") != VERSION:
        raise InputError(f"{where}: version: got {shown(data.get('version'))}; expected "
                         f"{VERSION}")
    seed, fraction = data.get("seed"), data.get("held_out_fraction")
    if type(seed) is not int or not 0 <= seed < 1 << 63:
        raise InputError(f"{where}: seed: got {shown(seed)}; expected an integer >= 0")
    if not isinstance(fraction, float) or not 0 < fraction < 1:
        raise InputError(f"{where}: held_out_fraction: got {shown(fraction)}; expected a "
                         "number between 0 and 1")
    sources = data.get("sources", [])
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise InputError(f"{where}: sources: got {shown(sources)}; expected a list of names")
    golden = _ids(data.get("golden"), "golden", where)
    held = _ids(data.get("held_out"), "held_out", where)
    both = sorted(golden & held)
    if both:
        raise InputError(f"{where}: id {shown(both[0])} is both golden and held out; "
                         "expected each id in one set")
    return Split(seed, fraction, tuple(str(s) for s in sources), golden, held)


def split_text(split: Split) -> str:
    return json.dumps(split.json(), indent=1) + "\n"
