"""OpenInference spans, written in the test by OpenInference's own OpenAI
instrumentation (the real ``openai`` client on a mock transport, no network) and
its tracer for the harness's AGENT, GUARDRAIL, TOOL and EVALUATOR spans, exported
by the OpenTelemetry SDK's OTLP JSON file exporter. Read by ``meta-eval --runs
openinference:PATH`` with checks declared once; the figures must equal
scikit-learn's on this test's own reading of the raw spans."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from metaeval.contract import Error, Timeout
from metaeval.importers.runs.openinference import read_openinference
from metaeval.untrusted_json import LoadError
from tests.importers.runs.measured import (
    GUARD,
    SAYS,
    Scenario,
    chat_completion,
    measured_as_scikit_learn,
)

pytest.importorskip("openinference.instrumentation.openai")
httpx = pytest.importorskip("httpx")


SCENARIOS = (
    Scenario("p1", "Refund A-1, please.", ("get_order", "refund"), "Refunded $49.99."),
    Scenario("p2", "Where is A-2?", ("get_order",), "It shipped yesterday."),
    Scenario("p3", "Refund A-3.", ("get_order", "escalate"), "A person will approve the "
             "refund."),
    Scenario("p4", "You idiot, refund A-4 now.", (), ""),
    Scenario("p5", "Refund A-5.", ("get_order", "refund"), "Your refund of $", "length"),
    Scenario("p6", "Refund A-6.", ("refund",), "Done, your refund is on its way."),
    Scenario("p7", "Cancel A-7.", ("get_order",), "I cannot cancel it."),
)
HUMAN = {GUARD: {"p1": "fail", "p2": "pass", "p3": "pass", "p4": "pass", "p5": "fail",
                 "p6": "pass", "p7": "fail"},
         SAYS: {"p1": "pass", "p2": "fail", "p3": "fail", "p4": "fail", "p5": "fail",
                "p6": "pass", "p7": "fail"}}


def write_spans(path: Path) -> None:
    import openai
    from openinference.instrumentation import OITracer, TraceConfig
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import Status, StatusCode

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = OITracer(provider.get_tracer("support-harness"), config=TraceConfig())
    replies: list[dict[str, Any]] = []
    client = openai.OpenAI(api_key="none", base_url="http://mock.invalid/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(
                               lambda request: httpx.Response(200, json=replies.pop(0)))))
    try:
        for s in SCENARIOS:
            with tracer.start_as_current_span(f"support {s.id}",
                                              openinference_span_kind="agent"):
                with tracer.start_as_current_span(
                        "moderation", openinference_span_kind="guardrail") as guard:
                    guard.set_input(s.ask)
                    if "idiot" in s.ask:  # tripped: the harness stops before the model
                        guard.set_status(Status(StatusCode.ERROR, "abusive input"))
                        continue
                    guard.set_output({"flagged": False})
                messages: list[Any] = [{"role": "system", "content": "You are a support agent."},
                                       {"role": "user", "content": s.ask}]
                for n, tool in enumerate((*s.tools, None)):
                    replies.append(chat_completion(n, tool, s.answer, s.finish))
                    said = client.chat.completions.create(model="gpt-x",
                                                          messages=messages).choices[0].message
                    messages.append(said.model_dump(exclude_none=True))
                    for call in said.tool_calls or []:
                        function: Any = getattr(call, "function")  # noqa: B009
                        with tracer.start_as_current_span(
                                function.name, openinference_span_kind="tool") as span:
                            span.set_tool(name=function.name,
                                          parameters=json.loads(function.arguments))
                            span.set_output(json.dumps({"status": "ok"}))
                        messages.append({"role": "tool", "tool_call_id": call.id,
                                         "content": json.dumps({"status": "ok"})})
                with tracer.start_as_current_span("judge",
                                                  openinference_span_kind="evaluator") as e:
                    e.set_output({"label": "pass"})
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def _attributes(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


def own_reading(path: Path) -> dict[str, dict[str, Any]]:
    """Each trace of the raw spans: its scenario (the AGENT span's name), the tools its
    model called (the provider's replies in ``output.value``), its last reply, its
    finish reason and whether the guardrail failed."""
    traces: dict[str, dict[str, Any]] = {}
    spans = [s for line in path.read_text().splitlines()
             for r in json.loads(line)["resourceSpans"] for ss in r["scopeSpans"]
             for s in ss["spans"]]
    for span in sorted(spans, key=lambda s: int(s["startTimeUnixNano"])):
        trace = traces.setdefault(span["traceId"], {"tools": [], "last": None,
                                                    "finish": None, "tripped": False})
        a = _attributes(span)
        kind = a.get("openinference.span.kind")
        if kind == "AGENT":
            trace["scenario"] = span["name"].split()[1]
        elif kind == "GUARDRAIL":
            trace["tripped"] = span.get("status", {}).get("code") == 2
        elif kind == "LLM":
            choice = json.loads(a["output.value"])["choices"][0]
            trace["tools"] += [c["function"]["name"] for c in choice["message"].get(
                "tool_calls") or []]
            trace["last"], trace["finish"] = choice["message"]["content"], choice[
                "finish_reason"]
    return traces


def graded(trace: dict[str, Any], check: str) -> str:
    if check == GUARD:
        return "fail" if "refund" in trace["tools"] else "pass"
    if trace["tripped"] or trace["finish"] == "length":
        return "unscored"
    return "pass" if "refund" in str(trace["last"]).casefold() else "fail"


@pytest.fixture(scope="module")
def spans(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("openinference") / "spans.jsonl"
    write_spans(path)
    return path


def test_openinference_spans_measured_as_scikit_learn_reads_them(
        spans: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = own_reading(spans)
    assert sorted(t["scenario"] for t in mine.values()) == [s.id for s in SCENARIOS]
    rows = measured_as_scikit_learn(tmp_path, monkeypatch, f"openinference:{spans}", mine, HUMAN,
                                    graded)
    assert rows[SAYS]["unscored"] == 2  # the tripped guardrail and the reply cut short


def test_a_failed_guardrail_and_a_cut_reply_end_the_run(spans: Path) -> None:
    errors: list[LoadError] = []
    runs = {r.instruction: r for r in read_openinference([spans], errors)}
    assert errors == []
    by_ask = {s.ask: s for s in SCENARIOS}
    for ask, run in runs.items():
        if not ask:  # the tripped one: no model call, so no user message was recorded
            assert isinstance(run.trajectory[-1], Error)
            assert run.metadata["guardrails"] == {"moderation": True}
            continue
        s = by_ask[ask]
        assert [e.tool for e in run.trajectory if hasattr(e, "tool")] == list(s.tools)
        assert isinstance(run.trajectory[-1], Timeout) is (s.finish == "length"), s.id
        assert run.metadata["evaluations"] == [{"name": "judge",
                                                "output": "{\"label\": \"pass\"}"}]
