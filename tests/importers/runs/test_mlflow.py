"""MLflow traces, written in the test by MLflow itself (tests/importers/runs/
mlflow_writer.py: its fluent tracing, ``mlflow.openai.autolog`` on the real client
with a mock transport, a local file store, ``log_feedback`` for a person's and a
judge's verdicts). Read by ``meta-eval --runs mlflow:PATH`` with checks declared
once; the figures must equal scikit-learn's on this test's own reading of the raw
trace JSON, and the person's feedback read back as labels must be what the test
logged, the judge's counted and left out."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from metaeval.commands.import_runs import ImportRequest, import_runs, picked_format
from metaeval.contract import Error, Message, Timeout, ToolCall, ToolResult
from metaeval.importers.runs.common import ImportedRun
from metaeval.importers.runs.mlflow_traces import assessment_labels, read_mlflow
from metaeval.loaders.labels_files import read_labels
from metaeval.untrusted_json import LoadError
from tests.importers.runs.measured import GUARD, SAYS, Scenario, measured_as_scikit_learn
from tests.loaders.conftest import meta_eval

# Offline: MLflow sends no usage report (it reads this when it is imported, just below).
os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"
pytest.importorskip("mlflow")
pytest.importorskip("openai")
pytest.importorskip("httpx")

from tests.importers.runs.mlflow_writer import write_traces

SCENARIOS = (
    Scenario("m1", "Refund A-1, please.", ("get_order", "refund"), "Refunded $49.99."),
    Scenario("m2", "Where is A-2?", ("get_order",), "It shipped yesterday."),
    Scenario("m3", "Refund A-3.", ("get_order", "escalate"), "A person will approve the "
             "refund."),
    Scenario("m4", "You idiot, refund A-4 now.", (), ""),
    Scenario("m5", "Refund A-5.", ("get_order", "refund"), "Your refund of $", "length"),
    Scenario("m6", "Refund A-6.", ("get_order", "get_order", "refund"), "Refund issued.",
             max_steps=2),
    Scenario("m7", "Refund A-7.", ("refund",), "Sorry, no refund: the service is down."),
)
HUMAN = {GUARD: {"m1": "fail", "m2": "pass", "m3": "pass", "m4": "pass", "m5": "fail",
                 "m6": "pass", "m7": "fail"},
         SAYS: {"m1": "pass", "m2": "fail", "m3": "fail", "m4": "fail", "m5": "fail",
                "m6": "fail", "m7": "pass"}}
# As people log them in MLflow: a boolean for one check, the review app's words for
# the other; the importer maps both to pass/fail.
LOGGED: dict[str, dict[str, Any]] = {
    GUARD: {s: v == "pass" for s, v in HUMAN[GUARD].items()},
    SAYS: {s: "yes" if v == "pass" else "no" for s, v in HUMAN[SAYS].items()}}
JUDGE = {SAYS: {"m1": "yes", "m2": "yes", "m3": "no"}}


def own_reading(path: Path) -> dict[str, dict[str, Any]]:
    """Each trace of the raw JSON: its scenario (a tag), the tools the model called
    and the tools that ran, its last reply, and whether it stopped without an answer
    (its state ERROR, a guardrail span failed, or the reply was cut)."""
    traces: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        trace = json.loads(line)
        mine: dict[str, Any] = {"scenario": trace["info"]["tags"]["scenario"], "tools": [],
                                "last": None, "stopped": trace["info"]["state"] == "ERROR"}
        for span in trace["data"]["spans"]:
            kind = json.loads(span["attributes"]["mlflow.spanType"])
            failed = span["status"]["code"] == "STATUS_CODE_ERROR"
            if kind == "TOOL":
                mine["tools"].append(span["name"])
            elif kind == "GUARDRAIL" and failed:
                mine["stopped"] = True
            elif kind == "CHAT_MODEL":
                choice = json.loads(span["attributes"]["mlflow.spanOutputs"])["choices"][0]
                mine["last"] = choice["message"]["content"]
                mine["tools"] += [c["function"]["name"]
                                  for c in choice["message"]["tool_calls"] or []]
                mine["stopped"] |= choice["finish_reason"] == "length"
        traces[trace["info"]["trace_id"]] = mine
    return traces


def graded(trace: dict[str, Any], check: str) -> str:
    if check == GUARD:
        return "fail" if "refund" in trace["tools"] else "pass"
    if trace["stopped"]:  # no answer to read
        return "unscored"
    return "pass" if "refund" in str(trace["last"]).casefold() else "fail"


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mlflow")
    path = folder / "traces.jsonl"
    write_traces(path, folder / "store", SCENARIOS, LOGGED, JUDGE, folder / "search.json")
    return path


def _runs(path: Path) -> dict[str, ImportedRun]:
    """The runs by their scenario (the trace's tag)."""
    errors: list[LoadError] = []
    runs = {}
    for run in read_mlflow([path], errors):
        tags = run.metadata["tags"]
        assert isinstance(tags, dict)
        runs[str(tags["scenario"])] = run
    assert errors == []
    return runs


def test_mlflow_traces_measured_as_scikit_learn_reads_them(
        traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = own_reading(traces)
    assert sorted(t["scenario"] for t in mine.values()) == [s.id for s in SCENARIOS]
    rows = measured_as_scikit_learn(tmp_path, monkeypatch, f"mlflow:{traces}", mine, HUMAN,
                                    graded)
    # The tripped guardrail, the cut reply and the steps that ran out.
    assert rows[SAYS]["unscored"] == 3


FIGURES = ("n", "tp", "fn", "tn", "fp", "unscored", "kappa")


def test_the_feedback_in_the_traces_measures_as_the_labels_the_test_wrote(
        traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The labels CSV comes from this test's HUMAN table, checked against
    # scikit-learn; --labels mlflow:PATH reads the same verdicts from the feedback
    # MLflow stored, and the judge's feedback is said, not read.
    from_csv = measured_as_scikit_learn(tmp_path, monkeypatch, f"mlflow:{traces}",
                                        own_reading(traces), HUMAN, graded)
    done = meta_eval(tmp_path, monkeypatch, "--runs", f"mlflow:{traces}", "--labels",
                     f"mlflow:{traces}", "--format", "json")
    assert done.exit_code in (0, 1), done.output
    document = json.loads(done.stdout)
    assert document["errors"] == []
    from_feedback = {row["name"]: row for row in document["checks"]}
    for check in (GUARD, SAYS):
        assert {k: from_feedback[check][k] for k in FIGURES} == {
            k: from_csv[check][k] for k in FIGURES}
    (said,) = [w for w in done.stderr.splitlines() if "LLM_JUDGE" in w]
    assert said.startswith(f"warning: {traces}: {len(JUDGE[SAYS])} feedback from source type "
                           "LLM_JUDGE")


def test_how_each_run_ended(traces: Path) -> None:
    runs = _runs(traces)
    fine, tripped, cut, out_of_steps, tool_down = (runs[k] for k in ("m1", "m4", "m5", "m6",
                                                                     "m7"))
    assert fine.trajectory[-1] == Message("assistant", "Refunded $49.99.")
    assert [e.tool for e in fine.trajectory if isinstance(e, ToolCall)] == ["get_order",
                                                                           "refund"]
    assert isinstance(tripped.trajectory[-1], Error)
    assert "guardrail 'no_abuse' tripped" in tripped.trajectory[-1].detail
    assert tripped.metadata["guardrails"] == {"no_abuse": True}
    assert fine.metadata["guardrails"] == {"no_abuse": False}
    assert isinstance(cut.trajectory[-1], Timeout)
    assert isinstance(out_of_steps.trajectory[-1], Error)
    assert "max steps (2) exceeded" in out_of_steps.trajectory[-1].detail
    # A tool that raised is a failed result, and the agent's answer after it stands.
    assert tool_down.trajectory[-1] == Message("assistant", "Sorry, no refund: the service "
                                               "is down.")
    (failed,) = [e for e in tool_down.trajectory if isinstance(e, ToolResult) and e.failed]
    assert tool_down.metadata["tool_errors"] == [failed.call_id]
    # Each tool's result is read once: from its span, not again from the next call's
    # history.
    results = [e.call_id for e in fine.trajectory if isinstance(e, ToolResult)]
    assert len(results) == len(set(results)) == 2


def test_an_expectation_is_the_tasks_criteria(traces: Path) -> None:
    runs = _runs(traces)
    assert runs["m1"].criteria == {"order_id": "A-1"}
    assert runs["m2"].criteria == {}


def test_human_feedback_is_read_as_labels_and_a_judges_is_counted_out(traces: Path) -> None:
    ids = {t["scenario"]: trace_id for trace_id, t in own_reading(traces).items()}
    labels = assessment_labels(traces)
    rows = sorted((c["run_id"], c["check"], c["label"], c["annotator"]) for _, c in labels)
    expected = sorted((ids[s], check, label, "ann") for check, by in HUMAN.items()
                      for s, label in by.items())
    assert rows == expected
    assert labels.not_read == {"LLM_JUDGE": len(JUDGE[SAYS])}
    sources = {source for source, _ in labels}
    assert all(str(traces) + ":" in s for s in sources) and len(sources) == len(SCENARIOS)


def test_import_auto_picks_mlflow(traces: Path) -> None:
    assert picked_format([traces]) == "mlflow"


# --- records MLflow would not write: each an error naming its line and field ---------


def _lines(traces: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in traces.read_text().splitlines()]


def _with(traces: Path, tmp_path: Path, change: Any) -> tuple[list[str], list[LoadError]]:
    """The traces with the second one changed by ``change``; the runs read and errors."""
    lines = _lines(traces)
    bad = copy.deepcopy(lines[1])
    lines[1] = change(bad) or bad
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    errors: list[LoadError] = []
    ids = [r.id for r in read_mlflow([path], errors)]
    return ids, errors


def _span_attr(key: str, value: Any) -> Any:
    def change(trace: dict[str, Any]) -> None:
        trace["data"]["spans"][0]["attributes"][key] = value
    return change


def _chat_attr(key: str, value: Any) -> Any:
    def change(trace: dict[str, Any]) -> None:
        chat = next(s for s in trace["data"]["spans"]
                    if s["attributes"]["mlflow.spanType"] == '"CHAT_MODEL"')
        chat["attributes"][key] = value
    return change


@pytest.mark.parametrize(("change", "field", "message"), [
    (_span_attr("mlflow.spanType", "7"), "attributes.mlflow.spanType",
     "got 7; expected a span type: one of AGENT"),
    (_span_attr("mlflow.spanType", "AGENT"), "attributes.mlflow.spanType", "not JSON"),
    (lambda t: t["info"].update(state="DONE"), "info.state", "got 'DONE'"),
    (lambda t: {"info": {"request_id": "tr-1"}, "data": {}}, "info", "an MLflow 2 trace"),
    (lambda t: {"question_id": 1}, "", "expected an MLflow trace"),
    (lambda t: t["data"].update(spans=None), "data.spans", "--no-include-spans"),
    (_chat_attr("mlflow.spanInputs", json.dumps({"input": "hi"})),
     "attributes.mlflow.spanInputs", "a Responses API call"),
    (_chat_attr("mlflow.message.format", '"anthropic"'), "mlflow.message.format",
     "expected 'openai'"),
    (_chat_attr("mlflow.spanOutputs", json.dumps({"generations": []})),
     "attributes.mlflow.spanOutputs", "expected a chat completion"),
    (lambda t: t["data"]["spans"][0].update(start_time_unix_nano=-1), "start_time_unix_nano",
     "expected a time in nanoseconds"),
    (lambda t: t["data"]["spans"][0]["status"].update(code="FAILED"), "status.code",
     "got 'FAILED'"),
    (lambda t: t["info"].update(assessments=[{"assessment_name": "x"}]),
     "info.assessments[0]", "expected an assessment"),
    # Bounded: JSON text inside an attribute nests no deeper than a meta-set line holds.
    (_chat_attr("mlflow.spanOutputs", "[" * 100 + "]" * 100),
     "attributes.mlflow.spanOutputs", "nested deeper than"),
])
def test_a_record_of_an_unknown_shape_is_an_error_naming_it(
        traces: Path, tmp_path: Path, change: Any, field: str, message: str) -> None:
    ids, errors = _with(traces, tmp_path, change)
    assert len(ids) == len(SCENARIOS) - 1  # every other trace is still read
    (error,) = errors
    assert error.line == 2
    assert field in error.field
    assert message in error.message


def test_a_trace_with_no_model_call_or_tool_is_an_error_not_an_empty_run(
        traces: Path, tmp_path: Path) -> None:
    def agent_only(trace: dict[str, Any]) -> None:
        trace["data"]["spans"] = trace["data"]["spans"][:1]
    _, errors = _with(traces, tmp_path, agent_only)
    (error,) = errors
    assert "no CHAT_MODEL, LLM or TOOL span" in error.message


def test_traces_as_mlflow_traces_search_prints_them_are_read(traces: Path) -> None:
    # The file MLflow's own CLI printed for the same experiment, pretty-printed JSON.
    path = traces.with_name("search.json")
    errors: list[LoadError] = []
    assert {r.id for r in read_mlflow([path], errors)} == set(own_reading(traces))
    assert errors == []
    assert picked_format([path]) == "mlflow"
    rows = list(assessment_labels(path))
    assert len(rows) == len(SCENARIOS) * len(HUMAN)
    assert rows[0][0].startswith(f"{path}:trace tr-")


def test_feedback_that_is_no_verdict_reaches_the_labels_check_as_written(
        traces: Path, tmp_path: Path) -> None:
    lines = _lines(traces)
    feedback = next(a for a in lines[0]["info"]["assessments"]
                    if a["source"]["source_type"] == "HUMAN" and "feedback" in a)
    feedback["feedback"]["value"] = 4
    overridden = copy.deepcopy(feedback)
    overridden["valid"] = False
    lines[0]["info"]["assessments"].append(overridden)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    labels = assessment_labels(path)
    values = [c["label"] for _, c in labels if c["run_id"] == lines[0]["info"]["trace_id"]]
    assert "4" in values  # the labels check refuses it, naming the row
    assert labels.not_read["overridden"] == 1


def test_consecutive_traces_of_one_session_are_one_run(traces: Path, tmp_path: Path) -> None:
    lines = _lines(traces)
    for trace in lines[:2]:
        trace["info"]["trace_metadata"]["mlflow.trace.session"] = "chat-1"
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = import_runs(ImportRequest("mlflow", (path,)))
    assert result.errors == ()
    assert [line["id"] for line in result.lines] == [t["info"]["trace_id"] for t in
                                                    lines[:1] + lines[2:]]
    first = result.lines[0]["metadata"]
    assert isinstance(first, dict)
    assert first["joined"] == {"calls": 2, "rule": "one conversation id"}


def test_a_span_type_of_the_users_own_is_counted_not_refused(traces: Path,
                                                             tmp_path: Path) -> None:
    # span_type takes any string: a type this reader does not know is kept in sight.
    ids, errors = _with(traces, tmp_path, _span_attr("mlflow.spanType", '"PLANNER"'))
    assert errors == [] and len(ids) == len(SCENARIOS)
    path = tmp_path / "t.jsonl"
    (run,) = [r for r in read_mlflow([path], []) if r.id == ids[1]]
    assert run.metadata["span_types_not_read"] == {"PLANNER": 1}
    assert "span_types_not_read" not in next(iter(read_mlflow([path], []))).metadata


def test_a_torn_export_keeps_the_feedback_of_every_whole_trace(
        traces: Path, tmp_path: Path) -> None:
    # A copy cut short mid-trace, and a record of another tool in the middle: each
    # costs its own feedback (named by line), never the other traces' labels.
    lines = traces.read_text().splitlines(keepends=True)
    kept = [json.loads(line) for line in lines[2:-1]]
    torn = tmp_path / "torn.jsonl"
    torn.write_text(lines[0] + json.dumps({"question_id": 1}) + "\n"
                    + "".join(lines[2:-1]) + lines[-1][: len(lines[-1]) // 2])
    annotations, errors = read_labels([Path(f"mlflow:{torn}")])
    people = [a for trace in [*kept, json.loads(lines[0])] for a in trace["info"]["assessments"]
              if a["source"]["source_type"] == "HUMAN" and "feedback" in a]
    assert len(annotations) == len(people) > 0
    (error,) = errors
    assert "line 2: got {'question_id': 1}" in error.message
    assert f"line {len(lines)}: not valid JSON" in error.message
