"""OpenTelemetry GenAI before semantic conventions 1.37 (one log record a message,
``gen_ai.system`` for the provider), as OpenTelemetry's own OpenAI instrumentation
writes it (tests/importers/runs/otel_events_writer.py wrote the committed file with
the real ``openai`` client on a mock transport). Read by ``meta-eval --runs
otel:PATH`` with checks declared once; the figures must equal scikit-learn's on this
test's own reading of the raw OTLP records, never metaeval's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.contract import Timeout
from metaeval.importers.runs.otel import read_otel
from metaeval.untrusted_json import LoadError
from tests.importers.runs.measured import GUARD, SAYS, measured_as_scikit_learn
from tests.importers.runs.otel_events_writer import SCENARIOS

LOG = Path(__file__).parent / "data" / "otel_openai_v2.jsonl"
# What the annotators said of each conversation: o7 they fail on the guard though no
# refund was called (a disagreement the figures must show); o1 mentions a refund it
# did not make, which they fail on the answer check.
HUMAN = {GUARD: {"o1": "pass", "o2": "fail", "o3": "pass", "o4": "fail", "o5": "pass",
                 "o6": "fail", "o7": "fail", "o8": "fail"},
         SAYS: {"o1": "fail", "o2": "pass", "o3": "fail", "o4": "pass", "o5": "fail",
                "o6": "pass", "o7": "pass", "o8": "pass"}}


def _value(raw: object) -> object:
    """An OTLP AnyValue, read here with no help from metaeval."""
    assert isinstance(raw, dict)
    ((kind, value),) = raw.items()
    if kind == "kvlistValue":
        return {kv["key"]: _value(kv["value"]) for kv in value.get("values", [])}
    if kind == "arrayValue":
        return [_value(v) for v in value.get("values", [])]
    return value


def own_reading() -> dict[str, dict[str, object]]:
    """Each trace of the raw file: which scenario it ran (its user message), the tools
    the model called, its last choice's text and finish reason."""
    traces: dict[str, dict[str, object]] = {}
    for line in LOG.read_text().splitlines():
        document = json.loads(line)
        for resource in document.get("resourceLogs", []):
            for scope in resource["scopeLogs"]:
                for record in scope["logRecords"]:
                    trace = traces.setdefault(record["traceId"], {"tools": []})
                    body = _value(record["body"])
                    assert isinstance(body, dict)
                    if record["eventName"] == "gen_ai.user.message":
                        trace["scenario"] = str(body["content"]).split()[2].rstrip(",")
                    elif record["eventName"] == "gen_ai.choice":
                        message = body["message"]
                        assert isinstance(message, dict)
                        tools = trace["tools"]
                        assert isinstance(tools, list)
                        tools += [c["function"]["name"] for c in message.get("tool_calls", [])]
                        trace["last"] = message.get("content")
                        trace["finish"] = body["finish_reason"]
    return traces


def graded(trace: dict[str, object], check: str) -> str:
    tools, last = trace["tools"], trace["last"]
    assert isinstance(tools, list)
    if check == GUARD:
        return "fail" if "refund" in tools else "pass"
    if trace["finish"] == "length":  # cut off: no answer to read
        return "unscored"
    return "pass" if "refund" in str(last).casefold() else "fail"


def test_the_conventions_before_1_37_read_as_the_real_instrumentation_wrote_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    traces = own_reading()
    assert sorted(str(t["scenario"]) for t in traces.values()) == [s.id for s in SCENARIOS]
    rows = measured_as_scikit_learn(tmp_path, monkeypatch, f"otel:{LOG}", traces, HUMAN,
                                    graded)
    assert rows[SAYS]["unscored"] == 1  # the reply cut by its token limit
    assert rows[GUARD]["fp"] == 1  # o7: failed by people, passed by the guard (let through)


def test_each_trace_is_one_conversation_with_its_provider_and_how_it_ended() -> None:
    errors: list[LoadError] = []
    runs = {r.instruction.split()[2].rstrip(","): r for r in read_otel([LOG], errors)}
    assert errors == []
    assert sorted(runs) == [s.id for s in SCENARIOS]
    for s in SCENARIOS:
        run = runs[s.id]
        calls = [e.tool for e in run.trajectory if hasattr(e, "tool")]
        assert calls == list(s.tools)
        assert run.metadata["provider"] == "openai"  # gen_ai.system, before its rename
        cut = isinstance(run.trajectory[-1], Timeout)
        assert cut is (s.finish == "length"), s.id


PER_CALL = Path(__file__).parent / "data" / "otel_openai_v2_per_call.jsonl"


def test_a_per_call_log_of_one_trace_a_call_is_one_run_a_conversation(
        tmp_path: Path) -> None:
    # The same conversations with no harness span around them: every model call is a
    # trace of its own, and each call re-sends the conversation so far.
    traces = {json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
              for line in PER_CALL.read_text().splitlines() if "resourceSpans" in line}
    assert len(traces) == sum(len(s.tools) + 1 for s in SCENARIOS)  # one a call
    out = tmp_path / "runs.jsonl"
    done = CliRunner().invoke(main, ["import", "otel", str(PER_CALL), "-o", str(out)])
    assert done.exit_code == 0, done.output
    runs = {r["task"]["instruction"].split()[2].rstrip(","): r
            for r in map(json.loads, out.read_text().splitlines())}
    assert sorted(runs) == [s.id for s in SCENARIOS]
    for s in SCENARIOS:
        run = runs[s.id]
        calls = [e["tool"] for e in run["trajectory"] if e["type"] == "tool_call"]
        assert calls == list(s.tools), s.id
        assert run["metadata"]["joined"] == {"calls": len(s.tools) + 1,
                                             "rule": "extends the previous call's messages"}
        assert (run["trajectory"][-1]["type"] == "timeout") is (s.finish == "length")
