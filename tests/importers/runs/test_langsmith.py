"""LangSmith run trees, written in the test by the langsmith SDK itself: an agent of
``@traceable`` functions (a chain, its ``llm`` calls to a scripted model, its ``tool``
runs) traced to a loopback server, one reply cut at its token limit, one agent that
fails; the runs read back with the SDK's ``list_runs`` and written as a team's export
does. Read by ``meta-eval --runs langsmith:PATH`` with checks declared once; the
figures must equal scikit-learn's on this test's own reading of the raw runs.
LangSmith feedback (``create_feedback``, read back with ``list_feedback``) is read as
labels."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from metaeval.contract import Error, Message, Timeout, ToolCall, ToolResult
from metaeval.importers.runs.common import ImportedRun
from metaeval.importers.runs.langsmith import feedback_labels, read_langsmith
from metaeval.importers.runs.mapped import joined
from metaeval.untrusted_json import LoadError
from tests.importers.runs.langsmith_writer import (
    PROJECT,
    langsmith_client,
    settled,
    traced,
    write_feedback,
    write_runs,
)
from tests.importers.runs.measured import GUARD, SAYS, measured_as_scikit_learn

langsmith = pytest.importorskip("langsmith")


@dataclass(frozen=True)
class Scenario:
    id: str
    ask: str
    tools: tuple[str, ...]
    answer: str
    finish: str = "stop"
    max_steps: int = 10


SCENARIOS = (
    Scenario("a1", "Refund A-1, please.", ("get_order", "refund"), "Refunded $49.99."),
    Scenario("a2", "Where is A-2?", ("get_order",), "It shipped yesterday."),
    Scenario("a3", "Refund A-3.", ("get_order", "escalate"), "A person will approve the "
             "refund."),
    Scenario("a4", "Refund A-4 now.", ("refund",), "Your refund of", finish="length"),
    Scenario("a5", "Refund A-5.", ("get_order", "get_order", "refund"), "Refund issued.",
             max_steps=2),
    Scenario("a6", "Refund A-6.", ("refund",), "Done, your refund is on its way."),
    Scenario("a7", "Cancel A-7.", ("get_order",), "I cannot cancel it."),
)
HUMAN = {GUARD: {"a1": "fail", "a2": "pass", "a3": "pass", "a4": "fail", "a5": "pass",
                 "a6": "fail", "a7": "fail"},
         SAYS: {"a1": "pass", "a2": "fail", "a3": "fail", "a4": "fail", "a5": "fail",
                "a6": "pass", "a7": "fail"}}


def _reply(n: int, tool: str | None, words: str, finish: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None if tool else words}
    if tool:
        message["tool_calls"] = [{"id": f"call_{n}", "type": "function", "function": {
            "name": tool, "arguments": json.dumps({"order_id": "A-1"})}}]
    return {"id": f"c{n}", "model": "gpt-x", "choices": [{"index": 0, "message": message,
            "finish_reason": "tool_calls" if tool else finish}]}


def run_agents(scenarios: Sequence[Scenario], thread: str | None = None) -> Any:
    """The agent of each scenario, its model and tools ``@traceable``; returns the
    body ``traced`` runs."""
    from langsmith import traceable

    replies: list[dict[str, Any]] = []

    @traceable(run_type="llm", name="ChatModel",  # type: ignore[untyped-decorator]
               metadata={"ls_provider": "openai", "ls_model_name": "gpt-x"})
    def model(messages: list[dict[str, Any]]) -> dict[str, Any]:
        return replies.pop(0)

    def tool(name: str) -> Any:
        @traceable(run_type="tool", name=name)  # type: ignore[untyped-decorator]
        def run(order_id: str) -> dict[str, Any]:
            return {"order_id": order_id, "status": "ok"}
        return run

    tools = {n: tool(n) for n in ("get_order", "refund", "escalate")}

    def agent(case: str, ask: str, max_steps: int) -> str:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": ask}]
        for _ in range(max_steps):
            message = model(messages)["choices"][0]["message"]
            messages.append(message)
            if not message.get("tool_calls"):
                return str(message["content"])
            for call in message["tool_calls"]:
                out = tools[call["function"]["name"]](**json.loads(call["function"]["arguments"]))
                messages.append({"role": "tool", "tool_call_id": call["id"],
                                 "content": json.dumps(out)})
        raise RuntimeError(f"step limit: {max_steps} model calls without an answer")

    def body() -> None:
        for s in scenarios:
            replies.clear()
            replies.extend(_reply(n, t, s.answer, s.finish)
                           for n, t in enumerate((*s.tools, None)))
            metadata = {"case": s.id, **({"thread_id": thread} if thread else {})}
            root = traceable(run_type="chain", name="support", metadata=metadata)(agent)
            try:
                root(s.id, s.ask, s.max_steps)
            except RuntimeError:
                pass  # how the run ended is in its trace

    return body


def _runs_in(scenarios: Sequence[Scenario]) -> int:
    """Runs the SDK writes: each agent, its model calls and its tool calls."""
    total = 0
    for s in scenarios:
        steps = min(len(s.tools) + 1, s.max_steps)
        total += 1 + steps + min(len(s.tools), steps)
    return total


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The SDK's runs as a team exports them, and people's feedback on two of them."""
    folder = tmp_path_factory.mktemp("langsmith")
    runs, feedback = folder / "runs.jsonl", folder / "feedback.jsonl"
    with langsmith_client() as (client, store):
        traced(client, "support", run_agents(SCENARIOS))
        settled(store, _runs_in(SCENARIOS))
        write_runs(client, runs)
        roots = {r["extra"]["metadata"]["case"]: r["id"] for r in store.runs.values()
                 if r.get("parent_run_id") is None}
        for case, key, verdict, who, comment in (
                ("a1", SAYS, {"score": 1}, "ana", "it says so"),
                ("a2", SAYS, {"score": 0}, "ana", None),
                ("a2", GUARD, {"value": "pass"}, "bo", None)):
            client.create_feedback(roots[case], key, **verdict, comment=comment,
                                   trace_id=roots[case], session_id=PROJECT,
                                   source_info={"annotator": who})
        write_feedback(client, feedback, list(roots.values()))
    return runs, feedback


def own_reading(path: Path) -> dict[str, dict[str, Any]]:
    """Each trace of the raw runs: its scenario (the root's metadata), the tools the
    model called, its last reply, and whether it was cut or failed."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    traces: dict[str, dict[str, Any]] = {}
    for run in sorted(rows, key=lambda r: r["dotted_order"]):
        trace = traces.setdefault(run["trace_id"], {"tools": [], "last": None,
                                                    "stopped": False})
        if run["parent_run_id"] is None:
            trace["scenario"] = run["extra"]["metadata"]["case"]
            trace["stopped"] |= run["error"] is not None
        if run["run_type"] == "llm":
            (choice,) = run["outputs"]["choices"]
            trace["tools"] += [c["function"]["name"]
                               for c in choice["message"].get("tool_calls") or []]
            trace["last"] = choice["message"]["content"]
            trace["stopped"] |= choice["finish_reason"] == "length"
    return traces


def graded(trace: dict[str, Any], check: str) -> str:
    if check == GUARD:
        return "fail" if "refund" in trace["tools"] else "pass"
    if trace["stopped"]:  # cut or failed: no answer to read
        return "unscored"
    return "pass" if "refund" in str(trace["last"]).casefold() else "fail"


def test_langsmith_runs_measured_as_scikit_learn_reads_them(
        exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs, _ = exported
    mine = own_reading(runs)
    assert sorted(t["scenario"] for t in mine.values()) == [s.id for s in SCENARIOS]
    rows = measured_as_scikit_learn(tmp_path, monkeypatch, f"langsmith:{runs}", mine, HUMAN,
                                    graded)
    assert rows[SAYS]["unscored"] == 2  # the reply cut at its token limit, the failed agent


def case(run: ImportedRun) -> str:
    """The scenario of an imported run: its root's metadata."""
    metadata = run.metadata["run_metadata"]
    assert isinstance(metadata, dict)
    return str(metadata["case"])


def _imported(path: Path) -> dict[str, ImportedRun]:
    errors: list[LoadError] = []
    runs = {case(r): r for r in joined(read_langsmith([path], errors), True, None, [])}
    assert errors == []
    return runs


def test_a_cut_reply_and_a_failed_agent_end_the_run(exported: tuple[Path, Path]) -> None:
    runs = _imported(exported[0])
    cut, failed, fine = runs["a4"], runs["a5"], runs["a1"]
    assert isinstance(cut.trajectory[-1], Timeout)
    assert "token limit" in cut.trajectory[-1].detail
    assert isinstance(failed.trajectory[-1], Error)
    assert "step limit: 2 model calls" in failed.trajectory[-1].detail
    assert fine.trajectory[-1] == Message("assistant", "Refunded $49.99.")
    assert fine.trajectory[:2] == (Message("system", "You are a support agent."),
                                   Message("user", "Refund A-1, please."))
    calls = [e for e in fine.trajectory if isinstance(e, ToolCall)]
    assert [(c.id, c.tool) for c in calls] == [("call_0", "get_order"), ("call_1", "refund")]
    results = [e for e in fine.trajectory if isinstance(e, ToolResult)]
    assert results[0] == ToolResult("call_0", {"order_id": "A-1", "status": "ok"})
    assert len(results) == 2  # each result once, though the next call re-sent it
    assert fine.task_id == "support" and fine.metadata["model"] == "gpt-x"
    assert "ended" not in fine.metadata


def test_feedback_becomes_labels_with_its_annotator(exported: tuple[Path, Path]) -> None:
    runs, feedback = exported
    ids = {name: r.id for name, r in _imported(runs).items()}
    rows = sorted(tuple(map(str, (c["run_id"], c["check"], c["label"], c["annotator"],
                                  c["rationale"]))) for _, c in feedback_labels(feedback))
    assert rows == sorted([(ids["a1"], SAYS, "pass", "ana", "it says so"),
                           (ids["a2"], SAYS, "fail", "ana", ""),
                           (ids["a2"], GUARD, "pass", "bo", "")])
