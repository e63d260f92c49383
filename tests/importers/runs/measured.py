"""What the importer tests of real libraries' logs share: a refund suite declared
once, and meta-eval's figures on the imported runs checked against scikit-learn's on
the test's own reading of the same records."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from tests.loaders.conftest import meta_eval, write_csv

GUARD, SAYS = "never_refunds", "says_refund"
PROJECT = f"""[project]
name = "team"

[tool.metaeval.meta_eval]
resamples = 50

[[tool.metaeval.meta_eval.suite]]
name = "{GUARD}"
grader = "no_tool_called"
params = {{ tool = "refund" }}

[[tool.metaeval.meta_eval.suite]]
name = "{SAYS}"
grader = "answer_contains"
params = {{ text = "refund" }}
"""


@dataclass(frozen=True)
class Scenario:
    """One refund agent's run an SDK test drives: what the user asks, the tools the
    scripted model calls in order, its last words, how its last reply ends
    (``finish``: ``length`` is a reply cut at its token limit) and the steps (model
    calls or turns) the agent may take."""

    id: str
    ask: str
    tools: tuple[str, ...]
    answer: str
    finish: str = "stop"
    max_steps: int = 10


def chat_completion(n: int, tool: str | None, words: str, finish: str = "stop"
                    ) -> dict[str, Any]:
    """The scripted model's ``n``-th reply, as OpenAI's chat completions API returns
    it: a call of ``tool`` (with an order id), or ``words`` ending as ``finish``."""
    message: dict[str, Any] = {"role": "assistant", "content": None if tool else words}
    if tool:
        message["tool_calls"] = [{"id": f"call_{n}", "type": "function", "function": {
            "name": tool, "arguments": json.dumps({"order_id": "A-1"})}}]
    return {"id": f"c{n}", "object": "chat.completion", "created": 1, "model": "gpt-x",
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if tool else finish}]}


def measured_as_scikit_learn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: str,
        traces: Mapping[str, Any], human: Mapping[str, Mapping[str, str]],
        graded: Callable[[Any, str], str]) -> dict[str, dict[str, Any]]:
    """Label each run of ``traces`` (run id -> the test's own reading, with its
    ``scenario``) as ``human`` says, measure ``--runs RUNS`` with meta-eval, and check
    each check's counts, unscored and kappa against scikit-learn on ``graded``'s
    verdicts; returns meta-eval's rows by check."""
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    write_csv(tmp_path / "labels.csv", [
        {"run_id": run_id, "check": check, "label": human[check][str(t["scenario"])],
         "annotator": "ann", "rationale": ""}
        for run_id, t in traces.items() for check in (GUARD, SAYS)])
    done = meta_eval(tmp_path, monkeypatch, "--runs", runs, "--labels", "labels.csv",
                     "--format", "json")
    assert done.exit_code in (0, 1), done.output
    document = json.loads(done.output)
    assert document["errors"] == []
    rows: dict[str, dict[str, Any]] = {row["name"]: row for row in document["checks"]}
    ids = sorted(traces)
    for check in (GUARD, SAYS):
        people = [human[check][str(traces[i]["scenario"])] for i in ids]
        said = [graded(traces[i], check) for i in ids]
        scored = [(h, g) for h, g in zip(people, said, strict=True) if g != "unscored"]
        (tn, fp), (fn, tp) = confusion_matrix([h for h, _ in scored], [g for _, g in scored],
                                              labels=["fail", "pass"]).tolist()
        row = rows[check]
        assert (row["n"], row["tp"], row["fn"], row["tn"], row["fp"]) == (len(ids), tp, fn,
                                                                          tn, fp)
        assert row["unscored"] == said.count("unscored")
        assert row["kappa"] == pytest.approx(float(cohen_kappa_score(people, said)), abs=1e-4)
    return rows
