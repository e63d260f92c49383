"""The rewrite mutants of each module text, kept under ``.metaeval/``, so that a
rerun with nothing changed does not parse with libcst again. A missing or
outdated file is an empty cache; an unreadable one, one git tracks, or one with
a single entry that is not what a scan writes (a field of the wrong type, a span
out of range) is an empty cache with one warning naming the file and field."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, fields
from pathlib import Path

from metaeval import __version__
from metaeval.contract import JsonValue
from metaeval.errors import shown
from metaeval.files import write_atomic
from metaeval.mutation.cache_files import cold, outdated, read_cache
from metaeval.mutation.find.operators import Operator, select_operators
from metaeval.mutation.find.resolve import module_name, read_source, relative_path, resolve_targets
from metaeval.mutation.find.targets import scan_module as mutants_and_scopes
from metaeval.mutation.limits import LINE
from metaeval.mutation.model import Mutant, MutantKind, Span
from metaeval.untrusted_json import JsonInputError, join_field

FORMAT = 1


SCAN_FILE_NAME = "mutate-scan-cache.json"
"""Kept next to the result cache."""


def _mutant_json(mutant: Mutant) -> dict[str, object]:
    data = asdict(mutant)
    data["kind"] = mutant.kind.value
    return data


_MUTANT_FIELDS = frozenset(f.name for f in fields(Mutant))
_SPAN_FIELDS = frozenset(f.name for f in fields(Span))


def _decode_mutant(data: JsonValue) -> Mutant:
    # Every field is a string but the kind and the span: a wrong type or a span out
    # of range is refused here, not met later as a crash in the middle of a run.
    # Every field, as ``asdict`` writes them: a rewrite mutant read back without its
    # ``mutated_source`` would put an empty module in place, killed by any test.
    if not isinstance(data, dict) or set(data) != _MUTANT_FIELDS:
        raise JsonInputError("", f"got {shown(data)}; expected a mutant as metaeval writes "
                                 f"it, with the fields {sorted(_MUTANT_FIELDS)}")
    span = data.get("span")
    if not isinstance(span, dict) or set(span) != _SPAN_FIELDS or not all(
            LINE.holds(v) for v in span.values()):
        raise JsonInputError("span", f"got {shown(span)}; expected {sorted(_SPAN_FIELDS)}, "
                             f"each {LINE.expected}")
    texts = {k: v for k, v in data.items() if k not in ("kind", "span")}
    for name, value in texts.items():
        if not isinstance(value, str):
            raise JsonInputError(name, f"got {shown(value)}; expected a string")
    try:
        kind = MutantKind(data.get("kind"))
    except ValueError:
        raise JsonInputError("kind", f"got {shown(data.get('kind'))}; expected one of "
                             f"{', '.join(k.value for k in MutantKind)}") from None
    return Mutant(**texts, kind=kind, span=Span(**span))  # type: ignore[arg-type]


def _decode(entry: object) -> tuple[list[Mutant], frozenset[str]]:
    """An entry back into mutants; ``JsonInputError`` naming the field when damaged."""
    if not isinstance(entry, dict):
        raise JsonInputError("", f"got {shown(entry)}; expected an object")
    mutants, scopes = entry.get("mutants"), entry.get("scopes")
    if not isinstance(mutants, list):
        raise JsonInputError("mutants", f"got {shown(mutants)}; expected a list")
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        raise JsonInputError("scopes", f"got {shown(scopes)}; expected a list of names")
    found = []
    for i, m in enumerate(mutants):
        try:
            found.append(_decode_mutant(m))
        except JsonInputError as e:
            raise JsonInputError(f"mutants[{i}].{e.field}".rstrip("."), e.message) from None
    return found, frozenset(scopes)


class ScanCache:
    """The rewrite mutants of each module text, so that a rerun does not parse
    again: libcst takes seconds on a few thousand lines. Keyed by a hash of the
    text, its path and module name, the operators, whether message strings are
    mutated, and metaeval's version; only the modules scanned in the current run
    are kept on ``save``."""

    def __init__(self, root: Path, path: Path | None = None) -> None:
        self.path = path or root.resolve() / ".metaeval" / SCAN_FILE_NAME
        self.entries: dict[str, object] = {}
        self.used: dict[str, object] = {}
        self._decoded: dict[str, tuple[list[Mutant], frozenset[str]]] = {}
        data = read_cache(self.path)
        if data is None or outdated(data, format=FORMAT, version=__version__):
            return  # none yet, or another format's or version's: scan again
        entries = data.get("entries") if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            cold(self.path, "not a scan cache: expected an object with entries")
            return
        decoded = {}
        for key, entry in entries.items():
            try:
                decoded[key] = _decode(entry)
            except JsonInputError as e:
                # One damaged entry and none is trusted: a mutant read back is code
                # the run puts in place. One line, naming the first.
                where = join_field("entries", key) + (f".{e.field}" if e.field else "")
                cold(self.path, f"not a scan cache: {where}: {e.message}")
                return
        self.entries = dict(entries)
        self._decoded = decoded

    @staticmethod
    def _key(source: str, path: str, module: str, operators: Sequence[Operator] | None,
             message_strings: bool) -> str:
        names = [o.name for o in operators] if operators is not None else None
        # Every input of the scan that changes its mutants: a scan with message
        # strings left out must never stand in for one that keeps them.
        parts = [source, path, module, names, {"message_strings": message_strings}]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    def knows(self, source: str, *, path: str, module: str,
              operators: Sequence[Operator] | None, message_strings: bool = False) -> bool:
        """Whether this module text was scanned before (so a scan costs nothing)."""
        return self._key(source, path, module, operators, message_strings) in self.entries

    def knows_every(self, targets: Sequence[str], root: Path, operators: Sequence[str],
                    message_strings: bool) -> bool:
        """Whether every file of ``targets`` (under ``root``), as it reads now, was
        scanned before with ``operators`` (names, as configured)."""
        chosen = select_operators(operators)
        return all(self.knows(read_source(t.path), path=relative_path(t.path, root),
                              module=module_name(t.path, root), operators=chosen,
                              message_strings=message_strings)
                   for t in resolve_targets(targets, root))

    def __call__(self, source: str, *, path: str, module: str,
                 operators: Sequence[Operator] | None, message_strings: bool = False
                 ) -> tuple[list[Mutant], frozenset[str]]:
        key = self._key(source, path, module, operators, message_strings)
        known = self._decoded.get(key)
        if known is not None:
            self.used[key] = self.entries[key]
            return list(known[0]), known[1]
        mutants, scopes = mutants_and_scopes(source, path=path, module=module,
                                             operators=operators,
                                             message_strings=message_strings)
        self.used[key] = {"mutants": [_mutant_json(m) for m in mutants],
                          "scopes": sorted(scopes)}
        return mutants, scopes

    def save(self) -> None:
        """Write the cache; ``OutputError`` when it cannot be written."""
        write_atomic(self.path, json.dumps({"format": FORMAT, "version": __version__,
                                            "entries": self.used}), follow_links=False)
