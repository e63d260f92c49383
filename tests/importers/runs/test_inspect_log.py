"""inspect_ai eval logs as runs, on logs that inspect_ai's own eval() wrote (mock model,
offline). Skipped without inspect_ai (the ``metaeval[inspect]`` extra) or without the
tiktoken cache in ../shared that lets its mock model count tokens offline."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from metaeval.commands.import_runs import ImportRequest, import_runs
from metaeval.contract import JsonObject
from metaeval.errors import InputError
from metaeval.importers.runs.inspect_log import read_inspect
from metaeval.loaders.meta_set import load_meta_sets
from metaeval.testing import assert_graders
from metaeval.untrusted_json import LoadError
from tests.importers.runs.inspect_cases import CASES, EPOCHS


def lines(path: Path, label_from: str | None = None) -> list[JsonObject]:
    result = import_runs(ImportRequest("inspect", (path,), label_from))
    assert result.errors == ()
    return list(result.lines)


def test_each_sample_and_epoch_is_a_run_with_its_calls_results_and_store(logs: Path) -> None:
    runs = lines(logs / "refunds.eval")
    assert [r["id"] for r in runs] == [f"refunds:{sid}:{e}" for sid, _, _ in CASES
                                       for e in range(1, EPOCHS + 1)]
    first = runs[0]
    assert first["task"] == {"id": "refunds:refund-1", "instruction": "Refund order A-1182.",
                             "criteria": {"target": "refunded"}}
    events = first["trajectory"]
    assert isinstance(events, list)
    call, result = events[2], events[3]
    assert isinstance(call, dict) and isinstance(result, dict)
    assert events[0] == {"type": "message", "role": "user", "content": "Refund order A-1182."}
    assert (call["type"], call["tool"], call["args"]) == ("tool_call", "get_order",
                                                          {"order_id": "A-1182"})
    # The tool's JSON text is read as the object it holds, paired with its call.
    order: JsonObject = {"order_id": "A-1182", "total": 49.99}
    assert result == {"type": "tool_result", "call_id": call["id"], "content": order}
    assert events[-1] == {"type": "message", "role": "assistant",
                          "content": "Refunded A-1182: $49.99."}
    assert first["final_state"] == {"looked_up": "A-1182"}
    metadata = first["metadata"]
    assert isinstance(metadata, dict)
    assert (metadata["task"], metadata["model"], metadata["epoch"]) == ("refunds",
                                                                        "mockllm/model", 1)
    assert metadata["sample"] == {"tier": "gold"}
    score: JsonObject = {"value": "C", "answer": "refunded a-1182: $49.99.",
                         "explanation": "Refunded A-1182: $49.99."}
    assert metadata["scores"] == {"includes": score}


def test_a_failed_tool_call_is_kept_with_the_error_the_model_saw(logs: Path) -> None:
    second = lines(logs / "refunds.eval")[EPOCHS]  # refund-2, epoch 1
    events, metadata = second["trajectory"], second["metadata"]
    assert isinstance(events, list) and isinstance(metadata, dict)
    call, result = events[2], events[3]
    assert isinstance(call, dict)
    assert result == {"type": "tool_result", "call_id": call["id"],
                      "content": "Error: no order B-404"}
    assert metadata["tool_errors"] == [call["id"]]


def test_the_eval_and_json_logs_inspect_wrote_give_the_same_runs(logs: Path) -> None:
    assert lines(logs / "refunds.json") == lines(logs / "refunds.eval")


def test_scores_become_labels_and_the_runs_load_as_a_meta_set(logs: Path, tmp_path: Path
                                                               ) -> None:
    runs = lines(logs / "refunds.eval", label_from="includes")
    expected = {"refund-1": "pass", "refund-2": "fail", "refund-3": "pass", "refund-4": "fail"}
    assert [r["label"] for r in runs] == [{"verdict": expected[sid], "labeller":
                                           "score:includes"} for sid, _, _ in CASES
                                          for _ in range(EPOCHS)]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    loaded = load_meta_sets([path])
    assert loaded.errors == () and len(loaded.runs) == len(CASES) * EPOCHS


def test_a_check_measured_on_imported_runs_gives_scikit_learns_numbers(logs: Path,
                                                                       tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log
    from sklearn.metrics import cohen_kappa_score

    # The check a suite would declare once: the answer says "Refunded" (case-sensitive,
    # where inspect's includes() is not, so the two disagree on refund-3).
    check: JsonObject = {"grader": "answer_contains", "pattern": "Refunded",
                         "name": "says_refunded"}
    runs = lines(logs / "refunds.eval", label_from="includes")
    path = tmp_path / "runs.jsonl"
    for r in runs:
        task = r["task"]
        assert isinstance(task, dict)
        task["checks"] = [check]
        # The scorer's verdict labels this check (an overall fail alone would not say
        # which check failed, and would measure only the evaluator).
        label = r["label"]
        assert isinstance(label, dict)
        label["criteria"] = {"says_refunded": label["verdict"]}
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    result = assert_graders(path, allowed_modules=())
    (measured,) = [c.measured for c in result.checks if c.name == "says_refunded"]
    # The other side, from inspect_ai's own reading of the log: its scores, and the
    # rule applied to its samples' final completions.
    samples = read_eval_log(str(logs / "refunds.eval")).samples or []
    human = [s.scores["includes"].value == "C" for s in samples if s.scores]
    rule = ["Refunded" in s.output.completion for s in samples]
    assert len(human) == len(rule) == measured.n == len(CASES) * EPOCHS
    tp = sum(h and r for h, r in zip(human, rule, strict=True))
    tn = sum(not h and not r for h, r in zip(human, rule, strict=True))
    assert measured.tpr.value == pytest.approx(tp / sum(human))
    assert measured.tnr.value == pytest.approx(tn / (len(human) - sum(human)))
    assert measured.kappa.value == pytest.approx(cohen_kappa_score(human, rule))
    assert 0 < measured.kappa.value < 1  # the two disagree somewhere: a number, not a tie


def test_a_file_inspect_cannot_read_is_named_and_the_others_still_load(logs: Path,
                                                                       tmp_path: Path) -> None:
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    errors: list[LoadError] = []
    runs = list(read_inspect([bad, logs / "refunds.eval"], errors))
    assert len(runs) == len(CASES) * EPOCHS
    assert [(e.path, e.line, e.field) for e in errors] == [(str(bad), 0, "")]
    assert errors[0].message.startswith("not an inspect_ai eval log: ")


def test_a_sample_inspect_cannot_dump_is_one_error_and_the_others_load(
        logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspect_ai.log import EvalSample

    dump = EvalSample.model_dump

    def failing(self: Any, **kwargs: Any) -> Any:  # inspect_ai's types are Any to mypy
        if self.id == "refund-2":
            raise ValueError("store value is not JSON")
        return dump(self, **kwargs)

    monkeypatch.setattr(EvalSample, "model_dump", failing)
    errors: list[LoadError] = []
    runs = list(read_inspect([logs / "refunds.eval"], errors))
    assert len(runs) == (len(CASES) - 1) * EPOCHS
    assert [e.field for e in errors] == [f"samples[{i}]" for i in (EPOCHS, EPOCHS + 1)]
    assert "store value is not JSON" in errors[0].message


def test_without_inspect_ai_the_error_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(InputError, match=r"pip install 'metaeval\[inspect\]'"):
        list(read_inspect([tmp_path / "x.eval"], []))
