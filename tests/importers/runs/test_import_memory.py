"""`metaeval import` holds one record (or one open trace) at a time, never the file:
measured with tracemalloc on logs of about 4 MB, whose runs the old reader held
whole (about five times the input)."""

from __future__ import annotations

import importlib
import json
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli.app import main
from tests.benchmarks.conftest import load_benchmark

SIZE = 4_000_000
# What one run, the output's write buffer and an index of the records (a trace id
# a trace, a zip entry a sample) take: half the input, where holding the runs took
# about five times the input.
BOUND = SIZE // 2
MODULES = {"anthropic": "anthropic", "otel": "otel", "inspect": "inspect_log"}


@pytest.mark.parametrize("fmt", ["anthropic", "otel", "inspect"])
def test_an_import_holds_one_run_at_a_time(tmp_path: Path, fmt: str) -> None:
    if fmt == "inspect":
        pytest.importorskip("inspect_ai.log")
    # The importer's modules imported before the count starts: code is not data.
    importlib.import_module(f"metaeval.importers.runs.{MODULES[fmt]}")
    writer, name = load_benchmark("import_memory").WRITERS[fmt]
    writer(tmp_path / name, SIZE)
    output = tmp_path / "runs.jsonl"
    tracemalloc.start()
    try:
        done = CliRunner().invoke(main, ["import", fmt, str(tmp_path / name), "-o", str(output),
                                         "--format", "json"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert done.exit_code == 0, done.output
    runs = json.loads(done.output)["runs"]
    assert runs > 500 and output.read_text().count("\n") == runs
    assert peak < BOUND, f"peak {peak} bytes for {SIZE} bytes of input"
