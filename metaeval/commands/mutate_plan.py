"""The first phase of ``metaeval mutate``: a ``MutateRequest`` turned into a ``MutatePlan``.

The configuration read once and the request's flags handed to the plan as plain
settings (``metaeval.mutation.plan``: targets, patch mutants, ``--since``, the shard's
share, run options, the result cache, the warm runner), and its plan kept beside
the request. This module never prints, never runs a mutant and never writes a file.
"""

from __future__ import annotations

from metaeval.commands.mutate_values import Message, MutatePlan, MutateRequest
from metaeval.config import load_config
from metaeval.mutation.plan import PlanSettings, plan


def plan_mutate(request: MutateRequest) -> MutatePlan:
    """Find the mutants of ``request`` in the project around the current directory.

    Raises ``InputError`` for a bad config, target, patch-mutants file, git ref,
    timings or coverage file.
    """
    settings = plan_settings(request)
    p = plan(settings, load_config())
    return MutatePlan(request, p.root, p.mutants, p.options,
                      tuple(Message(n.text, n.stderr) for n in p.notes), p.stop, p.cache_file,
                      p.scan, p.report_file, p.findings_file, p.warm, p.shard, p.plan_hash,
                      p.packages, p.execute, p.tree, p.fingerprints, p.results, p.void)


def plan_settings(request: MutateRequest) -> PlanSettings:
    """What of ``request`` the plan is made from: every flag but those only the run's
    end reads (the findings file's update, SARIF, ``--write-timings``)."""
    return PlanSettings(
        paths=request.paths, jobs=request.jobs, timeout_factor=request.timeout_factor,
        timeout_constant=request.timeout_constant, mutants_dir=request.mutants_dir,
        report_path=request.report_path, isolation=request.isolation,
        since_ref=request.since_ref, cache_path=request.cache_path, no_cache=request.no_cache,
        baseline_path=request.baseline_path, message_strings=request.message_strings,
        shard=request.shard, shard_out=request.shard_out, timings_path=request.timings_path,
        trace_only=request.trace_only, write_coverage=request.write_coverage,
        coverage_path=request.coverage_path, executor=request.executor,
        ray_address=request.ray_address, operators=request.operators)
