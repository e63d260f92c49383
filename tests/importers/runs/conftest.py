"""What the run importers' tests share: an Anthropic request log and its native run,
the inspect_ai eval logs that inspect_ai's own ``eval()`` writes with its mock model
(once a module: about 8 s), and an OpenTelemetry SDK provider whose spans go to a file."""

from __future__ import annotations

import gzip
import importlib.util
import os
import subprocess
import sys
from collections.abc import Generator, Iterator
from pathlib import Path

import pluggy
import pytest
from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from metaeval.contract import JsonObject, JsonValue

REPO = Path(__file__).resolve().parents[3]
TIKTOKEN = REPO.parent / "shared" / "benchmarks" / "inspect_ai" / "tiktoken-cache"
HAS_INSPECT = importlib.util.find_spec("inspect_ai") is not None
CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

# METAEVAL_REQUIRE_SDKS (CI, after installing the SDK extras): a test or a module
# skipped for a missing SDK is a failure, so an extra that did not install (or an
# SDK that lost a dependency it used to bring) cannot turn the step green unmeasured.
REQUIRE_SDKS = bool(os.environ.get("METAEVAL_REQUIRE_SDKS"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pluggy.Result[pytest.TestReport], None]:
    report = (yield).get_result()
    if REQUIRE_SDKS and report.skipped:
        report.outcome = "failed"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector
                               ) -> Generator[None, pluggy.Result[pytest.CollectReport], None]:
    report = (yield).get_result()
    if REQUIRE_SDKS and report.skipped:
        report.outcome = "failed"


# A request as a harness logs it before the last call, with the reply it got.
REQUEST: JsonObject = {
    "id": "refund-7", "task_id": "refund", "model": "claude-x", "max_tokens": 1024,
    "system": [{"type": "text", "text": "You are a support agent."}],
    "messages": [
        {"role": "user", "content": "Order A-1182 arrived broken; refund it."},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should check the order.", "signature": "s"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_order",
             "input": {"order_id": "A-1182"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1",
             "content": "{\"total\": 49.99}"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_2", "name": "refund",
             "input": {"order_id": "A-1182", "amount": 49.99}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
             "content": [{"type": "text", "text": "Error: refunds are closed"}]}]}],
    "response": {"id": "msg_9", "type": "message", "role": "assistant", "model": "claude-x",
                 "content": [{"type": "text", "text": "I could not refund it yet."}],
                 "stop_reason": "end_turn", "stop_sequence": None,
                 "usage": {"input_tokens": 120, "output_tokens": 9}},
}

# The same run written by hand in the native format: the other side of the comparison.
NATIVE: list[JsonValue] = [
    {"type": "message", "role": "system", "content": "You are a support agent."},
    {"type": "message", "role": "user", "content": "Order A-1182 arrived broken; refund it."},
    {"type": "message", "role": "assistant", "content": "Checking."},
    {"type": "tool_call", "id": "toolu_1", "tool": "get_order", "args": {"order_id": "A-1182"}},
    {"type": "tool_result", "call_id": "toolu_1", "content": {"total": 49.99}},
    {"type": "tool_call", "id": "toolu_2", "tool": "refund",
     "args": {"order_id": "A-1182", "amount": 49.99}},
    {"type": "tool_result", "call_id": "toolu_2", "content": "Error: refunds are closed"},
    {"type": "message", "role": "assistant", "content": "I could not refund it yet."},
]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # METAEVAL_REQUIRE_INSPECT (CI, after installing the extra): a skip is a failure.
    missing = pytest.fail if os.environ.get("METAEVAL_REQUIRE_INSPECT") else pytest.skip
    if not HAS_INSPECT:
        missing("inspect_ai is not installed (pip install 'metaeval[inspect]')")
    caches = sorted(TIKTOKEN.glob("*.gz"))
    if not caches:
        missing(f"no tiktoken cache in {TIKTOKEN}: the mock model would download one")
    root = tmp_path_factory.mktemp("inspect")
    cache = root / "tiktoken"
    cache.mkdir()
    for gz in caches:
        (cache / gz.name.removesuffix(".gz")).write_bytes(gzip.decompress(gz.read_bytes()))
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "INSPECT_LOG_LEVEL": "error",
           "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "tests.importers.runs.inspect_task",
                           str(root)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    yield root


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[TracerProvider]:
    monkeypatch.setenv(CAPTURE, "SPAN_ONLY")
    provider = TracerProvider()
    yield provider
    provider.shutdown()


def export(provider: TracerProvider, path: Path) -> None:
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
