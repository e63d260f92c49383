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
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from metaeval.commands.import_runs import picked_format
from metaeval.contract import Error, Message, Timeout, ToolCall, ToolResult
from metaeval.errors import InputError
from metaeval.importers.runs.common import ImportedRun
from metaeval.importers.runs.langsmith import feedback_labels, read_langsmith
from metaeval.importers.runs.mapped import joined
from metaeval.loaders.labels_files import read_labels
from metaeval.untrusted_json import LoadError
from tests.importers.runs.langsmith_writer import (
    PROJECT,
    langsmith_client,
    settled,
    traced,
    write_feedback,
    write_runs,
)
from tests.importers.runs.measured import GUARD, SAYS, Scenario, measured_as_scikit_learn
from tests.loaders.conftest import meta_eval

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
    """The SDK's runs as a team exports them, and one person's feedback on each: the
    answer check as a score, the guard as a value."""
    pytest.importorskip("langsmith")
    folder = tmp_path_factory.mktemp("langsmith")
    runs, feedback = folder / "runs.jsonl", folder / "feedback.jsonl"
    with langsmith_client() as (client, store):
        traced(client, "support", run_agents(SCENARIOS))
        settled(store, _runs_in(SCENARIOS))
        write_runs(client, runs)
        roots = {r["extra"]["metadata"]["case"]: r["id"] for r in store.runs.values()
                 if r.get("parent_run_id") is None}
        for name, root in roots.items():
            said = HUMAN[SAYS][name]
            client.create_feedback(root, SAYS, score=int(said == "pass"), comment=f"{name} read",
                                   trace_id=root, session_id=PROJECT,
                                   source_info={"annotator": "ana"})
            client.create_feedback(root, GUARD, value=HUMAN[GUARD][name], trace_id=root,
                                   session_id=PROJECT, source_info={"annotator": "ana"})
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
    assert rows == sorted(
        [(ids[s.id], SAYS, HUMAN[SAYS][s.id], "ana", f"{s.id} read") for s in SCENARIOS]
        + [(ids[s.id], GUARD, HUMAN[GUARD][s.id], "ana", "") for s in SCENARIOS])


def test_feedback_measures_as_the_labels_it_holds(
        exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same runs measured with the feedback as labels (--labels langsmith:PATH) and
    # with the test's own labels: one set of figures.
    runs, feedback = exported
    expected = measured_as_scikit_learn(tmp_path, monkeypatch, f"langsmith:{runs}",
                                        own_reading(runs), HUMAN, graded)
    done = meta_eval(tmp_path, monkeypatch, "--runs", f"langsmith:{runs}", "--labels",
                     f"langsmith:{feedback}", "--format", "json")
    document = json.loads(done.output)
    assert document["errors"] == []
    figures = ("n", "tp", "fn", "tn", "fp", "unscored", "kappa")
    assert {row["name"]: [row[k] for k in figures] for row in document["checks"]} == {
        name: [row[k] for k in figures] for name, row in expected.items()}


# Runs no SDK writes but a file may hold: each bad one an error naming its file, line,
# trace, run and field, and every other trace still read.

def ls_run(rid: str, kind: str, parent: object = None, trace: str = "t1",
           **fields: Any) -> dict[str, Any]:
    """A run as list_runs returns it; ``rid`` sorts as the order it ran."""
    order = f"2026{rid}" if parent is None else f"2026{trace}.2026{rid}"
    return {"id": rid, "name": fields.pop("name", kind), "run_type": kind, "trace_id": trace,
            "parent_run_id": parent, "dotted_order": order, "start_time": "2026-01-01T00:00:00Z",
            "end_time": "2026-01-01T00:00:01Z", "inputs": {}, "outputs": {}, "error": None,
            "extra": {"metadata": {}}, "tags": [], **fields}


def model_call(rid: str, messages: list[dict[str, Any]], reply: dict[str, Any],
               trace: str = "t1", finish: str = "stop") -> dict[str, Any]:
    return ls_run(rid, "llm", trace, trace, inputs={"messages": messages}, outputs={
        "choices": [{"message": reply, "finish_reason": finish}]})


ASK = {"role": "user", "content": "Refund A-1."}
SAID = {"role": "assistant", "content": "Refunded."}


def good(trace: str = "t1", **root: object) -> list[dict[str, Any]]:
    return [ls_run(trace, "chain", None, trace, name="support", **root),
            model_call(f"{trace}m", [ASK], SAID, trace)]


def read(tmp_path: Path, *runs: dict[str, Any] | str) -> tuple[list[ImportedRun], list[LoadError]]:
    path = tmp_path / "runs.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in runs))
    errors: list[LoadError] = []
    return list(joined(read_langsmith([path], errors), True, None, [])), errors


@pytest.mark.parametrize(("bad", "field", "says"), [
    (ls_run("b", "agent", None, "b"), "run_type", "got 'agent'; expected one of chain"),
    ('"a run"', "run", "got 'a run'; expected a LangSmith run object"),
    (json.dumps({"id": "f1", "run_id": "t1", "key": "says_refund", "score": 1}), "key",
     "a feedback record, not a run"),
    (ls_run("", "chain", None, "b"), "id", "got ''; expected a non-empty string"),
    (json.dumps({"info": {"trace_id": "tr-1"}, "data": {"spans": []}}), "run",
     "expected a LangSmith run (id, trace_id, run_type"),
    (ls_run("b2", "tool", 7, "b"), "parent_run_id", "got 7; expected a run id or null")])
def test_a_record_that_is_no_run_is_an_error_on_its_line(
        tmp_path: Path, bad: dict[str, Any] | str, field: str, says: str) -> None:
    runs, errors = read(tmp_path, *good(), bad)
    assert [r.id for r in runs] == ["t1"]
    (error,) = errors
    assert (error.line, error.field) == (3, field)
    assert says in error.message


@pytest.mark.parametrize(("bad", "field", "says"), [
    (ls_run("bx", "llm", "b", "b", inputs={"messages": [[{"lc": 1, "type": "constructor"}]]}),
     "trace b: run bx (llm).inputs.messages[0][0].kwargs", "expected the message's fields"),
    (ls_run("bx", "llm", "b", "b", inputs={"messages": "hi"}),
     "trace b: run bx (llm).inputs.messages", "got 'hi'; expected the model call's chat"),
    (ls_run("bx", "llm", "b", "b", inputs={"messages": [{"type": "critic", "content": "x"}]}),
     "trace b: run bx (llm).inputs.messages[0].type", "got 'critic'; expected an OpenAI"),
    (ls_run("bx", "llm", "b", "b", inputs={"messages": [ASK]},
            outputs={"generations": [[{"text": "x"}]]}),
     "trace b: run bx (llm).outputs.generations[0][0]", "expected {message, generation_info}"),
    (ls_run("bx", "llm", "b", "b", inputs={"messages": [ASK]}, outputs={"text": "x"}),
     "trace b: run bx (llm).outputs", "got ['text']; expected an OpenAI chat completion"),
    (model_call("bx", [{"role": "critic", "content": "x"}], SAID, "b"),
     "trace b: run bx (llm).inputs.messages[0].role", "got 'critic'"),
    (ls_run("bt", "tool", "nowhere", "b"), "trace b: run bt (tool).parent_run_id",
     "got 'nowhere', a run not in the files")])
def test_a_run_of_no_known_shape_is_an_error_naming_its_trace_and_run(
        tmp_path: Path, bad: dict[str, Any], field: str, says: str) -> None:
    runs, errors = read(tmp_path, *good(), *good("b"), bad)
    assert [r.id for r in runs] == ["t1"]
    (error,) = errors
    assert (error.line, error.field) == (5, field)
    assert says in error.message


def test_a_trace_without_its_root_is_an_error_not_a_run_read_in_part(tmp_path: Path) -> None:
    # An export filtered by run type: the model call alone, its chain left out.
    runs, errors = read(tmp_path, *good(), model_call("bm", [ASK], SAID, "b"))
    assert [r.id for r in runs] == ["t1"]
    (error,) = errors
    assert error.field == "trace b: parent_run_id"
    assert "0 runs with no parent" in error.message


def test_one_run_twice_is_an_error_naming_the_first(tmp_path: Path) -> None:
    runs, errors = read(tmp_path, *good(), good()[1])
    assert len(runs) == 1
    (error,) = errors
    assert error.line == 3 and f"first at {tmp_path / 'runs.jsonl'}:2" in error.message


def _ends(run: ImportedRun) -> str:
    last = run.trajectory[-1]
    return f"{type(last).__name__}: {getattr(last, 'detail', '')}"


@pytest.mark.parametrize(("root", "ends"), [
    ({}, "Message: "),
    ({"error": "RuntimeError('boom')\n\nTraceback (most recent call last):\n ..."},
     "Error: the run failed: RuntimeError('boom')"),
    ({"error": "GraphRecursionError('Recursion limit of 25 reached without hitting a stop "
               "condition.')"}, "Timeout: GraphRecursionError"),
    ({"end_time": None}, "Timeout: the run had not ended"),
    ({"outputs": {"output": "Agent stopped due to iteration limit or time limit."}},
     "Timeout: 'Agent stopped")])
def test_how_the_root_ended_is_the_runs_last_event(tmp_path: Path, root: dict[str, Any],
                                                   ends: str) -> None:
    (run,), errors = read(tmp_path, *good(**root))
    assert errors == []
    assert _ends(run).startswith(ends)


@pytest.mark.parametrize(("finish", "ends"), [
    ("length", "Timeout: the model's reply was cut"),
    ("content_filter", "Error: the model's reply was withheld"), ("stop", "Message: ")])
def test_a_reply_cut_at_its_token_limit_ends_the_run(tmp_path: Path, finish: str,
                                                     ends: str) -> None:
    (run,), _ = read(tmp_path, good()[0], model_call("m", [ASK], SAID, finish=finish))
    assert _ends(run).startswith(ends)


def test_a_cut_reply_that_a_later_call_follows_does_not_end_the_run(tmp_path: Path) -> None:
    (run,), _ = read(tmp_path, good()[0], model_call("m1", [ASK], SAID, finish="length"),
                     model_call("m2", [ASK, SAID, ASK], SAID))
    assert run.trajectory[-1] == Message("assistant", "Refunded.")


def test_a_failed_tool_is_an_error_result_and_a_failed_step_is_kept(tmp_path: Path) -> None:
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "refund", "arguments": "{}"}}]}
    (run,), errors = read(
        tmp_path, good()[0], model_call("m1", [ASK], call),
        ls_run("m2", "tool", "t1", name="refund", error="ValueError('closed')\nTraceback"),
        ls_run("m3", "retriever", "t1", error="TimeoutError()"),
        model_call("m4", [ASK, call, {"role": "tool", "tool_call_id": "c1", "content": "x"}],
                   SAID))
    assert errors == []
    assert ToolResult("c1", "Error: ValueError('closed')") in run.trajectory
    assert run.metadata["tool_errors"] == ["c1"]
    assert run.metadata["errors"] == [{"run": "retriever", "run_type": "retriever",
                                       "error": "TimeoutError()"}]
    assert run.trajectory[-1] == Message("assistant", "Refunded.")


def test_a_tool_no_traced_model_asked_for_is_a_call_of_its_own(tmp_path: Path) -> None:
    # No llm run: the root's one text in and out, and the tool run is still a call,
    # so that a check that forbids the tool sees it.
    (run,), _ = read(tmp_path, ls_run("t1", "chain", None, name="support",
                                      inputs={"question": "Refund A-1."},
                                      outputs={"output": "Refunded."}),
                     ls_run("k", "tool", "t1", name="refund", inputs={"order_id": "A-1"},
                            outputs={"output": "ok"}))
    assert run.trajectory == (Message("user", "Refund A-1."),
                              ToolCall("k", "refund", {"order_id": "A-1"}),
                              ToolResult("k", "ok"), Message("assistant", "Refunded."))


def test_traces_of_one_thread_are_one_run_and_of_another_are_not(tmp_path: Path) -> None:
    thread: dict[str, Any] = {"extra": {"metadata": {"thread_id": "th-1"}}}
    second = [ls_run("t2", "chain", None, "t2", name="support", **thread),
              model_call("t2m", [ASK, SAID, {"role": "user", "content": "Thanks."}],
                         {"role": "assistant", "content": "Welcome."}, "t2")]
    other = [ls_run("t3", "chain", None, "t3", name="support",
                    extra={"metadata": {"thread_id": "th-2"}}),
             model_call("t3m", [{"role": "user", "content": "Hi."}], SAID, "t3")]
    runs, errors = read(tmp_path, *good(**thread), *second, *other)
    assert errors == []
    assert [r.id for r in runs] == ["t1", "t3"]
    assert [e.content for e in runs[0].trajectory if isinstance(e, Message)] == [
        "Refund A-1.", "Refunded.", "Thanks.", "Welcome."]
    assert runs[0].metadata["joined"] == {"calls": 2, "rule": "one conversation id"}


def test_bad_feedback_is_a_row_the_labels_reader_refuses_on_its_line(tmp_path: Path) -> None:
    person = {"type": "app", "user_name": "ana"}
    rows = [{"run_id": "t1", "key": "says_refund", "score": 1, "feedback_source": person},
            {"run_id": "t1", "key": "k2", "score": 0.5, "feedback_source": person},
            {"run_id": "t1", "key": "k3", "value": "maybe", "feedback_source": person},
            {"run_id": "t1", "key": "k4", "score": 1,
             "feedback_source": {"type": "model", "user_name": "judge"}},
            {"run_id": "t1", "key": "k5", "score": True, "feedback_source": {"type": "api"}}]
    path = tmp_path / "feedback.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    annotations, errors = read_labels([Path(f"langsmith:{path}")])
    assert [(a.check, a.label.value, a.annotator) for a in annotations] == [
        ("says_refund", "pass", "ana")]
    assert [e.line for e in errors] == [2, 3, 4, 5]
    assert [(e.field, e.message.partition(";")[0][:70]) for e in errors] == [
        ("label", "got 'score=0.5'"), ("label", "got \"value='maybe'\""),
        ("label", "got \"feedback_source.type='model'\""),
        ("annotator", "got nothing")]


def test_runs_given_as_labels_are_one_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in good()))
    annotations, errors = read_labels([Path(f"langsmith:{path}")])
    assert annotations == []
    (error,) = errors
    assert (error.path, error.field) == (str(path), "run_type")
    assert "line 1 is a run, not feedback" in error.message


def test_another_tools_records_given_as_feedback_are_one_error_naming_the_file(
        tmp_path: Path) -> None:
    # An MLflow trace export given as langsmith feedback: what was expected, once,
    # not 'run_id: got nothing' on every line.
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps({"info": {"trace_id": "tr-1"}, "data": {"spans": []}}) + "\n")
    annotations, errors = read_labels([Path(f"langsmith:{path}")])
    assert annotations == []
    (error,) = errors
    assert (error.path, error.field) == (str(path), "key")
    assert "expected LangSmith feedback (run_id, key" in error.message


# LangChain's chat models and tools, traced by the same SDK: messages serialized
# ({"lc": 1, ...}) in a batch of one, replies as generations, tools returning
# ToolMessages.

def langchain_agent(replies: list[Any]) -> Any:
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_core.tools import tool
    from langsmith import traceable

    @tool  # type: ignore[untyped-decorator]
    def get_order(order_id: str) -> str:
        """Look an order up."""
        return json.dumps({"order_id": order_id, "status": "delivered"})

    model = FakeMessagesListChatModel(responses=replies)

    @traceable(run_type="chain", name="support")  # type: ignore[untyped-decorator]
    def agent(ask: str) -> str:
        messages: list[Any] = [SystemMessage("You are a support agent."), HumanMessage(ask)]
        while True:
            reply = model.invoke(messages)
            messages.append(reply)
            if not reply.tool_calls:
                return str(reply.content)
            messages += [get_order.invoke(call) for call in reply.tool_calls]

    return agent


def test_a_langchain_agent_is_read_as_the_model_and_tools_said(tmp_path: Path) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import AIMessage

    call = {"id": "call_7", "name": "get_order", "args": {"order_id": "A-9"}}
    asked = [AIMessage(content="", tool_calls=[call]), AIMessage(content="It was delivered.")]
    cut = [AIMessage(content="Your order", response_metadata={"finish_reason": "length"})]
    path = tmp_path / "runs.jsonl"
    with langsmith_client() as (client, store):
        def both() -> None:
            langchain_agent(asked)("Where is A-9?")
            langchain_agent(cut)("Where is A-3?")

        traced(client, "support", both)
        settled(store, 6)  # two agents, three model calls, one tool
        write_runs(client, path)
    errors: list[LoadError] = []
    fine, stopped = joined(read_langsmith([path], errors), True, None, [])
    assert errors == []
    assert fine.trajectory == (
        Message("system", "You are a support agent."), Message("user", "Where is A-9?"),
        ToolCall("call_7", "get_order", {"order_id": "A-9"}),
        ToolResult("call_7", {"order_id": "A-9", "status": "delivered"}),
        Message("assistant", "It was delivered."))
    assert stopped.trajectory[-2:] == (
        Message("assistant", "Your order"),
        Timeout("the model's reply was cut at its token limit ('length')"))


@pytest.mark.parametrize("shape", ["nested", "query", "array"])
def test_a_tree_read_with_its_child_runs_or_as_a_list_is_the_same_run(
        tmp_path: Path, shape: str) -> None:
    root, call = good()
    flat, _ = read(tmp_path, root, call)
    if shape == "nested":  # read_run(load_child_runs=True)
        record: Any = {**root, "child_runs": [call]}
    else:
        record = {"runs": [root, call]} if shape == "query" else [root, call]
    runs, errors = read(tmp_path, json.dumps(record))
    assert errors == []
    assert [r.trajectory for r in runs] == [r.trajectory for r in flat]
    assert len(runs[0].trajectory) == 2


def test_import_auto_picks_a_langsmith_export_by_its_first_keys(tmp_path: Path) -> None:
    # A model call of long messages: the run's dotted_order lies past the bytes read.
    root, call = good()
    call["inputs"]["messages"] = [{"role": "user", "content": "x" * 100_000}]
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in (root, call)))
    assert picked_format([runs]) == "langsmith"
    feedback = tmp_path / "feedback.jsonl"
    feedback.write_text(json.dumps({"id": "f", "run_id": "t1", "key": "k", "score": 1,
                                    "start_time": None}) + "\n")
    with pytest.raises(InputError, match="no format recognises"):
        picked_format([feedback])


def test_a_line_not_utf8_or_with_a_nan_is_an_error_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    lines = [json.dumps(r).encode() for r in (*good(), *good("b"), *good("c"))]
    lines[2] = lines[2].replace(b'"support"', b'"supp\xffort"')
    lines[5] = lines[5].replace(b'"end_time": "2026-01-01T00:00:01Z"', b'"end_time": NaN')
    path.write_bytes(b"\n".join(lines) + b"\n")
    errors: list[LoadError] = []
    runs = list(read_langsmith([path], errors))
    assert [r.id for r in runs] == ["c", "t1"]
    assert [e.line for e in errors] == [3, 6, 4]
    assert "not UTF-8: byte 0xff" in errors[0].message and "NaN" in errors[1].message
    # Trace b, its root lost, is said to lack it, never read in part.
    assert errors[2].field == "trace b: parent_run_id"


def test_an_agent_on_wrap_openai_is_read_as_the_model_said(tmp_path: Path) -> None:
    # The SDK's own OpenAI wrapper writes the llm runs: the create() arguments as the
    # inputs, the ChatCompletion as the outputs (a mock transport, no network).
    pytest.importorskip("langsmith")
    openai = pytest.importorskip("openai")
    httpx = pytest.importorskip("httpx")
    from langsmith import traceable
    with warnings.catch_warnings():
        # langsmith.wrappers imports a moved module of its own, which warns.
        warnings.simplefilter("ignore", DeprecationWarning)
        from langsmith.wrappers import wrap_openai

    replies = [_reply(0, "refund", "", "stop"), _reply(1, None, "Refunded.", "stop"),
               _reply(2, None, "Your refu", "length")]
    for reply in replies:
        reply.update(object="chat.completion", created=1, usage={
            "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})
    chat = wrap_openai(openai.OpenAI(api_key="none", base_url="http://mock.invalid/v1",
                                     http_client=httpx.Client(transport=httpx.MockTransport(
                                         lambda request: httpx.Response(
                                             200, json=replies.pop(0))))))

    @traceable(run_type="tool", name="refund")  # type: ignore[untyped-decorator]
    def refund(order_id: str) -> str:
        return "refunded"

    @traceable(run_type="chain", name="support")  # type: ignore[untyped-decorator]
    def agent(ask: str) -> str:
        messages: list[Any] = [{"role": "user", "content": ask}]
        while True:
            message = chat.chat.completions.create(model="gpt-x", messages=messages
                                                   ).choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return str(message.content)
            for call in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": refund(**json.loads(call.function.arguments))})

    path = tmp_path / "runs.jsonl"
    with langsmith_client() as (client, store):
        def both() -> None:
            agent("Refund A-1.")
            agent("Refund A-2.")

        traced(client, "support", both)
        settled(store, 6)  # two agents, three model calls, one tool
        write_runs(client, path)
    errors: list[LoadError] = []
    fine, cut = joined(read_langsmith([path], errors), True, None, [])
    assert errors == []
    assert fine.trajectory == (
        Message("user", "Refund A-1."), ToolCall("call_0", "refund", {"order_id": "A-1"}),
        ToolResult("call_0", "refunded"), Message("assistant", "Refunded."))
    assert cut.trajectory[-1] == Timeout("the model's reply was cut at its token limit "
                                         "('length')")
