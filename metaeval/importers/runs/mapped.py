"""What every run importer's runs go through: per-call records joined into their
conversation, how the run ended, and the suite's ``map`` applied to the line.

**Joining.** A per-call log (``RunFormat.per_call``: one record a model call)
holds a conversation as several records, each re-sending the history. Two rules
join them, and the joined run's metadata says which did (``joined``): records
that name one conversation through the suite (``map.conversation_from``, a path
in the run as ``params_from`` reads it) are one run, whatever lies between them
(held until the input ends); records that follow one another with the same
conversation id of the format's own (``ImportedRun.conversation``: OTel's
``gen_ai.conversation.id``, the Agents SDK's ``group_id``, OpenInference's
``session.id``) are one run; and a record whose trajectory strictly extends the
previous record's (it begins with every event of it, and has more) continues
it. The joined run keeps the first record's id and source and the last record's
metadata. Without the suite's key, one record is held at a time.

**The line.** ``map_line`` fills the run's category, task id, instruction,
criteria and states from the paths the map names; a path the run lacks, or a
value of the wrong type, is a ``BadRecord`` naming the path and the map key,
never a guess. This module never imports a format's library.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from metaeval.contract import Event, JsonObject, JsonValue
from metaeval.importers.runs.common import BadRecord, ImportedRun, ended, got
from metaeval.state import lookup
from metaeval.suite_config import RunMap

__all__ = ["EXTENDS", "SAME_CONVERSATION", "joined", "map_line", "read_path"]

EXTENDS = "extends the previous call's messages"
SAME_CONVERSATION = "one conversation id"


def read_path(line: JsonObject, path: str) -> tuple[bool, JsonValue]:
    """The value at ``path`` (``task.id``, ``task.criteria.K``, ``metadata.K``) in a
    meta-set line, as a suite's ``params_from`` reads it in a run."""
    root, _, rest = path.partition(".")
    node = line.get(root)
    if not isinstance(node, dict):
        return False, None
    return lookup(node, rest)


def _key(run: ImportedRun, path: str) -> str:
    line: JsonObject = {"task": {"id": run.task_id, "instruction": run.instruction,
                                 "criteria": run.criteria}, "metadata": run.metadata}
    found, value = read_path(line, path)
    if not found or value is None:
        return ""
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise BadRecord(path, f"got {got(value)}; expected a conversation id (a string or "
                        "an integer), as map.conversation_from names it")
    return str(value)


def _merged(first: ImportedRun, later: ImportedRun, rule: str, calls: int) -> ImportedRun:
    old, new = first.trajectory, later.trajectory
    if new[:len(old)] == old:
        events: tuple[Event, ...] = new
    else:
        # A call that re-sent a shortened history: what it shares with the run so far
        # is kept once, and what follows is added.
        shared = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
                      min(len(old), len(new)))
        events = (*old, *new[shared:])
    metadata: JsonObject = {**later.metadata, "joined": {"calls": calls, "rule": rule}}
    return replace(later, id=first.id, source=first.source, task_id=first.task_id,
                   trajectory=events, instruction=first.instruction or later.instruction,
                   metadata=metadata)


def _finished(run: ImportedRun) -> ImportedRun:
    """A run as a whole: one that ends on a call nobody answered hit a step limit."""
    events = ended(list(run.trajectory), step_limit=True)
    return run if len(events) == len(run.trajectory) else replace(run, trajectory=tuple(events))


def joined(runs: Iterable[ImportedRun], per_call: bool, conversation_from: str | None,
           errors: list[tuple[ImportedRun, BadRecord]]) -> Iterator[ImportedRun]:
    """``runs`` with the records of one conversation joined (``per_call`` formats
    only), each ended as a whole run; a record whose conversation id is bad is
    appended to ``errors`` with the run it was read from."""
    if not per_call:
        yield from (_finished(run) for run in runs)
        return
    held: ImportedRun | None = None
    held_calls = 1
    named: dict[str, tuple[ImportedRun, int]] = {}
    for run in runs:
        try:
            key = _key(run, conversation_from) if conversation_from else ""
        except BadRecord as bad:
            errors.append((run, bad))
            continue
        if key:
            first, calls = named.get(key, (None, 0))
            named[key] = ((run if first is None
                           else _merged(first, run, SAME_CONVERSATION, calls + 1)), calls + 1)
            continue
        # The format's own conversation id joins the records that follow one another
        # (a stream holds one run); the suite's, above, joins them wherever they stand.
        if held is not None and run.conversation and run.conversation == held.conversation:
            held_calls += 1
            held = _merged(held, run, SAME_CONVERSATION, held_calls)
            continue
        if held is not None and len(run.trajectory) > len(held.trajectory) \
                and run.trajectory[:len(held.trajectory)] == held.trajectory:
            held_calls += 1
            held = _merged(held, run, EXTENDS, held_calls)
            continue
        if held is not None:
            yield _finished(held)
        held, held_calls = run, 1
    if held is not None:
        yield _finished(held)
    yield from (_finished(run) for run, _ in named.values())


_MAPPED: tuple[tuple[str, tuple[str, ...], type], ...] = (
    ("category_from", ("category",), str),
    ("task_from", ("task", "id"), str),
    ("instruction_from", ("task", "instruction"), str),
    ("criteria_from", ("task", "criteria"), dict),
    ("initial_state_from", ("initial_state",), dict),
    ("final_state_from", ("final_state",), dict),
)


def map_line(line: JsonObject, run_map: RunMap) -> JsonObject:
    """``line`` with the parts ``run_map`` names read from it; a ``BadRecord`` naming
    the path and its declaration when the run lacks it or holds the wrong type."""
    if not run_map.paths:
        return line
    out = dict(line)
    held = out.get("task")
    task: JsonObject = dict(held) if isinstance(held, dict) else {}
    for key, target, kind in _MAPPED:
        path = run_map.get(key)
        if path is None:
            continue
        found, value = read_path(line, path)
        declared = run_map.where.get(key, key)
        if not found:
            raise BadRecord(path, f"missing; {declared} reads the run's "
                            f"{'.'.join(target)} from here")
        if kind is str and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # a task id or category logged as a number
        if not isinstance(value, kind) or (kind is str and not value):
            expected = "a non-empty string" if kind is str else "an object"
            raise BadRecord(path, f"got {got(value)}; expected {expected} ({declared})")
        if target[0] == "task":
            task[target[1]] = value
        else:
            out[target[0]] = value
    out["task"] = task
    return out
