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
{"version": 1, "seed": 42, "held_out_fraction": 0.2, "draw": 1,
 "sources": ["items.ndjson"], "golden": ["i1", ...], "held_out": ["i7", ...]}
```

``draw`` counts the held-out sets drawn (``metaeval split --redraw`` adds one);
absent, it is 1.

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
from metaeval.loaders.judge_items import PairItem, PointItem
from metaeval.untrusted_json import JsonInputError, read_json_file

VERSION = 1
MAX_IDS = 1_000_000
SUFFIX = ".split.json"
NONE = "(none)"
"""The stratum part of an item with no category or no label."""
NO_CONSENSUS = "(no consensus)"


def item_label(item: PairItem | PointItem) -> str | None:
    """The stratum's label of a judge item: the consensus; ``(no consensus)`` when
    annotators labelled the item without agreeing (still labelled: the alternative
    annotator test reads each of their labels); None when no person labelled it."""
    if isinstance(item, PairItem):
        if item.consensus:
            return item.label
    else:
        for value in (item.verdict, item.score, item.label_class):
            if value is not None:
                return str(value)
    return NO_CONSENSUS if item.annotations else None


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
    draw: int = 1
    """Which held-out set this is: 1 for the first, one more per ``split --redraw``."""

    def json(self) -> JsonObject:
        golden: list[JsonValue] = [*sorted(self.golden)]
        held: list[JsonValue] = [*sorted(self.held_out)]
        return {"version": VERSION, "seed": self.seed,
                "held_out_fraction": self.held_out_fraction, "draw": self.draw,
                "sources": list[JsonValue](self.sources), "golden": golden, "held_out": held}

    @property
    def held_out_digest(self) -> str:
        """Names this held-out set: the same ids give the same digest, a new draw
        another; the ledger's reads count only on the draw they name."""
        text = json.dumps([self.seed, sorted(self.held_out)])
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def rank(seed: int, item_id: str) -> str:
    """Where ``item_id`` falls in the draw of ``seed``."""
    return hashlib.sha256(f"{seed}\0{item_id}".encode()).hexdigest()


def draw(units: Iterable[Unit], fraction: float, seed: int, sources: Sequence[str]) -> Split:
    """The split of ``units``: per stratum, the ``round(n * fraction)`` lowest-ranked
    held out (see the module docstring)."""
    if not 0 < fraction < 1:
        raise InputError(f"--held-out: got {fraction!r}; expected a fraction between 0 and 1, "
                         "e.g. 0.2")
    return _drawn(units, fraction, seed, sources)


def _drawn(units: Iterable[Unit], fraction: float, seed: int, sources: Sequence[str]) -> Split:
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


def redraw(old: Split, units: Iterable[Unit], fraction: float, sources: Sequence[str]
           ) -> tuple[Split, int]:
    """A fresh held-out set drawn, by the old seed and stratified as ``draw`` does, from
    the ``units`` the old split does not name (labelled since it was drawn); the old
    held-out ids join the golden set (they were read: tuning on them no longer
    overstates anything). Returns the split and how many new units there were.
    ``fraction`` may be 1 here: every unit labelled since held out."""
    if not 0 < fraction <= 1:
        raise InputError(f"--held-out: got {fraction!r}; expected a fraction above 0 and at "
                         "most 1 (1: every item labelled since the last draw held out)")
    known = old.golden | old.held_out
    new = [u for u in units if u.id not in known]
    if not new:
        raise InputError("--redraw: no labelled item or run the split does not name; a fresh "
                         "held-out set is drawn only from items labelled since the last draw: "
                         "label more first")
    fresh = _drawn(new, fraction, old.seed, sources)
    if not fresh.held_out:
        raise InputError(f"--redraw: {len(new)} item(s) labelled since the last draw, and "
                         f"none of their strata is large enough to hold out a share of "
                         f"{fraction:g}; label more, or give a larger --held-out")
    golden = old.golden | old.held_out | fresh.golden
    return Split(old.seed, fraction, tuple(sources), frozenset(golden), fresh.held_out,
                 old.draw + 1), len(new)


def split_beside(paths: Sequence[Path]) -> Path | None:
    """The split file beside the items or runs ``paths``: ``<stem>.split.json`` next to a
    file given, any ``*.split.json`` in a folder given; None when there is none. Two
    or more is an InputError: which set to measure would be a guess."""
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(path.glob("*" + SUFFIX))
        else:
            beside = path.with_name(path.stem + SUFFIX)
            if beside.is_file():
                found.add(beside)
    if len(found) > 1:
        raise InputError(f"{len(found)} split files beside the items "
                         f"({', '.join(sorted(map(str, found)))}); expected one: name one "
                         "items file, or use --set all")
    return next(iter(found), None)


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
                                  "held_out", "draw"})
    if unknown:
        raise InputError(f"{where}: {unknown[0]}: unknown key in a split file")
    if data.get("version") != VERSION:
        raise InputError(f"{where}: version: got {shown(data.get('version'))}; expected "
                         f"{VERSION}")
    seed, fraction = data.get("seed"), data.get("held_out_fraction")
    if type(seed) is not int or not 0 <= seed < 1 << 63:
        raise InputError(f"{where}: seed: got {shown(seed)}; expected an integer >= 0")
    # 1 only after a redraw that held out every item labelled since (split --redraw).
    if not isinstance(fraction, float) or not 0 < fraction <= 1:
        raise InputError(f"{where}: held_out_fraction: got {shown(fraction)}; expected a "
                         "number above 0 and at most 1")
    sources = data.get("sources", [])
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise InputError(f"{where}: sources: got {shown(sources)}; expected a list of names")
    golden = _ids(data.get("golden"), "golden", where)
    held = _ids(data.get("held_out"), "held_out", where)
    both = sorted(golden & held)
    if both:
        raise InputError(f"{where}: id {shown(both[0])} is both golden and held out; "
                         "expected each id in one set")
    drawn = data.get("draw", 1)
    if type(drawn) is not int or not 1 <= drawn < 1 << 31:
        raise InputError(f"{where}: draw: got {shown(drawn)}; expected an integer >= 1")
    return Split(seed, fraction, tuple(str(s) for s in sources), golden, held, drawn)


def split_text(split: Split) -> str:
    return json.dumps(split.json(), indent=1) + "\n"
