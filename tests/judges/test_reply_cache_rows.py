"""A damaged row of the judge's reply cache is a miss, never a crash: the judge is
asked again and the row is rewritten."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from metaeval.judges.cache import CachedJudge, ReplyCache
from metaeval.judges.fakes import SteadyJudge

DAMAGED = {
    "nested too deep": "[" * 1000 + "]" * 1000,
    "not JSON": "{value",
    "not an object": "[1]",
    "a string for a number": '{"value": "nan"}',
    "an integer too large for a float": '{"value": ' + "9" * 400 + "}",
    "a repeated key": '{"value": 1, "value": 5}',
    "no value": '{"choice": "Z"}',
}


@pytest.mark.parametrize("damage", list(DAMAGED))
def test_a_damaged_row_is_asked_again_and_rewritten(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "judge-cache.sqlite"
    first = CachedJudge(SteadyJudge(), ReplyCache(path)).score("q", "an answer", "an answer")
    assert first.value == 5.0 and not first.call.cached
    with sqlite3.connect(path) as db:
        db.execute("UPDATE replies SET value = ?", (DAMAGED[damage],))
    db.close()
    again = CachedJudge(SteadyJudge(), ReplyCache(path)).score("q", "an answer", "an answer")
    assert (again.value, again.call.cached) == (5.0, False)
    served = CachedJudge(SteadyJudge(), ReplyCache(path)).score("q", "an answer", "an answer")
    assert (served.value, served.call.cached) == (5.0, True)  # rewritten good
