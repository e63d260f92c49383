"""What every run importer's runs go through: per-call records joined into their
conversation, how the run ended, and the suite's ``map`` applied to the line.

**Joining.** A per-call log (``RunFormat.per_call``: one record a model call, or
one trace a turn) holds a conversation as several records. Two rules join them,
and the joined run's metadata says which did (``joined``). Records that name one
conversation are one run, wherever they stand in the log (two conversations a
busy server interleaves become two runs), merged in the order the format's reader
gives them: the suite's id (``map.conversation_from``, a path in the run as
``params_from`` reads it) when the record has one, else the format's own
(``ImportedRun.conversation``: OTel's ``gen_ai.conversation.id``, the Agents SDK's
``group_id``, OpenInference's ``session.id``). A record that names none continues
the previous such record when its trajectory strictly extends it (it begins with
every event of it, and has more). The joined run keeps the first record's id and
source and the last record's metadata.

**Memory.** A log whose records name conversations is read twice: a first
reading (started when the first such record is met) keeps only, for each
conversation id, the number of its last record; the second joins, and lets a
conversation go as soon as its last record is read. Memory holds the
conversations open at one place in the log (as many as ran at once) and an integer
a conversation id, never the log; the runs come in the order their conversations
end. A record of a conversation after its last one (the log changed between the
readings) is an error naming it, never a second run of it.

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


Key = tuple[str, str]
"""A conversation: ``("map", id)`` for the suite's id, ``("own", id)`` for the format's."""


def _conversation(run: ImportedRun, conversation_from: str | None) -> Key | None:
    """The conversation ``run`` names (the suite's id first), or None; a ``BadRecord``
    for a suite id of the wrong type."""
    key = _key(run, conversation_from) if conversation_from else ""
    if key:
        return ("map", key)
    return ("own", run.conversation) if run.conversation else None


def _last_records(runs: Iterable[ImportedRun], conversation_from: str | None
                  ) -> dict[Key, int]:
    """The first reading: each conversation's last record, by its number in the log."""
    last: dict[Key, int] = {}
    for number, run in enumerate(runs):
        try:
            key = _conversation(run, conversation_from)
        except BadRecord:
            continue  # said by the second reading, which names the record
        if key is not None:
            last[key] = number
    return last


def joined(runs: Iterable[ImportedRun], per_call: bool, conversation_from: str | None,
           errors: list[tuple[ImportedRun, BadRecord]],
           again: Iterable[ImportedRun] | None = None) -> Iterator[ImportedRun]:
    """``runs`` with the records of one conversation joined (``per_call`` formats
    only), each ended as a whole run; a record whose conversation id is bad is
    appended to ``errors`` with the run it was read from. ``again``: the same runs
    read a second time, for the first reading (see the module's "Memory"); without
    it ``runs`` is held whole and read twice (a list a test gives)."""
    if not per_call:
        yield from (_finished(run) for run in runs)
        return
    if again is None:
        runs = list(runs)
        again = runs
    # Read first when the first record naming a conversation is met: a log that
    # names none (a Messages log with no suite id) is read once.
    last: dict[Key, int] | None = None
    open_: dict[Key, tuple[ImportedRun, int]] = {}
    held: ImportedRun | None = None
    held_calls = 1
    for number, run in enumerate(runs):
        try:
            key = _conversation(run, conversation_from)
            if key is not None and last is None:
                last = _last_records(again, conversation_from)
            end = None if key is None or last is None else last.get(key)
            if key is not None and end is not None and number > end:
                raise BadRecord("conversation", f"a record of conversation {key[1]!r} after "
                                "its last one, as the log was first read: the conversation "
                                "was joined without it; expected a log that does not change "
                                "while it is read")
        except BadRecord as bad:
            errors.append((run, bad))
            continue
        if key is None:
            if held is not None and len(run.trajectory) > len(held.trajectory) \
                    and run.trajectory[:len(held.trajectory)] == held.trajectory:
                held_calls += 1
                held = _merged(held, run, EXTENDS, held_calls)
                continue
            if held is not None:
                yield _finished(held)
            held, held_calls = run, 1
            continue
        first, calls = open_.get(key, (None, 0))
        merged = run if first is None else _merged(first, run, SAME_CONVERSATION, calls + 1)
        if end == number:
            # Its last record: the conversation is whole, and let go.
            open_.pop(key, None)
            yield _finished(merged)
        else:
            open_[key] = (merged, calls + 1)
    if held is not None:
        yield _finished(held)
    # Conversations the first reading did not see end (a log that grew meanwhile).
    yield from (_finished(run) for run, _ in open_.values())


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
