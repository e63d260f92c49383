"""Fuzz the run importers' readers of foreign records: whatever JSON stands where an
Anthropic message, an OTLP span export or a label's score should be, the reader
either maps it or raises ``BadRecord`` naming a field; never another exception."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from metaeval.contract import JsonValue
from metaeval.importers.runs.anthropic import message_events
from metaeval.importers.runs.common import BadRecord, ImportedRun, LabelRule, run_line
from metaeval.importers.runs.otel import _run
from metaeval.importers.runs.otlp_json import spans as _spans
from tests.fuzz.strategies import json_values, texts

BLOCK_TYPES = st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image",
                               "server_tool_use", "web_search_tool_result", "audio"])
blocks = st.fixed_dictionaries({"type": BLOCK_TYPES}, optional={
    "text": json_values, "id": json_values, "name": json_values, "input": json_values,
    "tool_use_id": json_values, "content": json_values, "is_error": json_values})
messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]) | texts},
    optional={"content": st.lists(blocks | json_values, max_size=4) | json_values})


@given(messages)
def test_an_anthropic_message_maps_or_names_a_field(raw: dict[str, JsonValue]) -> None:
    try:
        message_events(raw, "m")
    except BadRecord as bad:
        assert bad.field.startswith("m")


any_value = st.recursive(
    st.fixed_dictionaries({}, optional={"stringValue": json_values, "intValue": json_values}),
    lambda inner: st.fixed_dictionaries({"arrayValue": st.fixed_dictionaries(
        {"values": st.lists(inner, max_size=3)})}), max_leaves=6)
attributes = st.lists(st.fixed_dictionaries({"key": st.sampled_from([
    "gen_ai.operation.name", "gen_ai.input.messages", "gen_ai.output.messages",
    "gen_ai.tool.call.id", "gen_ai.tool.call.arguments"]) | texts, "value": any_value}),
    max_size=4)
spans = st.fixed_dictionaries(
    {"traceId": st.just("t1"), "spanId": texts},
    optional={"attributes": attributes | json_values, "startTimeUnixNano": json_values,
              "status": json_values, "events": json_values})


@given(st.lists(spans, max_size=3))
def test_an_otlp_export_maps_or_names_a_field(found: list[dict[str, JsonValue]]) -> None:
    document: JsonValue = {"resourceSpans": [{"scopeSpans": [{"spans": list(found)}]}]}
    try:
        read = list(_spans(document))
        if read:
            _run("t1", read, "x.jsonl:1")
    except BadRecord as bad:
        assert isinstance(bad.field, str) and isinstance(bad.message, str)


@given(json_values)
def test_a_score_becomes_a_label_or_an_error(score: JsonValue) -> None:
    run = ImportedRun("r", "x:1", "t", (), scores={"s": score})
    try:
        line = run_line(run, LabelRule("s"))
    except BadRecord as bad:
        assert bad.field == "scores.s"
    else:
        assert line["label"] in ({"verdict": "pass", "labeller": "score:s"},
                                 {"verdict": "fail", "labeller": "score:s"})
