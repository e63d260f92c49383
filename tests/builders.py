"""Small builders for hand-written runs and projects, so each test shows only what it
is about."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

from metaeval.contract import (
    EvalInput,
    Event,
    JsonObject,
    JsonValue,
    Message,
    TaskSpec,
    ToolCall,
    ToolResult,
    Trajectory,
)
from metaeval.gate_bars import Results
from metaeval.mutation.findings_file import Findings, Seen, save, survivors
from metaeval.mutation.fork.parent import start_warm
from metaeval.mutation.isolation.options import Isolation, RunOptions
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
from metaeval.mutation.run.runner import MutationRun, Progress, run_mutants


def user(text: str) -> Message:
    return Message("user", text)


def assistant(text: str) -> Message:
    return Message("assistant", text)


def call(call_id: str, tool: str, **args: JsonValue) -> ToolCall:
    return ToolCall(call_id, tool, dict(args))


def result(call_id: str, content: JsonValue) -> ToolResult:
    return ToolResult(call_id, content)


def run(*events: Event, initial: Mapping[str, object] | None = None,
        final: Mapping[str, object] | None = None,
        criteria: Mapping[str, object] | None = None) -> EvalInput:
    """A run of the refund task; states and criteria are JSON-shaped test data."""
    task = TaskSpec("refund-damaged-item", "Refund order A-1182.", _json(criteria))
    return EvalInput(task, Trajectory(tuple(events)), _json(initial), _json(final))


def _json(value: Mapping[str, object] | None) -> JsonObject:
    return cast(JsonObject, dict(value or {}))


def config_project(root: Path, tool: str = "") -> Path:
    """A project at ``root`` that is its pyproject.toml: a ``[project]`` name and the
    ``tool`` text after it (``[tool.metaeval...]`` tables, as a user writes them)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(f"[project]\nname = 'p'\n\n{tool}", encoding="utf-8")
    return root



CHECKS: list[JsonValue] = [
    {"grader": "tool_order", "before": "get_order", "after": "refund"},
    {"grader": "state_includes", "path": "refunds", "match": {"order_id": "A-1182"},
     "name": "refund_issued"},
    {"grader": "grounded_numbers"},
    {"grader": "answer_contains", "text": "refund"},
    {"grader": "max_steps", "value": 4},
]


def record(run_id: str = "r1", **overrides: object) -> JsonObject:
    """A meta-set line, as JSON: the refund run, clean and labelled a pass, every field
    present; ``overrides`` replace top-level fields."""
    base: JsonObject = {
        "id": run_id,
        "category": "pass/clean",
        "task": {"id": "refund", "instruction": "Refund A-1182.", "checks": CHECKS},
        "trajectory": [
            {"type": "message", "role": "user", "content": "Refund order A-1182 please."},
            {"type": "tool_call", "id": "c1", "tool": "get_order", "args": {"order_id": "A-1182"}},
            {"type": "tool_result", "call_id": "c1", "content": {"total": 49.99}},
            {"type": "message", "role": "assistant", "content": "Let me refund that."},
            {"type": "tool_call", "id": "c2", "tool": "refund",
             "args": {"order_id": "A-1182", "amount": 49.99}},
            {"type": "tool_result", "call_id": "c2", "content": {"status": "issued"}},
            {"type": "message", "role": "assistant", "content": "I've refunded $49.99."},
        ],
        "initial_state": {"refunds": []},
        "final_state": {"refunds": [{"order_id": "A-1182", "amount": 49.99}]},
        "label": {"verdict": "pass", "score": 5, "rationale": "clean"},
    }
    base.update(overrides)  # type: ignore[arg-type]
    return base


# One result of each kind, as the gate reads them from their files.
META_EVAL: JsonObject = {
    "checks": [{"name": "refund_issued", "tpr": 1.0, "tnr": 0.8, "kappa": 0.75}],
    "evaluator": {"name": "evaluator", "kappa": 0.87}}
AUDIT: JsonObject = {"judge": {"name": "gpt-judge", "version": "abc123"},
         "agreement": {"pointwise": {"kappa": {"value": 0.5, "reason": ""}}}}
MUTATE: JsonObject = {"counts": {"Killed": 9, "Survived": 1}, "score": 0.9, "mutants": []}


def results() -> Results:
    """What ``metaeval gate`` reads: a meta-eval, one judge's audit and a mutate result."""
    return Results(META_EVAL, {"gpt-judge": AUDIT}, MUTATE)

SEEN_1 = Seen("c" * 40, "2026-11-01")
"""The commit and day a tracked survivor was first seen, in the findings built here."""


def mutant(qualname: str = "refund_allowed", operator: str = "flip_comparison",
           original: str = "age > max_age", replacement: str = "age >= max_age",
           line: int = 10, index: int = 0, path: str = "shop/guards.py") -> Mutant:
    """A rewrite mutant of the shop's refund guard (no source read: the fields only)."""
    return Mutant(f"{path}::{qualname}::{operator}::{index}", MutantKind.REWRITE, operator, path,
                  "shop.guards", qualname, Span(line, 5, line, 20), original, replacement)


def tracked(tmp_path: Path) -> Path:
    """A findings file at ``tmp_path`` tracking two open survivors (``a`` and ``b``)."""
    path = tmp_path / "findings.json"
    results = [MutantResult(mutant(qualname=q), Status.SURVIVED) for q in ("a", "b")]
    save(Findings(tuple(survivors(results, {}, SEEN_1))), path)
    return path


def git(repo: Path, *args: str) -> str:
    """``git ARGS`` in ``repo`` as a test's own user (no global config needed); its
    output."""
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=repo, check=True, capture_output=True, text=True).stdout


def run_here(mutants: Sequence[Mutant], options: RunOptions,
             progress: Progress | None = None) -> MutationRun:
    """``run_mutants`` given what the plan gives it: in fork isolation, a warm runner
    started for the mutants' packages."""
    warm = None
    if options.isolation is Isolation.FORK:
        warm = start_warm(options, tuple(sorted({m.module.partition(".")[0] for m in mutants})))
    return run_mutants(mutants, options, progress, warm=warm)
