"""Fuzz the meta-set loader: a valid run with exactly one field broken, between two
valid runs. Whatever the break, the loader returns (never raises), every error
names the file and the broken line and can be printed, the two valid runs load
with every field they were written with, and a break that the format forbids
is an error, never a run."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from metaeval.contract import Error, Message, Outcome, Timeout, ToolCall, ToolResult
from metaeval.loaders.meta_set import MetaRun, MetaSet, load_meta_sets
from tests.fuzz.records import run_schema, runs
from tests.fuzz.strategies import (
    Break,
    Raw,
    apply,
    blank,
    breaks,
    corrupted,
    dump,
    encode,
    raw_lines,
)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-meta-set") / "runs.jsonl"


def assert_same_run(run: MetaRun, record: dict[str, object]) -> None:
    """Every field of ``record`` as written is in ``run``."""
    assert run.id == record["id"]
    assert run.category == (record.get("category") or "uncategorized")
    task = record["task"]
    assert isinstance(task, dict)
    assert run.input.task.id == task["id"]
    assert run.input.task.instruction == task.get("instruction", "")
    assert run.input.task.criteria == task.get("criteria", {})
    assert [(c.grader, c.name, c.params) for c in run.input.task.checks] == [
        (c["grader"], c.get("name", ""),
         {k: v for k, v in c.items() if k not in ("grader", "name")}) for c in task["checks"]]
    events: list[object] = []
    for e in record["trajectory"]:  # type: ignore[attr-defined]
        kind = e["type"]
        events.append(
            Message(e["role"], e["content"]) if kind == "message"
            else ToolCall(e["id"], e["tool"], e["args"]) if kind == "tool_call"
            else ToolResult(e["call_id"], e["content"]) if kind == "tool_result"
            else (Timeout if kind == "timeout" else Error)(e.get("detail", "")))
    assert list(run.input.trajectory.events) == events
    assert run.input.initial_state == record.get("initial_state", {})
    assert run.input.final_state == record.get("final_state", {})
    label = record["label"]
    assert isinstance(label, dict)
    assert run.label.verdict is Outcome(label["verdict"])
    assert run.label.score == label.get("score")
    assert {k: v.value for k, v in run.label.criteria.items()} == label.get("criteria", {})
    assert (run.label.rationale, run.label.labeller) == (label.get("rationale", ""),
                                                          label.get("labeller", ""))


def load_between(path: Path, middle: bytes, first: dict[str, object],
                 last: dict[str, object], ascii_only: bool) -> MetaSet:
    lines = [encode(dump(first, ascii_only=ascii_only)), middle,
             encode(dump(last, ascii_only=ascii_only))]
    path.write_bytes(b"\n".join(lines) + b"\n")
    loaded = load_meta_sets([path])
    for error in loaded.errors:
        assert (error.path, error.line) == (str(path), 2), error
        text = str(error)
        assert text.startswith(f"{path}:2:")
        text.encode("utf-8")  # printable: no lone surrogate reaches the output
        assert len(text) < 2_000, text[:200]
    loaded_first = [r for r in loaded.runs if r.source == f"{path}:1"]
    loaded_last = [r for r in loaded.runs if r.source == f"{path}:3"]
    assert len(loaded_first) == 1 and len(loaded_last) == 1
    assert_same_run(loaded_first[0], first)
    assert_same_run(loaded_last[0], last)
    return loaded


@given(runs(run_id="good-first"), runs(run_id="good-last"), runs(), st.booleans())
def test_a_valid_run_loads_with_every_field(data_file: Path, first: dict[str, object],
                                            last: dict[str, object], run: dict[str, object],
                                            ascii_only: bool) -> None:
    if str(run["id"]).startswith("good-"):
        run["id"] = "other"
    loaded = load_between(data_file, encode(dump(run, ascii_only=ascii_only)), first, last,
                          ascii_only)
    assert loaded.errors == ()
    assert_same_run(next(r for r in loaded.runs if r.source.endswith(":2")), run)


@st.composite
def broken_runs(draw: st.DrawFn) -> tuple[dict[str, object], Break]:
    run = draw(runs(run_id="middle"))
    return run, draw(breaks(run, run_schema))


def _seed(run: dict[str, object], brk: Break) -> tuple[dict[str, object], Break]:
    return run, brk


SEED_RUN: dict[str, object] = {
    "id": "middle", "category": "near_miss",
    "task": {"id": "t", "checks": [{"grader": "no_tool_called", "tool": "cancel_order"}]},
    "trajectory": [{"type": "tool_call", "id": "c1", "tool": "get_order",
                    "args": {"order_id": "A-1"}},
                   {"type": "tool_result", "call_id": "c1", "content": {"ok": True}},
                   {"type": "message", "role": "assistant", "content": "done"}],
    "label": {"verdict": "pass", "score": 4, "criteria": {"no_tool_called": "pass"}}}


# Fixed neighbours keep the broken-line tests cheap; the test above round-trips
# generated ones.
FIRST = SEED_RUN | {"id": "good-first"}
LAST = SEED_RUN | {"id": "good-last"}


@given(st.just(FIRST), st.just(LAST), broken_runs(), st.booleans())
# The cases of issue 13: a typo that passed ("arg" for "args"), a run with no
# trajectory, code named as a grader, a lone surrogate in a category or a check
# name, JSON nested a thousand deep, numbers too large for a float.
@example(FIRST, LAST,
         _seed(SEED_RUN, Break("rename", ("trajectory", 0, "args"), "arg", True)), True)
@example(FIRST, LAST,
         _seed(SEED_RUN, Break("drop", ("trajectory",), must_fail=True)), True)
@example(FIRST, LAST,
         _seed(SEED_RUN, Break("replace", ("task", "checks", 0),
                               {"grader": "os:system", "command": "echo PWNED > pwned.txt"},
                               True)), True)
@example(FIRST, LAST,
         _seed(SEED_RUN, Break("replace", ("task", "checks", 0),
                               {"grader": "judge", "judge": "os:system", "criterion": "x"},
                               True)), True)
@example(FIRST, LAST,
         _seed(SEED_RUN, Break("replace", ("category",), "\ud800", True)), False)
@example(FIRST, LAST,
         _seed(SEED_RUN, Break("replace", ("category",), "\ud800", True)), True)
@example(FIRST, LAST,
         _seed(SEED_RUN, Break("replace", ("initial_state",),
                               Raw("[" * 1000 + "]" * 1000), True)), True)
@example(FIRST, LAST,
         _seed(SEED_RUN, Break("replace", ("label", "score"), Raw("1e309"), True)), True)
@example(FIRST, LAST,
         _seed(SEED_RUN, Break("replace", ("label", "score"), 10**400, True)), True)
@example(FIRST, LAST,
         _seed(SEED_RUN, Break("replace", ("label", "verdict"), 99, True)), True)
def test_a_run_with_one_field_broken_is_an_error_on_its_line_or_loads(
        data_file: Path, first: dict[str, object], last: dict[str, object],
        case: tuple[dict[str, object], Break], ascii_only: bool) -> None:
    run, brk = case
    broken = apply(run, brk)
    here = Path.cwd() / "pwned.txt"
    loaded = load_between(data_file, encode(dump(broken, ascii_only=ascii_only)), first, last,
                          ascii_only)
    assert not here.exists()
    middle = [r for r in loaded.runs if r.source.endswith(":2")]
    if brk.must_fail:
        assert middle == [], f"{brk} loaded"
    assert (len(middle) == 1) != bool(loaded.errors)


@given(st.just(FIRST), st.just(LAST),
       runs(run_id="middle").flatmap(lambda r: corrupted(encode(dump(r)))) | raw_lines)
@example(FIRST, LAST, b"\xff")
@example(FIRST, LAST, encode(dump(SEED_RUN))[:10] + b"\xc3")
def test_a_line_of_bytes_that_is_not_a_run_is_an_error_on_its_line(
        data_file: Path, first: dict[str, object], last: dict[str, object],
        middle: bytes) -> None:
    loaded = load_between(data_file, middle, first, last, True)
    assert len(loaded.runs) == (2 if blank(middle) or loaded.errors else 3)
