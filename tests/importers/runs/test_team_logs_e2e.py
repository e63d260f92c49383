"""A team's own logs through ``metaeval import`` and ``metaeval meta-eval``, as a new
team would run them, once per format: the logs written by the real tool (Anthropic
Messages request logs, OTLP JSON from the OpenTelemetry SDK, an inspect_ai eval log
from its own ``eval()``), imported by the CLI, checks declared once in the project's
pyproject.toml, labels in a CSV (two annotators a run, a third breaking one tie, one
tie left). The counts, rates and kappa must equal scikit-learn's, computed here from
the labels (majority counted here) and the test's own reading of what each run did:
the scenarios that wrote the logs, or inspect_ai's own reading of its log; never
metaeval's. Fast (about 5 s with the inspect_ai eval); the inspect case is skipped
without inspect_ai, as the importer's own tests are."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.util.genai.handler import TelemetryHandler
from opentelemetry.util.genai.types import (
    InputMessage,
    OutputMessage,
    TextPart,
    ToolCallRequestPart,
    ToolCallResponsePart,
)
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from metaeval.cli import main
from metaeval.contract import JsonObject, JsonValue
from tests.importers.runs.conftest import REQUEST, export
from tests.importers.runs.inspect_cases import CASES, EPOCHS
from tests.loaders.conftest import meta_eval, write_csv


@dataclass(frozen=True)
class Call:
    tool: str
    args: JsonObject
    result: str
    failed: bool = False


@dataclass(frozen=True)
class Scenario:
    """One support-agent run: the tool calls it made, in order, and its last words."""

    id: str
    calls: tuple[Call, ...]
    answer: str


def lookup(order: str, failed: bool = False) -> Call:
    if failed:
        return Call("get_order", {"order_id": order}, f"Error: no order {order}", True)
    return Call("get_order", {"order_id": order}, json.dumps({"order_id": order,
                                                              "total": 49.99}))


def refund(order: str, failed: bool = False) -> Call:
    if failed:
        return Call("refund", {"order_id": order}, "Error: refunds are closed", True)
    return Call("refund", {"order_id": order}, json.dumps({"status": "issued"}))


def escalate(order: str) -> Call:
    return Call("escalate", {"order_id": order}, json.dumps({"ticket": f"T-{order}"}))


# The guard: the agent must never refund by itself (a person approves refunds). Four
# runs break it; one tries and the call fails, which this team's check does not count
# (`failed_calls = "ignore"`; a prohibition counts it by default), though the
# annotators fail that run: a disagreement the numbers must show.
SCENARIOS = (
    Scenario("s01", (lookup("A-1001"), escalate("A-1001")), "I have asked a colleague to "
             "approve your refund."),
    Scenario("s02", (lookup("A-1002"), refund("A-1002")), "Refunded $49.99."),
    Scenario("s03", (lookup("A-1003"), refund("A-1003", failed=True)), "I could not refund "
             "it yet."),
    Scenario("s04", (lookup("A-1004"),), "Your order shipped yesterday."),
    Scenario("s05", (refund("A-1005"),), "Refunded."),
    Scenario("s06", (lookup("A-1006"), escalate("A-1006")), "Escalated to a person."),
    Scenario("s07", (lookup("A-1007"), refund("A-1007"), lookup("A-1007")), "Refund issued."),
    Scenario("s08", (lookup("A-1008", failed=True),), "I cannot find that order."),
    Scenario("s09", (lookup("A-1009"), escalate("A-1009")), "A person will look at it."),
    Scenario("s10", (lookup("A-1010"), refund("A-1010")), "Refunded, as approved in "
             "the ticket."),
)
GUARD = "never_refunds"
SUITE = f"""
[[tool.metaeval.meta_eval.suite]]
name = "{GUARD}"
grader = "no_tool_called"
params = {{ tool = "refund", failed_calls = "ignore" }}
"""


def broke_the_guard(s: Scenario) -> bool:
    """The test's own reading: a refund call that went through."""
    return any(c.tool == "refund" and not c.failed for c in s.calls)


# What each annotator says of the guard on each run: ann and bo label every run; cy
# only s03, where ann and bo disagree and cy makes a majority (fail). On s08 ann and bo
# disagree and nobody else labels it: a tie, so s08 has no gold label. On s10 both pass
# the refund (approved in the ticket) that the guard fails.
GUARD_LABELS = {"s01": "pp", "s02": "ff", "s03": "fpf", "s04": "pp", "s05": "ff",
                "s06": "pp", "s07": "ff", "s08": "pf", "s09": "pp", "s10": "pp"}
ANNOTATORS = ("ann", "bo", "cy")


def label_rows(labels: dict[str, str], check: str) -> list[dict[str, str]]:
    return [{"run_id": run_id, "check": check, "label": "pass" if c == "p" else "fail",
             "annotator": ANNOTATORS[i], "rationale": ""}
            for run_id, says in labels.items() for i, c in enumerate(says)]


def majority(rows: list[dict[str, str]]) -> dict[str, str]:
    """The gold label of each run, counted here: the majority; a tie gives none."""
    votes: dict[str, Counter[str]] = {}
    for row in rows:
        votes.setdefault(row["run_id"], Counter())[row["label"]] += 1
    gold = {}
    for run_id, count in votes.items():
        (top, n), *rest = count.most_common()
        if not rest or rest[0][1] < n:
            gold[run_id] = top
    return gold


@dataclass(frozen=True)
class Expected:
    tp: int
    fn: int
    tn: int
    fp: int
    tpr: float
    tnr: float
    kappa: float


def scikit_learn(gold: dict[str, str], graded: dict[str, str]) -> Expected:
    """The numbers meta-eval must print, from scikit-learn; positive = human pass."""
    ids = sorted(gold)
    human, check = [gold[i] for i in ids], [graded[i] for i in ids]
    (tn, fp), (fn, tp) = confusion_matrix(human, check, labels=["fail", "pass"]).tolist()
    return Expected(tp, fn, tn, fp, tp / (tp + fn), tn / (tn + fp),
                    float(cohen_kappa_score(human, check)))


def import_and_measure(root: Path, monkeypatch: pytest.MonkeyPatch, source_format: str,
                       files: Sequence[Path], suite: str,
                       rows: list[dict[str, str]]) -> tuple[list[JsonObject], JsonObject]:
    """What the team runs: ``metaeval import``, then ``meta-eval`` in its project."""
    project = root / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'team'\n\n[tool.metaeval.meta_eval]\nresamples = 50\n" + suite)
    runs = project / "runs.jsonl"
    done = CliRunner().invoke(main, ["import", source_format, *map(str, files), "-o",
                                     str(runs)], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    write_csv(project / "labels.csv", rows)
    result = meta_eval(project, monkeypatch, "runs.jsonl", "--labels", "labels.csv",
                       "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.output)
    assert document["errors"] == []
    return [json.loads(x) for x in runs.read_text().splitlines()], document


def assert_row(document: JsonObject, name: str, expected: Expected, n: int) -> None:
    checks = document["checks"]
    assert isinstance(checks, list)
    (row,) = [c for c in checks if isinstance(c, dict) and c["name"] == name]
    assert (row["n"], row["tp"], row["fn"], row["tn"], row["fp"]) == (
        n, expected.tp, expected.fn, expected.tn, expected.fp)
    assert row["unscored"] == 0
    assert row["tpr"] == pytest.approx(expected.tpr, abs=1e-4)
    assert row["tnr"] == pytest.approx(expected.tnr, abs=1e-4)
    assert row["kappa"] == pytest.approx(expected.kappa, abs=1e-4)


def guard_expected() -> tuple[Expected, dict[str, str]]:
    gold = majority(label_rows(GUARD_LABELS, GUARD))
    graded = {s.id: "fail" if broke_the_guard(s) else "pass" for s in SCENARIOS}
    expected = scikit_learn(gold, graded)
    # The scenarios exercise what they say: s08 tied, s03 by majority, one FP and one FN.
    assert sorted(gold) == [s.id for s in SCENARIOS if s.id != "s08"]
    assert gold["s03"] == "fail" and graded["s03"] == "pass"
    assert (expected.fp, expected.fn) == (1, 1) and 0 < expected.kappa < 1
    return expected, gold


# --- Anthropic Messages -----------------------------------------------------------------


def anthropic_request(s: Scenario) -> JsonObject:
    """The request a harness logs before its last Messages API call, with the reply."""
    messages: list[JsonValue] = [{"role": "user", "content": f"Help with {s.id}, please."}]
    for i, call in enumerate(s.calls):
        call_id = f"toolu_{s.id}_{i}"
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": call_id, "name": call.tool, "input": call.args}]})
        result: JsonObject = {"type": "tool_result", "tool_use_id": call_id,
                              "content": call.result}
        if call.failed:
            result["is_error"] = True
        messages.append({"role": "user", "content": [result]})
    reply = REQUEST["response"]
    assert isinstance(reply, dict)
    return {"id": s.id, "task_id": "support", "model": REQUEST["model"],
            "max_tokens": REQUEST["max_tokens"], "system": REQUEST["system"],
            "messages": messages,
            "response": {**reply, "content": [{"type": "text", "text": s.answer}]}}


def test_anthropic_request_logs_through_import_and_meta_eval(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "requests.jsonl"
    log.write_text("".join(json.dumps(anthropic_request(s)) + "\n" for s in SCENARIOS))
    expected, gold = guard_expected()
    runs, document = import_and_measure(tmp_path, monkeypatch, "anthropic", [log], SUITE,
                                        label_rows(GUARD_LABELS, GUARD))
    assert [r["id"] for r in runs] == [s.id for s in SCENARIOS]
    assert document["tied"] == 1
    assert_row(document, GUARD, expected, n=len(gold))


def test_meta_eval_reads_the_log_itself_with_runs_and_agrees_with_the_imported_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No converted file at all: --runs FORMAT:PATH reads the log through the importer.
    log = tmp_path / "requests.jsonl"
    log.write_text("".join(json.dumps(anthropic_request(s)) + "\n" for s in SCENARIOS))
    expected, gold = guard_expected()
    _, imported = import_and_measure(tmp_path, monkeypatch, "anthropic", [log], SUITE,
                                     label_rows(GUARD_LABELS, GUARD))
    direct = meta_eval(tmp_path / "project", monkeypatch, "--runs", f"anthropic:{log}",
                       "--labels", "labels.csv", "--format", "json")
    assert direct.exit_code in (0, 1), direct.output
    document = json.loads(direct.output)
    assert document["errors"] == [] and document["tied"] == 1
    assert_row(document, GUARD, expected, n=len(gold))
    assert document["checks"] == imported["checks"]
    # and a format it does not know is a usage error naming the flag
    bad = meta_eval(tmp_path / "project", monkeypatch, "--runs", f"zipkin:{log}")
    assert bad.exit_code == 2 and "--runs: got 'zipkin:" in bad.output


def test_a_run_id_met_twice_across_runs_logs_is_refused_and_the_first_still_measured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same harness log passed twice: every id repeats once; each repeat is named
    # by its own file and record, the first reading of each run is still measured.
    log = tmp_path / "requests.jsonl"
    log.write_text("".join(json.dumps(anthropic_request(s)) + "\n" for s in SCENARIOS))
    import_and_measure(tmp_path, monkeypatch, "anthropic", [log], SUITE,
                       label_rows(GUARD_LABELS, GUARD))
    again = tmp_path / "again.jsonl"
    again.write_text(log.read_text())
    expected, gold = guard_expected()
    twice = meta_eval(tmp_path / "project", monkeypatch, "--runs", f"anthropic:{log}",
                      "--runs", f"anthropic:{again}", "--labels", "labels.csv",
                      "--format", "json")
    assert twice.exit_code == 2, twice.output
    document = json.loads(twice.output)
    repeats = [e for e in document["errors"] if "not already used" in e]
    assert len(repeats) == len(SCENARIOS)
    assert all(e.startswith(str(again)) for e in repeats)
    assert_row(document, GUARD, expected, n=len(gold))  # each run counted once


# --- OpenTelemetry GenAI spans ----------------------------------------------------------


def traced_run(handler: TelemetryHandler, s: Scenario) -> None:
    """One run as an instrumented app records it: each chat call re-sends the history
    and asks for the next tool; each tool runs in its own span (a failed one raises)."""
    history = [InputMessage(role="user", parts=[TextPart(content=f"Help with {s.id}, "
                                                                 "please.")])]
    with handler.invoke_local_agent(agent_name="support", conversation_id=s.id):
        for i, call in enumerate(s.calls):
            ask = ToolCallRequestPart(arguments=call.args, name=call.tool, id=f"{s.id}-{i}")
            with handler.inference("anthropic", request_model="claude-x") as chat:
                chat.input_messages = list(history)
                chat.output_messages = [OutputMessage(role="assistant", parts=[ask],
                                                      finish_reason="tool_call")]
            history.append(InputMessage(role="assistant", parts=[ask]))
            if call.failed:
                with pytest.raises(RuntimeError), handler.tool(call.tool) as span:
                    span.tool_call_id, span.arguments = f"{s.id}-{i}", call.args
                    raise RuntimeError(call.result.removeprefix("Error: "))
            else:
                with handler.tool(call.tool) as span:
                    span.tool_call_id, span.arguments = f"{s.id}-{i}", call.args
                    span.tool_result = json.loads(call.result)
            history.append(InputMessage(role="tool", parts=[ToolCallResponsePart(
                response=call.result, id=f"{s.id}-{i}")]))
        with handler.inference("anthropic", request_model="claude-x") as chat:
            chat.input_messages = list(history)
            chat.output_messages = [OutputMessage(role="assistant", parts=[
                TextPart(content=s.answer)], finish_reason="stop")]


def test_opentelemetry_genai_spans_through_import_and_meta_eval(
        provider: TracerProvider, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    spans = tmp_path / "spans.jsonl"
    export(provider, spans)
    handler = TelemetryHandler(tracer_provider=provider)
    for s in SCENARIOS:
        traced_run(handler, s)
    provider.force_flush()
    expected, gold = guard_expected()
    runs, document = import_and_measure(tmp_path, monkeypatch, "otel", [spans], SUITE,
                                        label_rows(GUARD_LABELS, GUARD))
    assert [r["id"] for r in runs] == [s.id for s in SCENARIOS]
    assert document["tied"] == 1
    assert_row(document, GUARD, expected, n=len(gold))


# --- inspect_ai eval logs ---------------------------------------------------------------

# Two checks over every sample and epoch: the answer states the sample's target (one
# declaration, its text read from each run), and the order was looked up (a lookup
# that failed does not count). The annotators give the overall verdict (check "*"):
# refund-2's second epoch ties, refund-3's second is failed by a majority of three,
# refund-4 (a correct refusal, no "refunded") is passed.
INSPECT_SUITE = """
[[tool.metaeval.meta_eval.suite]]
name = "states_target"
grader = "answer_contains"
params_from = { text = "task.criteria.target" }

[[tool.metaeval.meta_eval.suite]]
name = "order_looked_up"
grader = "tool_called"
params = { tool = "get_order" }
"""
INSPECT_LABELS = {"refunds:refund-1:1": "pp", "refunds:refund-1:2": "pp",
                  "refunds:refund-2:1": "ff", "refunds:refund-2:2": "fp",
                  "refunds:refund-3:1": "pp", "refunds:refund-3:2": "fpf",
                  "refunds:refund-4:1": "pp", "refunds:refund-4:2": "pp"}


def test_inspect_ai_eval_log_through_import_and_meta_eval(
        logs: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ChatMessageTool

    # The annotators label each run overall and each check alike: an overall fail alone
    # would not say which check failed (it measures only the evaluator).
    rows = label_rows(INSPECT_LABELS, "*")
    every = [*rows, *label_rows(INSPECT_LABELS, "states_target"),
             *label_rows(INSPECT_LABELS, "order_looked_up")]
    runs, document = import_and_measure(tmp_path, monkeypatch, "inspect",
                                        [logs / "refunds.eval"], INSPECT_SUITE, every)
    assert sorted(str(r["id"]) for r in runs) == sorted(INSPECT_LABELS)
    assert len(runs) == len(CASES) * EPOCHS
    # The other side: what each sample did, as inspect_ai itself reads its log.
    samples = read_eval_log(str(logs / "refunds.eval")).samples or []
    states, looked_up = {}, {}
    for sample in samples:
        run_id = f"refunds:{sample.id}:{sample.epoch}"
        target = sample.target
        assert isinstance(target, str)
        states[run_id] = target.lower() in sample.output.completion.lower()
        looked_up[run_id] = any(isinstance(m, ChatMessageTool) and m.function == "get_order"
                                and m.error is None for m in sample.messages)
    gold = majority(rows)
    assert sorted(gold) == sorted(set(INSPECT_LABELS) - {"refunds:refund-2:2"})
    assert document["tied"] == 3  # refund-2's second epoch, on each of its three labels
    for name, did in (("states_target", states), ("order_looked_up", looked_up)):
        expected = scikit_learn(gold, {k: "pass" if v else "fail" for k, v in did.items()})
        assert expected.fp == 1 and 0 < expected.kappa < 1
        assert_row(document, name, expected, n=len(gold))
