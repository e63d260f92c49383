"""The phases of ``metaeval mutate`` and where each mode goes: a run's plan to
``run_plan`` (run, then conclude), a ``--trace-only`` plan to ``trace_plan``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from metaeval.commands import mutate, mutate_run
from metaeval.commands.mutate import plan_and_run, run_plan
from metaeval.commands.mutate_plan import plan_mutate
from metaeval.commands.mutate_values import MutatePlan, MutateRequest, MutateResult
from metaeval.errors import ExitCode
from metaeval.mutation.isolation.options import Isolation
from tests.mutation.conftest import never_run

NO_RUN = MutateRequest(mutants_dir=Path("no_patches"), isolation=Isolation.SUBPROCESS,
                       no_cache=True)


def test_run_plan_refuses_a_trace_only_plan_and_runs_nothing(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mutate_run, "run_mutants", never_run)
    plan = plan_mutate(NO_RUN)
    tracing = dataclasses.replace(plan, request=dataclasses.replace(
        plan.request, trace_only=True, write_coverage=Path("c.json")))
    with pytest.raises(ValueError, match="trace_plan"):
        run_plan(tracing)


def test_plan_and_run_sends_a_trace_only_request_to_the_tracer_and_a_run_not(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    traced: list[MutatePlan] = []

    def trace(plan: MutatePlan) -> MutateResult:
        traced.append(plan)
        return MutateResult(ExitCode.OK, plan.root, ())

    monkeypatch.setattr(mutate, "trace_plan", trace)
    monkeypatch.setattr(mutate, "run_plan", lambda plan, progress=None: pytest.fail("ran"))
    request = MutateRequest(mutants_dir=Path("no_patches"), trace_only=True,
                            write_coverage=Path("c.json"), no_cache=True)
    assert plan_and_run(request).code is ExitCode.OK
    assert len(traced) == 1 and traced[0].request.trace_only
    if traced[0].warm is not None:
        traced[0].warm.stop()
    # A run's request never reaches the tracer.
    monkeypatch.setattr(mutate, "run_plan", lambda plan, progress=None: MutateResult(
        ExitCode.FINDINGS, plan.root, ()))
    assert plan_and_run(NO_RUN).code is ExitCode.FINDINGS
    assert len(traced) == 1
