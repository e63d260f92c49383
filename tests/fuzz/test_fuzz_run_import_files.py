"""Fuzz the run importers a file at a time: good records around one record broken in
exactly one field (or with bytes that are not UTF-8 put in its line). Whatever the
break, `import_runs` raises nothing, every good record is a run, and the broken one
is either a run or an error naming its line (or sample). Memory is bounded by one
record a time (tests/importers/runs/test_import_memory.py; SECURITY.md)."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from metaeval.commands.import_runs import ImportRequest, import_runs
from metaeval.contract import JsonObject
from tests.fuzz.strategies import Break, Raw, apply, breaks, corrupted, dump, encode
from tests.importers.runs.conftest import REQUEST
from tests.importers.runs.otlp import chat, document, span, text

GOOD = 3


def no_schema(record: dict[str, object], path: tuple[str | int, ...]) -> None:
    return None  # which keys are required is the reader's to say; only poison must fail


def imported(fmt: str, name: str, data: bytes) -> tuple[list[object], list[tuple[int, str]]]:
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        result = import_runs(ImportRequest(fmt, (path,)))
    return ([line["id"] for line in result.lines],
            [(e.line, e.field) for e in result.errors])


def lines(records: list[dict[str, object]], bad: int, brk: Break | None,
          noise: bytes | None) -> bytes:
    out = [encode(dump(r, ascii_only=False)) for r in records]
    if noise is not None:
        out[bad] = noise
    return b"\n".join(out) + b"\n"


@st.composite
def broken(draw: st.DrawFn, good: dict[str, object]
           ) -> tuple[int, dict[str, object], Break | None, bytes | None]:
    """Where the bad record stands, the record, the break made, and its line's bytes
    when they were corrupted instead."""
    bad = draw(st.integers(0, GOOD))
    if draw(st.booleans()):
        line = encode(dump(good, ascii_only=False))
        return bad, good, None, draw(corrupted(line))
    brk = draw(breaks(good, no_schema))
    return bad, apply(good, brk), brk, None


ANTHROPIC_GOOD: dict[str, object] = copy.deepcopy(REQUEST)  # type: ignore[arg-type]
ANTHROPIC_GOOD["id"] = "bad"


@given(broken(ANTHROPIC_GOOD))
def test_an_anthropic_log_loses_no_record_but_the_broken_one(
        case: tuple[int, dict[str, object], Break | None, bytes | None]) -> None:
    bad, record, brk, noise = case
    assume(not (brk and brk.path == ("id",) and str(brk.new).startswith("good-")))
    records = [{**copy.deepcopy(ANTHROPIC_GOOD), "id": f"good-{i}"} for i in range(GOOD)]
    records.insert(bad, record)
    ids, errors = imported("anthropic", "log.jsonl", lines(records, bad, brk, noise))
    assert [i for i in ids if str(i).startswith("good-")] == [f"good-{i}" for i in range(GOOD)]
    assert len(ids) in (GOOD, GOOD + 1)
    if len(ids) == GOOD:  # the broken one was refused: named by its line
        assert errors and {line for line, _ in errors} == {bad + 1}
    if brk is not None and brk.must_fail:
        assert len(ids) == GOOD


def otel_trace(trace: str) -> dict[str, object]:
    asked: JsonObject = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "refund", "arguments": {"order": "A-1"}}]}
    tool = span("s2", "execute_tool", 3, 4, {"gen_ai.tool.call.id": "c1",
                                             "gen_ai.tool.name": "refund",
                                             "gen_ai.tool.call.result": "ok"}, trace=trace)
    tool["status"] = {"code": 1}
    return document(chat("s1", 1, 2, [text("user", "q")], [asked], trace=trace,
                         gen_ai__conversation__id=f"conv-{trace}"), tool)  # type: ignore[return-value]


@given(broken(otel_trace("bad")))
def test_an_otel_export_loses_no_trace_but_the_broken_one(
        case: tuple[int, dict[str, object], Break | None, bytes | None]) -> None:
    bad, record, brk, noise = case
    # A break that moves the broken span into a good trace breaks that trace too.
    assume(not (brk and str(brk.new).startswith(("good", "conv-good"))))
    records = [otel_trace(f"good{i}") for i in range(GOOD)]
    records.insert(bad, record)
    ids, errors = imported("otel", "spans.jsonl", lines(records, bad, brk, noise))
    assert sorted(str(i) for i in ids if str(i).startswith("conv-good")) == [
        f"conv-good{i}" for i in range(GOOD)]
    # The broken document: no run, one, or two (a span moved to a trace of its own).
    assert len(ids) <= GOOD + 2
    if brk is not None and brk.must_fail:
        assert len(ids) == GOOD and {line for line, _ in errors} == {bad + 1}


HAS_INSPECT = importlib.util.find_spec("inspect_ai") is not None


def inspect_sample(sid: str) -> dict[str, object]:
    return {"id": sid, "epoch": 1, "input": f"task {sid}", "target": "done",
            "messages": [{"role": "user", "content": f"task {sid}"},
                         {"role": "assistant", "content": "", "tool_calls": [
                             {"id": "c1", "function": "refund", "arguments": {"a": 1}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                         {"role": "assistant", "content": "done"}],
            "scores": {"includes": {"value": "C"}}, "store": {"k": "v"}}


@pytest.mark.skipif(not HAS_INSPECT, reason="inspect_ai is not installed")
@given(broken(inspect_sample("bad")))
def test_an_inspect_log_loses_no_sample_but_the_broken_one(
        case: tuple[int, dict[str, object], Break | None, bytes | None]) -> None:
    bad, record, brk, noise = case
    assume(not (brk and str(brk.new).startswith("good")))
    samples = [encode(dump(inspect_sample(f"good{i}"), ascii_only=False)) for i in range(GOOD)]
    samples.insert(bad, noise if noise is not None else encode(dump(record, ascii_only=False)))
    header = json.dumps({"version": 2, "eval": {"task": "t", "model": "m"}}).encode()[:-1]
    data = header + b', "samples": [' + b", ".join(samples) + b"]}"
    ids, errors = imported("inspect", "log.json", data)
    if brk is not None and isinstance(brk.new, Raw) and \
            brk.new.text.count("[") != brk.new.text.count("]"):
        # Brackets that never close: the document is no JSON, and where the broken
        # sample would end cannot be known; one error for the file.
        assert ids == [] and [line for line, _ in errors] == [0]
        return
    assert sorted(str(i) for i in ids if str(i).startswith("t:good")) == [
        f"t:good{i}:1" for i in range(GOOD)]
    if len(ids) == GOOD:
        assert errors and all(field.startswith(f"samples[{bad}]") for _, field in errors)
    if brk is not None and brk.must_fail:
        assert len(ids) == GOOD
