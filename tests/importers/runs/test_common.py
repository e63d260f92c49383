"""What the run importers share: harness scores as labels, checked JSON, paired results."""

from __future__ import annotations

import math

import pytest

from metaeval.contract import JsonValue, Message, ToolCall, ToolResult
from metaeval.importers.runs.common import (
    BadRecord,
    ImportedRun,
    LabelRule,
    json_value,
    run_line,
)


def run(score: JsonValue = "C", **overrides: object) -> ImportedRun:
    fields: dict[str, object] = {
        "id": "r1", "source": "log.eval#samples[0]", "task_id": "t",
        "trajectory": (Message("user", "hi"), ToolCall("c1", "lookup", {}),
                       ToolResult("c1", "ok"), Message("assistant", "done")),
        "scores": {"match": score}}
    fields.update(overrides)
    return ImportedRun(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(("score", "verdict"), [
    ("C", "pass"), (True, "pass"), (1, "pass"), (1.0, "pass"),
    ("I", "fail"), (False, "fail"), (0, "fail")])
def test_a_score_the_rule_knows_becomes_the_label(score: JsonValue, verdict: str) -> None:
    line = run_line(run(score), LabelRule("match"))
    assert line["label"] == {"verdict": verdict, "labeller": "score:match"}


@pytest.mark.parametrize("score", ["P", 0.5, None, "correct", [1]])
def test_a_score_the_rule_cannot_map_is_an_error_not_a_guess(score: JsonValue) -> None:
    with pytest.raises(BadRecord, match=r"expected one of 'C', True, 1, 'I', False, 0") as e:
        run_line(run(score), LabelRule("match"))
    assert e.value.field == "scores.match"


def test_a_boolean_rule_value_never_stands_for_a_number() -> None:
    # 1 == True in Python: a rule of booleans alone must not pass a score of 1.
    with pytest.raises(BadRecord):
        LabelRule("match", passing=(True,), failing=(False,)).verdict(run(1))


def test_without_a_rule_a_line_has_no_label() -> None:
    assert "label" not in run_line(run())


def test_a_result_for_no_earlier_call_is_named() -> None:
    orphan = run(trajectory=(Message("user", "hi"), ToolResult("c9", "ok")))
    with pytest.raises(BadRecord, match="answers call 'c9', which no earlier tool call has"):
        run_line(orphan)


@pytest.mark.parametrize(("value", "where"), [
    ({"a": [1.0, math.nan]}, "x.a[1]"), ({"a": {1: "b"}}, "x.a"), ({"a": object()}, "x.a")])
def test_only_finite_json_comes_from_a_foreign_library(value: object, where: str) -> None:
    with pytest.raises(BadRecord) as e:
        json_value(value, "x")
    assert e.value.field == where


def test_json_from_a_foreign_library_is_kept_as_it_is() -> None:
    assert json_value({"a": [1, 2.5, "x", None, True], "b": {}}, "x") == {
        "a": [1, 2.5, "x", None, True], "b": {}}
