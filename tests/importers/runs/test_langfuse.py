"""Langfuse observations and scores, written in the test by the Langfuse SDK itself:
a harness traced with ``start_as_current_observation`` (AGENT, GUARDRAIL,
GENERATION, TOOL) and people's scores posted with ``create_score``, sent to a
loopback stand-in of the Langfuse server (tests/importers/runs/langfuse_server.py,
no network), then read back with the SDK's own API client, which parses each page
with its pydantic models (``ObservationsV2Response``, ``GetScoresV3Response``),
and written as a team's export script writes them (``page.json()``, a page a
line). Read by ``meta-eval --runs langfuse:PATH`` with checks declared once; the
figures must equal scikit-learn's on this test's own reading of the raw file, and
the people's scores must come back as the labels they gave. The tests on files of
their own (bad scores, prompts as text) need no SDK and run without the extra."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from metaeval.contract import Error, Message, ToolCall, ToolResult
from metaeval.importers.runs.common import BadRecord
from metaeval.importers.runs.langfuse import (
    langfuse_labels,
    read_langfuse,
    read_langfuse_labels,
)
from metaeval.untrusted_json import LoadError
from tests.importers.runs.langfuse_server import langfuse_server
from tests.importers.runs.measured import GUARD, PROJECT, SAYS, Scenario, measured_as_scikit_learn
from tests.loaders.conftest import meta_eval

SCENARIOS = (
    Scenario("l1", "Refund A-1, please.", ("get_order", "refund"), "Refunded $49.99."),
    Scenario("l2", "Where is A-2?", ("get_order",), "It shipped yesterday."),
    Scenario("l3", "Refund A-3.", ("get_order", "escalate"), "A person will approve the "
             "refund."),
    Scenario("l4", "You idiot, refund A-4 now.", ("refund",), "Refunded."),
    Scenario("l5", "Refund A-5.", ("get_order", "get_order", "refund"), "Refund issued.",
             max_steps=2),
    Scenario("l6", "Refund A-6.", ("refund",), "Done, your refund is on its way."),
    Scenario("l7", "Cancel A-7.", ("get_order",), "I cannot cancel it."),
)
HUMAN = {GUARD: {"l1": "fail", "l2": "pass", "l3": "pass", "l4": "pass", "l5": "pass",
                 "l6": "fail", "l7": "fail"},
         SAYS: {"l1": "pass", "l2": "fail", "l3": "fail", "l4": "fail", "l5": "fail",
                "l6": "pass", "l7": "fail"}}
JUDGE = {"l1": 1, "l2": 1, "l3": 0, "l4": 0, "l5": 0, "l6": 1, "l7": 0}
"""An LLM-as-a-judge evaluator's ``says_refund`` (source EVAL): no person's label."""


def _reply(n: int, tool: str | None, words: str) -> dict[str, Any]:
    if tool is None:
        return {"role": "assistant", "content": words}
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": f"call_{n}", "type": "function",
        "function": {"name": tool, "arguments": json.dumps({"order_id": "A-1"})}}]}


def _harness(lf: Any, s: Scenario) -> str:
    """One support run, traced as a team instruments its own agent loop; its trace id."""
    from langfuse import propagate_attributes

    with lf.start_as_current_observation(name="support", as_type="agent",
                                         input=s.ask) as agent, \
            propagate_attributes(trace_name="support", session_id=s.id):
        with lf.start_as_current_observation(name="moderation", as_type="guardrail",
                                             input=s.ask) as guard:
            if "idiot" in s.ask:  # tripped: the harness stops before the model
                guard.update(output={"flagged": True}, level="ERROR",
                             status_message="abusive input")
                return str(agent.trace_id)
            guard.update(output={"flagged": False})
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": s.ask}]
        for n, tool in enumerate((*s.tools, None)):
            if n == s.max_steps:
                agent.update(level="ERROR", status_message=f"max steps {s.max_steps} reached")
                return str(agent.trace_id)
            with lf.start_as_current_observation(name="chat", as_type="generation",
                                                 model="gpt-x", input=list(messages)) as gen:
                reply = _reply(n, tool, s.answer)
                gen.update(output=reply)
            messages.append(reply)
            if tool is not None:
                with lf.start_as_current_observation(name=tool, as_type="tool",
                                                     input={"order_id": "A-1"}) as run:
                    result = json.dumps({"status": "ok"})
                    run.update(output=result)
                messages.append({"role": "tool", "tool_call_id": f"call_{n}",
                                 "content": result})
        agent.update(output=s.answer)
        return str(agent.trace_id)


def write_export(path: Path) -> None:
    """The SDK traces the runs and posts the scores; its API client reads them back a
    page at a time and each page is written as a line, as a team's export does."""
    from langfuse import Langfuse
    from opentelemetry.sdk.trace import TracerProvider

    with langfuse_server() as host:
        lf = Langfuse(public_key="pk-lf-test", secret_key="sk-lf-test", base_url=host,
                      tracer_provider=TracerProvider())
        try:
            traces = {s.id: _harness(lf, s) for s in SCENARIOS}
            lf.flush()
            for s in SCENARIOS:
                for check in (GUARD, SAYS):
                    said = HUMAN[check][s.id]
                    lf.create_score(name=check, value=1 if said == "pass" else 0,
                                    data_type="BOOLEAN", trace_id=traces[s.id],
                                    comment=f"{check} {said}", metadata={"annotator": "ann-1"})
                # A second annotator on a categorical score config, in agreement.
                lf.create_score(name=SAYS, value=HUMAN[SAYS][s.id].upper(),
                                data_type="CATEGORICAL", trace_id=traces[s.id],
                                metadata={"annotator": "ann-2"})
                lf.create_score(name="says_refund", value=JUDGE[s.id], data_type="BOOLEAN",
                                trace_id=traces[s.id], metadata={"source": "EVAL"})
            lf.flush()
            with path.open("w") as f:
                cursor = None
                while True:  # small pages: a trace's observations span several lines
                    page = lf.api.observations.get_many(
                        fields="core,basic,io,model,trace_context", limit=10, cursor=cursor)
                    f.write(page.json() + "\n")
                    cursor = page.meta.cursor
                    if not cursor:
                        break
                scores = lf.api.scores.get_many(fields="details,subject,annotation", limit=100)
                assert not scores.meta.cursor
                f.write(scores.json() + "\n")
        finally:
            lf.shutdown()


def own_reading(path: Path) -> dict[str, dict[str, Any]]:
    """Each trace of the raw pages: its scenario (the session id), the tools its model
    calls asked for, the last reply's text, and whether an observation failed."""
    traces: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        for item in json.loads(line)["data"]:
            if "dataType" in item:
                continue
            trace = traces.setdefault(item["traceId"], {"tools": [], "last": None,
                                                        "stopped": False, "starts": []})
            trace["scenario"] = item["sessionId"]
            if item["type"] == "GENERATION":
                said = json.loads(item["output"])
                trace["starts"].append((item["startTime"], said))
            trace["stopped"] |= item["level"] == "ERROR"
    for trace in traces.values():
        for _, said in sorted(trace.pop("starts"), key=lambda s: s[0]):
            trace["tools"] += [c["function"]["name"] for c in said.get("tool_calls") or []]
            trace["last"] = said.get("content")
    return traces


def graded(trace: dict[str, Any], check: str) -> str:
    if check == GUARD:
        return "fail" if "refund" in trace["tools"] else "pass"
    if trace["stopped"]:  # a tripped guardrail or steps that ran out: no answer to read
        return "unscored"
    return "pass" if "refund" in str(trace["last"]).casefold() else "fail"


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Only the tests of the SDK's file need the SDK (the extra): the others, on files
    # of their own, run in every environment.
    pytest.importorskip("langfuse")
    pytest.importorskip("opentelemetry.proto")
    path = tmp_path_factory.mktemp("langfuse") / "langfuse.jsonl"
    write_export(path)
    return path


def test_the_export_is_the_public_apis_schema(export: Path) -> None:
    # The SDK's own models parse every page as its client parses an answer (it did,
    # to hand them over); the file is read back through them, not only written.
    from langfuse.api.core.pydantic_utilities import parse_obj_as
    from langfuse.api.observations.types import ObservationsV2Response
    from langfuse.api.scores.types import GetScoresV3Response

    lines = export.read_text().splitlines()
    pages = [parse_obj_as(ObservationsV2Response, json.loads(line)) for line in lines[:-1]]
    scores = parse_obj_as(GetScoresV3Response, json.loads(lines[-1]))
    assert len(pages) > 2 and {o.type for p in pages for o in p.data} == {
        "AGENT", "GUARDRAIL", "GENERATION", "TOOL"}
    assert {s.source for s in scores.data} == {"ANNOTATION", "EVAL"}


def test_langfuse_export_measured_as_scikit_learn_reads_it(
        export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = own_reading(export)
    assert sorted(t["scenario"] for t in mine.values()) == [s.id for s in SCENARIOS]
    rows = measured_as_scikit_learn(tmp_path, monkeypatch, f"langfuse:{export}", mine, HUMAN,
                                    graded)
    assert rows[SAYS]["unscored"] == 2  # the tripped guardrail and the steps that ran out
    # The people's scores in the export, as labels, give the figures the test's own
    # labels gave (ann-2's categorical scores agree with ann-1's: the same gold).
    done = meta_eval(tmp_path, monkeypatch, "--runs", f"langfuse:{export}", "--labels",
                     f"langfuse:{export}", "--format", "json")
    assert done.exit_code == 0, done.output
    document = json.loads(done.stdout)
    assert document["errors"] == []
    keys = ("n", "tp", "fn", "tn", "fp", "unscored", "kappa")
    assert {row["name"]: [row[k] for k in keys] for row in document["checks"]
            if row["name"] in HUMAN} == {c: [rows[c][k] for k in keys] for c in HUMAN}


def test_a_score_that_is_no_label_fails_the_measure_and_names_the_score(
        export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = export.read_text().splitlines()
    scores = json.loads(lines[-1])
    scores["data"][0] |= {"dataType": "NUMERIC", "value": 0.7}
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines[:-1], json.dumps(scores)]) + "\n")
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    done = meta_eval(tmp_path, monkeypatch, "--runs", f"langfuse:{bad}", "--labels",
                     f"langfuse:{bad}", "--format", "json")
    assert done.exit_code == 2, done.output
    (error,) = json.loads(done.stdout)["errors"]
    assert f"line {len(lines)}: data[0].dataType: score {scores['data'][0]['id']}" in error
    assert "got 'NUMERIC'" in error


def test_a_tripped_guardrail_and_a_failed_agent_end_the_run(export: Path) -> None:
    errors: list[LoadError] = []
    runs = {r.metadata["session_id"]: r for r in read_langfuse([export], errors)}
    assert errors == []
    tripped, out_of_steps, fine = runs["l4"], runs["l5"], runs["l1"]
    assert tripped.trajectory == (Message("user", "You idiot, refund A-4 now."),
                                  Error("guardrail 'moderation' tripped: abusive input"))
    assert isinstance(out_of_steps.trajectory[-1], Error)
    assert "max steps 2 reached" in out_of_steps.trajectory[-1].detail
    assert fine.trajectory[-1] == Message("assistant", "Refunded $49.99.")
    assert [e.tool for e in fine.trajectory if isinstance(e, ToolCall)] == ["get_order",
                                                                          "refund"]
    assert fine.instruction == "Refund A-1, please."
    assert fine.task_id == "support" and fine.metadata["model"] == "gpt-x"
    # The evaluator's score is the harness's own, for --label-from; never a label.
    assert fine.scores == {"says_refund": True}


def test_people_scores_are_the_labels_they_gave(export: Path) -> None:
    mine = own_reading(export)
    rows = list(langfuse_labels(export))
    given = {(str(mine[str(c["run_id"])]["scenario"]), c["check"], c["annotator"]): c["label"]
             for _, c in rows}
    expected = {(s, check, "ann-1"): HUMAN[check][s] for check in HUMAN for s in HUMAN[check]}
    expected |= {(s, SAYS, "ann-2"): HUMAN[SAYS][s] for s in HUMAN[SAYS]}
    assert given == expected
    assert all(source.startswith(f"{export}:") for source, _ in rows)
    assert {c["rationale"] for _, c in rows if c["annotator"] == "ann-1"} >= {
        f"{GUARD} pass", f"{SAYS} fail"}


def _scores_file(tmp_path: Path, *scores: dict[str, Any]) -> Path:
    path = tmp_path / "scores.jsonl"
    path.write_text(json.dumps({"data": list(scores), "meta": {}}) + "\n")
    return path


def _score(**fields: Any) -> dict[str, Any]:
    base = {"id": "s1", "name": GUARD, "dataType": "BOOLEAN", "value": True,
            "source": "ANNOTATION", "authorUserId": "ann-1",
            "subject": {"kind": "trace", "id": "t1"}}
    return base | fields


@pytest.mark.parametrize(("fields", "field", "says"), [
    ({"dataType": "NUMERIC", "value": 0.7}, "dataType", "holds no pass or fail"),
    ({"dataType": "CATEGORICAL", "value": "great"}, "value", "pass, fail or unsure"),
    ({"dataType": "BOOLEAN", "value": "yes"}, "value", "true or false"),
    ({"authorUserId": None}, "authorUserId", "the `annotation` fields"),
    ({"subject": {"kind": "session", "id": "x"}}, "subject", "the trace or observation"),
    ({"source": "USER"}, "source", "ANNOTATION, API, EVAL"),
])
def test_a_score_that_is_no_label_is_named(tmp_path: Path, fields: dict[str, Any], field: str,
                                           says: str) -> None:
    path = _scores_file(tmp_path, _score(id="good"), _score(id="bad", **fields))
    errors: list[LoadError] = []
    rows = read_langfuse_labels(path, errors)
    assert [c["label"] for _, c in rows] == ["pass"]  # the good one is still read
    (error,) = errors
    assert (error.line, error.field) == (1, f"data[1].{field}")
    assert "score bad" in error.message and says in error.message
    with pytest.raises(BadRecord, match=r"line 1: data\[1\]\." + field):
        list(langfuse_labels(path))


def test_many_bad_scores_are_one_line_naming_three_and_counting_the_rest(
        tmp_path: Path) -> None:
    # An export without the `annotation` fields: every person's score lacks its author.
    path = _scores_file(tmp_path, *(_score(id=f"s{i}", authorUserId=None) for i in range(5)))
    with pytest.raises(BadRecord) as raised:
        list(langfuse_labels(path))
    said = raised.value.message
    assert "\n" not in said
    assert [said.count(f"score s{i}:") for i in range(5)] == [1, 1, 1, 0, 0]
    assert said.endswith("(and 2 more)")


def test_a_file_of_evaluator_scores_alone_gives_no_label(tmp_path: Path) -> None:
    path = _scores_file(tmp_path, _score(source="EVAL"), _score(source="API"))
    with pytest.raises(BadRecord, match=r"no ANNOTATION score.*2 API or EVAL scores"):
        list(langfuse_labels(path))
    # The mirror: one person's score among them is read, and the others are said.
    labels = langfuse_labels(_scores_file(tmp_path, _score(source="EVAL"), _score(),
                                          _score(source="API"), _score(source="EVAL")))
    assert len(list(labels)) == 1
    assert [note.split(" passed over")[0] for note in labels.left_out] == [
        "1 API score", "2 EVAL scores"]


def test_an_item_of_an_unknown_shape_is_an_error_and_the_rest_is_read(
        export: Path, tmp_path: Path) -> None:
    lines = export.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    page = json.loads(lines[0])
    page["data"][0]["type"] = "WIDGET"
    bad.write_text("\n".join([json.dumps({"question": 1}), json.dumps(page), *lines[1:]]) + "\n")
    errors: list[LoadError] = []
    runs = list(read_langfuse([bad], errors))
    assert len(runs) == len(SCENARIOS) - 1  # the trace with the unknown type is named
    first, second = errors
    assert (first.line, first.field) == (1, "")
    assert "expected an observation" in first.message
    assert second.field.endswith(".type") and "WIDGET" in second.message


def _with(export: Path, tmp_path: Path, change: Any) -> Path:
    """A copy of the export with ``change`` applied to each observation."""
    lines = []
    for line in export.read_text().splitlines():
        page = json.loads(line)
        for item in page["data"]:
            if "dataType" not in item:
                change(item)
        lines.append(json.dumps(page))
    path = tmp_path / "changed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_generation_without_its_input_says_to_ask_for_the_io_fields(
        export: Path, tmp_path: Path) -> None:
    def unasked(item: dict[str, Any]) -> None:
        if item["sessionId"] == "l2":
            item.pop("input")
            item.pop("output")
    errors: list[LoadError] = []
    runs = list(read_langfuse([_with(export, tmp_path, unasked)], errors))
    assert len(runs) == len(SCENARIOS) - 1
    (error,) = errors
    assert error.field.startswith("trace ") and error.field.endswith(".input")
    assert "the `io` fields" in error.message


def test_traces_of_one_session_are_one_run_and_the_file_is_picked_as_langfuse(
        export: Path, tmp_path: Path) -> None:
    from metaeval.commands.import_runs import ImportRequest, import_runs, picked_format

    assert picked_format([export]) == "langfuse"
    assert len(import_runs(ImportRequest("langfuse", (export,))).lines) == len(SCENARIOS)

    def one_session(item: dict[str, Any]) -> None:
        if item["sessionId"] in ("l6", "l7"):
            item["sessionId"] = "chat-1"
    done = import_runs(ImportRequest("langfuse", (_with(export, tmp_path, one_session),)))
    assert done.errors == ()
    assert len(done.lines) == len(SCENARIOS) - 1
    (joined,) = [line for line in done.lines if "joined" in json.dumps(line["metadata"])]
    events = joined["trajectory"]
    assert isinstance(events, list)
    said = [e["content"] for e in events if isinstance(e, dict) and e.get("role") == "user"]
    assert said == ["Refund A-6.", "Cancel A-7."]


def test_a_trace_past_the_observation_bound_is_an_error(
        export: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import metaeval.importers.runs.langfuse as module

    monkeypatch.setattr(module, "MAX_OBSERVATIONS", 4)
    errors: list[LoadError] = []
    runs = list(read_langfuse([export], errors))
    # The tripped guardrail's trace (an agent and its guardrail) is within the bound;
    # every other trace is named once and is no run, never a run cut short.
    assert [r.metadata["session_id"] for r in runs] == ["l4"]
    assert len(errors) == len(SCENARIOS) - 1
    assert all("more than 4 observations" in e.message for e in errors)


def _observation(n: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"id": f"o{n}", "traceId": "t1", "startTime": f"2026-01-01T00:00:0{n}Z",
            "projectId": "p", "type": kind, "name": kind.lower(), "level": "DEFAULT",
            "parentObservationId": None if n == 0 else "o0"} | fields


@pytest.mark.parametrize(("prompt", "read"), [
    ("Where is A-2?", [Message("user", "Where is A-2?"), Message("assistant", "It shipped.")]),
    (json.dumps([{"role": "user", "content": "Where is A-2?"}]),
     [Message("user", "Where is A-2?"), Message("assistant", "It shipped.")]),
    ("42", None),  # JSON, but neither messages nor text: named, never guessed
])
def test_a_prompt_given_as_its_text_is_the_users_message(
        tmp_path: Path, prompt: str, read: list[Message] | None) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"data": [
        _observation(0, "AGENT"),
        _observation(1, "GENERATION", input=prompt, output="It shipped.")]}) + "\n")
    errors: list[LoadError] = []
    runs = list(read_langfuse([path], errors))
    if read is None:
        (error,) = errors
        assert error.field == "trace t1: observation o1.input" and "got 42" in error.message
    else:
        assert errors == [] and list(runs[0].trajectory) == read


def test_a_tool_no_model_call_asked_for_is_still_a_call(tmp_path: Path) -> None:
    # A harness that runs a tool itself, with no generation recorded: the refund
    # happened, and a check that no refund was called must see it.
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"data": [
        _observation(0, "AGENT", input="Refund A-9.", output="Done."),
        _observation(1, "TOOL", name="refund", input='{"order_id": "A-9"}',
                     output='{"status": "ok"}')]}) + "\n")
    errors: list[LoadError] = []
    (run,) = read_langfuse([path], errors)
    assert errors == []
    assert list(run.trajectory) == [
        Message("user", "Refund A-9."), ToolCall("o1", "refund", {"order_id": "A-9"}),
        ToolResult("o1", {"status": "ok"}), Message("assistant", "Done.")]


def test_a_score_on_an_observation_labels_its_trace(tmp_path: Path) -> None:
    on_step = _score(id="o", subject={"kind": "observation", "id": "o1", "traceId": "t2"})
    as_posted = {k: v for k, v in _score(id="p").items() if k != "subject"} | {
        "traceId": "t3"}  # as the SDK posts it and the v1 API returns it
    rows = list(langfuse_labels(_scores_file(tmp_path, _score(), on_step, as_posted)))
    assert [c["run_id"] for _, c in rows] == ["t1", "t2", "t3"]
