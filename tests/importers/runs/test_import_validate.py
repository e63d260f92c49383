"""What `metaeval import` writes, `metaeval validate` accepts: a record the meta-set
reader would refuse once written (an empty tool id or name, a value nested one level
too deep where the line holds it, a tool span without its tool's name, an empty
conversation id) is an import error naming the record, and the file written is read
back whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli.app import main
from metaeval.contract import JsonObject, JsonValue
from tests.importers.runs.conftest import REQUEST
from tests.importers.runs.otlp import chat, document, span, text


def nested(levels: int) -> JsonValue:
    value: JsonValue = {}
    for _ in range(levels - 1):
        value = {"k": value}
    return value


def tool_use(call_id: str, name: str) -> JsonObject:
    return {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": call_id, "name": name, "input": {}}]}]}


ANTHROPIC: dict[str, JsonObject] = {
    "empty tool id": tool_use("", "refund"),
    "empty tool name": tool_use("t1", ""),
    # 63 levels at line level 2 is 64 in the request; written under
    # metadata.request_metadata it would be 65.
    "deep metadata": {**REQUEST, "id": "deep", "metadata": nested(63)},
    "empty result id": {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "", "content": "x"}]}]},
}

GOOD_TRACE = document(chat("s1", 1, 2, [text("user", "q")], [text("assistant", "a")],
                           trace="good", gen_ai__conversation__id="conv-good"))
OTEL: dict[str, JsonObject] = {
    "no tool name": document(span("s2", "execute_tool", 1, 2, {"gen_ai.tool.call.id": "c1"},
                                  trace="bad")),
    "empty conversation id": document(chat("s2", 1, 2, [text("user", "q")],
                                           [text("assistant", "a")], trace="bad",
                                           gen_ai__conversation__id="")),
}


def import_then_validate(tmp_path: Path, fmt: str, good: JsonValue, bad: JsonValue) -> str:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    out = tmp_path / "runs.jsonl"
    runner = CliRunner()
    imported = runner.invoke(main, ["import", fmt, str(log), "-o", str(out)])
    assert imported.exit_code == 2, imported.output
    assert f"{log}:2" in imported.output  # the bad record, named
    assert len(out.read_text().splitlines()) == 1  # the good one, written
    validated = runner.invoke(main, ["validate", str(out)])
    assert validated.exit_code == 0, validated.output
    return imported.output


@pytest.mark.parametrize("case", sorted(ANTHROPIC))
def test_an_anthropic_record_validate_would_refuse_is_an_import_error(tmp_path: Path,
                                                                     case: str) -> None:
    import_then_validate(tmp_path, "anthropic", REQUEST, ANTHROPIC[case])


@pytest.mark.parametrize("case", sorted(OTEL))
def test_an_otel_trace_validate_would_refuse_is_an_import_error(tmp_path: Path,
                                                               case: str) -> None:
    import_then_validate(tmp_path, "otel", GOOD_TRACE, OTEL[case])


def test_the_deep_value_is_named_where_the_line_would_hold_it(tmp_path: Path) -> None:
    output = import_then_validate(tmp_path, "anthropic", REQUEST, ANTHROPIC["deep metadata"])
    assert "metadata.request_metadata" in output and "deeper than 64 levels" in output
