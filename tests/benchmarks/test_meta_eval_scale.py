"""Smoke test of benchmarks/meta_eval_scale.py: its runs are valid, real-sized and
unique, so the figures it prints measure meta-eval and not a loader error path.

The benchmark itself is run by hand (docs/benchmarks.md has its figures)."""

from __future__ import annotations

import json
from pathlib import Path

from metaeval.loaders.meta_set import load_meta_sets
from tests.benchmarks.conftest import load_benchmark


def test_the_generated_runs_load_without_an_error_and_are_real_sized(tmp_path: Path) -> None:
    bench = load_benchmark("meta_eval_scale")
    lines = [json.dumps(bench.run_line(i)) for i in range(205)]
    sizes = [len(line.encode()) for line in lines]
    assert 18_000 < sum(sizes) / len(sizes) < 26_000  # ~218 MB for 10,000 runs
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    loaded = load_meta_sets([path])
    assert loaded.errors == ()
    assert len(loaded.runs) == 205  # 200 runs, then the first five again with new ids
    assert loaded.runs[200].input.task == loaded.runs[0].input.task
    calls = sum(len(r.input.trajectory.tool_calls()) for r in loaded.runs[:200])
    assert 1_000 < calls < 1_400  # the 1,164 tool calls in 200 runs
