"""One rule for a labels file's history, read alike by every reader of labels, the
labelling page's store and ``metaeval label --merge``.

A labels file only grows. The first row for one annotator's (target, check) is
that annotator's label. A later row for the same key is a change only when it
says which label it changes (``was``, equal to the label in force when it was
written) and, from the labelling page, when (``at``); then it counts instead of
the earlier one, which stays in the file as the trace of what was there. A later
row without ``was``, or with a ``was`` that is not the label in force, is refused
naming both lines: a second label nobody asked to change it with is a mistake
(two annotators under one name, a file pasted twice), not a change to guess at.

This module only applies the rule; it reads no file and knows no row format.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from metaeval.errors import BadField, shown

WAS = "was"
"""The column of a change: the label it replaces, as written in the file."""
AT = "at"
"""The column of when a row was written (ISO 8601, UTC), as the labelling page writes it."""
HISTORY_COLUMNS = (WAS, AT)
MAX_AT = 40

R = TypeVar("R")


def checked_at(value: object) -> str:
    """An ``at`` field: empty when absent, else an ISO 8601 time as written."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or len(value) > MAX_AT:
        raise BadField(AT, f"got {shown(value)}; expected an ISO 8601 time such as "
                           "'2026-12-06T19:50:00Z'")
    try:
        datetime.datetime.fromisoformat(value)
    except ValueError as e:
        raise BadField(AT, f"got {shown(value)}; expected an ISO 8601 time such as "
                           "'2026-12-06T19:50:00Z'") from e
    return value


def now() -> str:
    """The ``at`` of a row written now."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds").replace(
        "+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Refused(Generic[R]):
    """A row the rule refuses, with the column and the reason."""

    row: R
    field: str
    message: str


@dataclass(frozen=True, slots=True)
class Rows(Generic[R]):
    """How to see a row: its key, its label and ``was`` (as written), where it is,
    and the words for what it labels (``run 'r1' check '*'``)."""

    key: Callable[[R], Hashable]
    label: Callable[[R], object]
    was: Callable[[R], object]
    source: Callable[[R], str]
    annotator: Callable[[R], str]
    what: Callable[[R], str]


def in_force(rows: Iterable[R], how: Rows[R]) -> tuple[list[R], list[Refused[R]]]:
    """The row in force for each key, in the order keys first appear, and each row
    the rule refuses (see the module docstring)."""
    current: dict[Hashable, R] = {}
    refused: list[Refused[R]] = []
    for row in rows:
        key = how.key(row)
        before = current.get(key)
        was = how.was(row)
        if before is None:
            if was is not None:
                refused.append(Refused(row, WAS, (
                    f"got {shown(was)}, a change of {how.what(row)}; expected a first label "
                    f"(no {WAS!r}): {shown(how.annotator(row))} has no earlier label of it")))
                continue
            current[key] = row
            continue
        if was is None:
            refused.append(Refused(row, "annotator", (
                f"{shown(how.annotator(row))} already labelled {how.what(row)} (at "
                f"{how.source(before)}); expected one label per annotator, or a change that "
                f"says which label it replaces ({WAS!r})")))
            continue
        if was != how.label(before):
            refused.append(Refused(row, WAS, (
                f"got {shown(was)}; expected {shown(how.label(before))}, the label of "
                f"{how.what(row)} in force at {how.source(before)}")))
            continue
        current[key] = row
    return list(current.values()), refused
