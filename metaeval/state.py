"""Reading the world state a run left behind: dotted lookups and the state diff.

The state diff is the authoritative record of what the agent did, whatever it
said; graders and judges read it instead of the agent's claims. Pure functions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from metaeval.contract import JsonValue

MISSING = "<missing>"


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between the initial and the final state, at a dotted path."""

    path: str
    before: JsonValue
    after: JsonValue
    added: bool = False
    removed: bool = False

    def describe(self) -> str:
        if self.added:
            return f"{self.path}: added {self.after!r}"
        if self.removed:
            return f"{self.path}: removed (was {self.before!r})"
        return f"{self.path}: {self.before!r} -> {self.after!r}"


def lookup(state: Mapping[str, JsonValue], path: str) -> tuple[bool, JsonValue]:
    """Follow a dotted path through objects and list indices; (found, value)."""
    node: JsonValue = dict(state)
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def dotted_keys(node: JsonValue, prefix: str = "", depth: int = 4) -> Iterator[str]:
    """Every dotted key ``lookup`` can find in ``node``, objects ``depth`` levels deep at
    most: for saying which keys a selector or a breakdown could have named."""
    if isinstance(node, dict) and depth > 0:
        for key, value in node.items():
            yield prefix + key
            yield from dotted_keys(value, f"{prefix}{key}.", depth - 1)


def state_diff(initial: Mapping[str, JsonValue], final: Mapping[str, JsonValue]) -> list[Change]:
    """Every leaf-level difference, in a stable order (keys sorted, lists by index)."""
    return list(_diff("", dict(initial), dict(final)))


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _diff(path: str, before: JsonValue, after: JsonValue) -> Iterator[Change]:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(before.keys() | after.keys()):
            sub = _join(path, key)
            if key not in after:
                yield Change(sub, before[key], None, removed=True)
            elif key not in before:
                yield Change(sub, None, after[key], added=True)
            else:
                yield from _diff(sub, before[key], after[key])
        return
    if isinstance(before, list) and isinstance(after, list):
        for i in range(max(len(before), len(after))):
            sub = _join(path, str(i))
            if i >= len(after):
                yield Change(sub, before[i], None, removed=True)
            elif i >= len(before):
                yield Change(sub, None, after[i], added=True)
            else:
                yield from _diff(sub, before[i], after[i])
        return
    # bool is an int in Python: True == 1 must still count as a change of value.
    if before != after or isinstance(before, bool) != isinstance(after, bool):
        yield Change(path, before, after)


def within(path: str, prefixes: tuple[str, ...]) -> bool:
    """True when ``path`` is one of ``prefixes`` or lies under one of them."""
    return any(path == p or path.startswith(p + ".") for p in prefixes)
