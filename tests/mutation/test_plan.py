"""The plan below the command: ``plan_settings`` hands the plan every flag it reads,
and the flags it leaves out are the ones only the run's end reads."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from metaeval.commands.mutate_plan import plan_settings
from metaeval.commands.mutate_values import MutateRequest
from metaeval.mutation.isolation.options import Executor, Isolation
from metaeval.mutation.plan import PlanSettings

END_OF_RUN = {"update_baseline", "sarif_path", "write_timings"}
"""Read after the run, by the conclusion and the run's files, never by the plan."""


def test_every_flag_reaches_the_plan_or_the_end_of_the_run() -> None:
    asked = {f.name for f in dataclasses.fields(MutateRequest)}
    planned = {f.name for f in dataclasses.fields(PlanSettings)}
    assert planned <= asked
    assert asked - planned == END_OF_RUN


def test_plan_settings_copies_each_flag_as_given() -> None:
    # Every field away from its default, so a flag copied from the wrong field or
    # left at its default shows.
    request = MutateRequest(
        paths=("a.py",), jobs=3, timeout_factor=2.5, timeout_constant=7.0,
        mutants_dir=Path("m"), report_path=Path("r.json"), isolation=Isolation.SUBPROCESS,
        since_ref="HEAD~1", cache_path=Path("c.json"), no_cache=True,
        baseline_path=Path("b.json"), update_baseline=True, sarif_path=Path("s.sarif"),
        message_strings=False, shard=(2, 5), shard_out=Path("out"),
        timings_path=Path("t.json"), write_timings=Path("w.json"), trace_only=True,
        write_coverage=Path("cov.json"), coverage_path=Path("shared.json"),
        executor=Executor.RAY, ray_address="ray://head:10001", operators="negate_condition")
    defaults = MutateRequest()
    settings = plan_settings(request)
    for field in dataclasses.fields(PlanSettings):
        given = getattr(request, field.name)
        assert given != getattr(defaults, field.name), field.name
        assert getattr(settings, field.name) == given, field.name
