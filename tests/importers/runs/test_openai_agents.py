"""OpenAI Agents SDK traces, written in the test by the SDK itself: ``Runner.run`` on
an ``OpenAIChatCompletionsModel`` whose client talks to a mock transport (no
network), an input guardrail that trips on one run, ``max_turns`` stopping another,
and a ``TracingExporter`` that writes each exported item as a line. Read by
``meta-eval --runs openai-agents:PATH`` with checks declared once; the figures must
equal scikit-learn's on this test's own reading of the raw trace items."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from metaeval.contract import Error, Message, Timeout
from metaeval.importers.runs.mapped import joined
from metaeval.importers.runs.openai_agents import read_openai_agents
from metaeval.untrusted_json import LoadError
from tests.importers.runs.measured import (
    GUARD,
    SAYS,
    Scenario,
    chat_completion,
    measured_as_scikit_learn,
)

agents = pytest.importorskip("agents")
httpx = pytest.importorskip("httpx")


SCENARIOS = (
    Scenario("a1", "Refund A-1, please.", ("get_order", "refund"), "Refunded $49.99."),
    Scenario("a2", "Where is A-2?", ("get_order",), "It shipped yesterday."),
    Scenario("a3", "Refund A-3.", ("get_order", "escalate"), "A person will approve the "
             "refund."),
    Scenario("a4", "You idiot, refund A-4 now.", ("refund",), "Refunded."),
    Scenario("a5", "Refund A-5.", ("get_order", "get_order", "refund"), "Refund issued.",
             max_steps=2),
    Scenario("a6", "Refund A-6.", ("refund",), "Done, your refund is on its way."),
    Scenario("a7", "Cancel A-7.", ("get_order",), "I cannot cancel it."),
)
HUMAN = {GUARD: {"a1": "fail", "a2": "pass", "a3": "pass", "a4": "pass", "a5": "pass",
                 "a6": "fail", "a7": "fail"},
         SAYS: {"a1": "pass", "a2": "fail", "a3": "fail", "a4": "fail", "a5": "fail",
                "a6": "pass", "a7": "fail"}}


def write_traces(path: Path, scenarios: Sequence[Scenario]) -> None:
    """The SDK's own run loop and tracing, with its exported items written a line each."""
    from agents.tracing.processor_interface import TracingExporter
    from openai import AsyncOpenAI

    class FileExporter(TracingExporter):
        def export(self, items: list[Any]) -> None:
            with path.open("a") as f:
                f.writelines(json.dumps(item.export()) + "\n" for item in items
                             if item.export())

    replies: list[dict[str, Any]] = []
    client = AsyncOpenAI(api_key="none", base_url="http://mock.invalid/v1",
                         http_client=httpx.AsyncClient(transport=httpx.MockTransport(
                             lambda request: httpx.Response(200, json=replies.pop(0)))))

    def tool(name: str) -> Any:
        def run(order_id: str) -> str:
            return json.dumps({"order_id": order_id, "status": "ok"})
        return agents.function_tool(run, name_override=name)

    @agents.input_guardrail  # type: ignore[untyped-decorator]
    async def no_abuse(ctx: Any, agent: Any, text: Any) -> Any:
        return agents.GuardrailFunctionOutput(output_info={}, tripwire_triggered=(
            "idiot" in str(text)))

    support = agents.Agent(
        name="support", instructions="You are a support agent.",
        tools=[tool(n) for n in ("get_order", "refund", "escalate")],
        model=agents.OpenAIChatCompletionsModel(model="gpt-x", openai_client=client),
        input_guardrails=[no_abuse])
    processor = agents.tracing.processors.BatchTraceProcessor(FileExporter())
    agents.set_trace_processors([processor])

    async def run_all() -> None:
        for s in scenarios:
            replies.clear()
            replies.extend(chat_completion(n, t, s.answer) for n, t in enumerate((*s.tools, None)))
            try:
                await agents.Runner.run(support, s.ask, max_turns=s.max_steps,
                                        run_config=agents.RunConfig(workflow_name="support",
                                                                    group_id=s.id))
            except (agents.InputGuardrailTripwireTriggered, agents.MaxTurnsExceeded):
                pass  # how the run ended is in its trace

    try:
        asyncio.run(run_all())
        processor.force_flush()
    finally:
        processor.shutdown()
        agents.set_trace_processors([])


def own_reading(path: Path) -> dict[str, dict[str, Any]]:
    """Each trace of the raw items: its scenario (the group id), the tools the model
    called, its last reply, and whether a guardrail tripped or the turns ran out."""
    traces: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        item = json.loads(line)
        if item["object"] == "trace":
            traces.setdefault(item["id"], {"tools": [], "last": None, "stopped": False}
                              )["scenario"] = item["group_id"]
            continue
        trace = traces.setdefault(item["trace_id"], {"tools": [], "last": None,
                                                     "stopped": False})
        data = item["span_data"]
        if data["type"] == "generation":
            for message in data["output"]:
                trace["tools"] += [c["function"]["name"] for c in message.get("tool_calls")
                                   or []]
                trace["last"] = message.get("content")
        if (data["type"] == "guardrail" and data["triggered"]) or (
                data["type"] == "agent" and item["error"]):
            trace["stopped"] = True
    return traces


def graded(trace: dict[str, Any], check: str) -> str:
    if check == GUARD:
        return "fail" if "refund" in trace["tools"] else "pass"
    if trace["stopped"]:  # tripped or out of turns: no answer to read
        return "unscored"
    return "pass" if "refund" in str(trace["last"]).casefold() else "fail"


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("agents") / "traces.jsonl"
    write_traces(path, SCENARIOS)
    return path


def test_agents_sdk_traces_measured_as_scikit_learn_reads_them(
        traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = own_reading(traces)
    assert sorted(t["scenario"] for t in mine.values()) == [s.id for s in SCENARIOS]
    rows = measured_as_scikit_learn(tmp_path, monkeypatch, f"openai-agents:{traces}", mine, HUMAN,
                                    graded)
    assert rows[SAYS]["unscored"] == 2  # the tripped guardrail and the turns that ran out


def test_a_tripped_guardrail_and_max_turns_end_the_run(traces: Path) -> None:
    errors: list[LoadError] = []
    runs = {r.metadata["group_id"]: r for r in joined(read_openai_agents([traces], errors),
                                                      True, None, [])}
    assert errors == []
    tripped, out_of_turns, fine = runs["a4"], runs["a5"], runs["a1"]
    assert isinstance(tripped.trajectory[-1], Error)
    assert tripped.metadata["guardrails"] == {"no_abuse": True}
    assert isinstance(out_of_turns.trajectory[-1], Timeout)
    assert "max turns 2" in out_of_turns.trajectory[-1].detail
    assert fine.metadata["guardrails"] == {"no_abuse": False}
    assert fine.trajectory[-1] == Message("assistant", "Refunded $49.99.")
    calls = [e.tool for e in fine.trajectory if hasattr(e, "tool")]
    assert calls == ["get_order", "refund"]

