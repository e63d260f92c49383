"""Nothing lost in reading a run: how it ended (a token limit, a step limit), its
category, task and criteria mapped by the suite, its absent state, and a per-call
log's conversation joined into one run. Measured through ``meta-eval --runs``, as a
team runs it; the figures are scikit-learn's on this test's own reading of the
records, never metaeval's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from metaeval.contract import JsonObject, JsonValue, Timeout
from metaeval.importers.runs.anthropic import read_anthropic
from metaeval.importers.runs.common import BadRecord, ImportedRun
from metaeval.importers.runs.mapped import EXTENDS, SAME_CONVERSATION, joined
from metaeval.untrusted_json import LoadError
from tests.loaders.conftest import meta_eval, write_csv

SYSTEM = "You are a support agent."


def call(messages: list[JsonValue], reply: list[JsonValue], stop: str, **extra: JsonValue
         ) -> JsonObject:
    """One logged Messages request and the reply it got."""
    return {"model": "claude-x", "max_tokens": 256, "system": SYSTEM, "messages": messages,
            "response": {"type": "message", "role": "assistant", "content": reply,
                         "stop_reason": stop}, **extra}


def text(words: str) -> list[JsonValue]:
    return [{"type": "text", "text": words}]


def user(words: str) -> JsonObject:
    return {"role": "user", "content": words}


def tool_use(call_id: str, words: str = "") -> list[JsonValue]:
    said: list[JsonValue] = text(words) if words else []
    return [*said, {"type": "tool_use", "id": call_id, "name": "get_order",
                    "input": {"order_id": "A-1"}}]


def result(call_id: str) -> JsonObject:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                         "content": "{\"total\": 30}"}]}


def conversation() -> list[JsonObject]:
    """A wrapper's log of every call of one conversation: three calls, each re-sending
    the history so far."""
    first: list[JsonValue] = [user("Refund order A-1, please.")]
    second: list[JsonValue] = [
        *first, {"role": "assistant", "content": tool_use("t1", "Looking.")}, result("t1")]
    third: list[JsonValue] = [
        *second, {"role": "assistant", "content": tool_use("t2")}, result("t2")]
    keys: JsonObject = {"category": "refund", "case": "refund-a1",
                        "criteria": {"amount": "30"}}
    return [call(first, tool_use("t1", "Looking."), "tool_use", id="conv-1", **keys),
            call(second, tool_use("t2"), "tool_use", id="conv-2", **keys),
            call(third, text("Refunded $30."), "end_turn", id="conv-3", **keys)]


# id, category, amount the task expects, what the model said last, its stop reason,
# and what the annotators said of the answer.
SINGLE = (
    ("r1", "refund", "49.99", "Refunded $49.99.", "end_turn", "pass"),
    ("r2", "refund", "12.00", "Your order shipped yesterday.", "end_turn", "fail"),
    ("r3", "limits", "5", "Refunded $5 and then I", "max_tokens", "fail"),
)
HUMAN = {**{r[0]: r[5] for r in SINGLE}, "r4": "fail", "conv-1": "pass"}


def records() -> list[JsonObject]:
    lines = [call([user("Refund my order.")], text(said), stop, id=run_id, category=category,
                  case=f"case-{run_id}", criteria={"amount": amount})
             for run_id, category, amount, said, stop, _ in SINGLE]
    # A step limit: the model said the right figure, then asked for one more tool call,
    # and the harness stopped it there; an earlier message is no answer.
    lines.append(call([user("Refund my order."),
                       {"role": "assistant", "content": text("Refunded $7.")},
                       user("Are you sure?")], tool_use("t9", "Let me check."), "tool_use",
                      id="r4", category="limits", case="case-r4", criteria={"amount": "7"}))
    return [*lines, *conversation()]


def own_reading(record: JsonObject) -> str:
    """This test's reading of a record: unscored when the model did not finish (a
    token limit, or a tool call with nothing after it); else pass when the last reply
    states the expected amount."""
    response = record["response"]
    assert isinstance(response, dict)
    if response["stop_reason"] in ("max_tokens", "tool_use"):
        return "unscored"
    content = response["content"]
    criteria = record["criteria"]
    assert isinstance(content, list) and isinstance(criteria, dict)
    said = "".join(str(b["text"]) for b in content if isinstance(b, dict))
    return "pass" if str(criteria["amount"]) in said else "fail"


PROJECT = """[project]
name = "team"

[tool.metaeval.meta_eval]
resamples = 50

[tool.metaeval.meta_eval.map]
category_from = "metadata.category"
task_from = "metadata.case"
criteria_from = "metadata.criteria"

[[tool.metaeval.meta_eval.suite]]
name = "states_amount"
grader = "answer_states"
params = { facts = ["amount"] }

[[tool.metaeval.meta_eval.suite]]
name = "nothing_changed"
grader = "state_unchanged"
"""


def test_endings_mapped_parts_and_a_joined_conversation_through_meta_eval(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "calls.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records()))
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    write_csv(tmp_path / "labels.csv", [
        {"run_id": run_id, "check": check, "label": label, "annotator": "ann",
         "rationale": ""}
        for run_id, label in HUMAN.items() for check in ("states_amount", "nothing_changed")])
    done = meta_eval(tmp_path, monkeypatch, "--runs", f"anthropic:{log}", "--labels",
                     "labels.csv", "--format", "json")
    assert done.exit_code in (0, 1), done.output
    document = json.loads(done.output)
    assert document["errors"] == []
    # The test's own reading: the conversation is its last call; the others as logged.
    graded = {str(r["id"]): own_reading(r) for r in records()[:4]}
    graded["conv-1"] = own_reading(records()[-1])
    scored = sorted(k for k, v in graded.items() if v != "unscored")
    human, check = [HUMAN[k] for k in scored], [graded[k] for k in scored]
    (tn, fp), (fn, tp) = confusion_matrix(human, check, labels=["fail", "pass"]).tolist()
    rows = {row["name"]: row for row in document["checks"]}
    answer = rows["states_amount"]
    assert (answer["n"], answer["tp"], answer["fn"], answer["tn"], answer["fp"]) == (
        len(HUMAN), tp, fn, tn, fp)
    assert answer["unscored"] == sum(v == "unscored" for v in graded.values()) == 2
    # Kappa over every case, unscored a third category that never matches a person.
    everyone = sorted(graded)
    kappa = cohen_kappa_score([HUMAN[k] for k in everyone], [graded[k] for k in everyone])
    assert answer["kappa"] == pytest.approx(float(kappa), abs=1e-4)
    assert 0 < kappa < 1  # the two unscored runs cost agreement: they are no pass
    # No state in a Messages log and none mapped: the state check is unscored on every
    # run, with that reason, never passed on two empty states.
    assert rows["nothing_changed"]["unscored"] == len(HUMAN)
    assert rows["nothing_changed"]["tp"] == 0
    # The mapped categories reach the per-category table.
    assert any("unscored on every one of 5 runs: the run records no state" in note
               for note in rows["nothing_changed"]["notes"])
    # The mapped categories reach the per-category table, with the runs of each.
    categories = document["categories"]
    assert sorted(categories) == ["limits", "refund"]
    assert categories["limits"]["checks"]["states_amount"]["unscored"] == ["r3", "r4"]
    assert categories["refund"]["checks"]["states_amount"]["caught"] == ["r2"]


def _runs(tmp_path: Path, lines: list[JsonObject]) -> list[ImportedRun]:
    log = tmp_path / "calls.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    errors: list[LoadError] = []
    runs = list(read_anthropic([log], errors))
    assert errors == []
    return runs


def test_a_three_call_conversation_is_one_run_that_says_which_rule_joined_it(
        tmp_path: Path) -> None:
    refused: list[tuple[ImportedRun, BadRecord]] = []
    (run,) = list(joined(_runs(tmp_path, conversation()), True, None, refused))
    assert refused == []
    assert run.id == "conv-1"
    assert run.metadata["joined"] == {"calls": 3, "rule": EXTENDS}
    assert [type(e).__name__ for e in run.trajectory].count("ToolCall") == 2
    # Two unrelated requests, or the same request twice (two trials), stay two runs.
    single = records()[:2]
    assert len(list(joined(_runs(tmp_path, [*single, single[0]]), True, None, []))) == 3


def test_calls_naming_one_conversation_are_joined_whatever_lies_between(
        tmp_path: Path) -> None:
    first, second, third = conversation()
    other = records()[0]
    lines = [{**first, "session": "s-1"}, other, {**second, "session": "s-1"},
             {**third, "session": "s-1"}]
    runs = list(joined(_runs(tmp_path, lines), True, "metadata.session", []))
    # The conversation is let go at its last record; r1, which a later call might
    # still extend, at the end of the log.
    assert [r.id for r in runs] == ["conv-1", "r1"]
    assert runs[0].metadata["joined"] == {"calls": 3, "rule": SAME_CONVERSATION}
    # Without the named key, the unrelated call between them splits the conversation:
    # the first call alone, then the last two, joined because the third extends the second.
    assert [r.id for r in joined(_runs(tmp_path, lines), True, None, [])] == [
        "conv-1", "r1", "conv-2"]


def test_a_step_limit_and_a_token_limit_end_the_run_without_an_answer(
        tmp_path: Path) -> None:
    runs = {r.id: r for r in joined(_runs(tmp_path, records()[:4]), True, None, [])}
    assert isinstance(runs["r3"].trajectory[-1], Timeout)
    assert "max_tokens" in runs["r3"].trajectory[-1].detail
    assert isinstance(runs["r4"].trajectory[-1], Timeout)
    assert "'t9'" in runs["r4"].trajectory[-1].detail
    # The mirror: a run that finished keeps its answer as the last event.
    assert not isinstance(runs["r1"].trajectory[-1], Timeout)
