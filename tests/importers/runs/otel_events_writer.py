"""Writes tests/importers/runs/data/otel_openai_v2.jsonl: OpenTelemetry's own OpenAI
instrumentation (``opentelemetry-instrumentation-openai-v2``), in its default mode,
which follows the GenAI conventions before 1.37 (one log record a message,
``gen_ai.system`` on the span), recording support-agent conversations through the
real ``openai`` client against a mock transport (no network), exported by the
OTLP JSON file exporters of spans and logs.

The versions it was written with conflict with the ``opentelemetry-util-genai``
this repository's tests use, so it runs in a venv of its own, and the file it
writes is committed:

    python -m venv /tmp/otel-old && . /tmp/otel-old/bin/activate
    pip install 'opentelemetry-instrumentation-openai-v2==2.4b0' \\
        'opentelemetry-util-genai==0.4b0' openai opentelemetry-sdk \\
        opentelemetry-exporter-otlp-json-file httpx
    PYTHONPATH=. python -m tests.importers.runs.otel_events_writer \\
        tests/importers/runs/data/otel_openai_v2.jsonl
    PYTHONPATH=. python -m tests.importers.runs.otel_events_writer \\
        tests/importers/runs/data/otel_openai_v2_per_call.jsonl --per-call

``SCENARIOS`` is also what the test reads: the tool calls each conversation made
and how its last reply ended. Importing this module imports no OpenTelemetry.
"""

# Run in a venv of its own, with versions this repository does not pin: its
# libraries' stubs there are not the ones mypy sees here.
# mypy: disable-error-code="no-untyped-call,arg-type"
from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import dataclass

# id, the tools the model calls in turn, its last words, and how that reply ended.


@dataclass(frozen=True)
class Scenario:
    id: str
    tools: tuple[str, ...]
    answer: str
    finish: str = "stop"


SCENARIOS = (
    Scenario("o1", ("get_order", "escalate"), "I asked a colleague to approve your refund."),
    Scenario("o2", ("get_order", "refund"), "Refunded $49.99."),
    Scenario("o3", ("get_order",), "Your order shipped yesterday."),
    Scenario("o4", ("refund",), "Refunded."),
    Scenario("o5", ("get_order", "escalate"), "A person will look at it."),
    Scenario("o6", ("get_order", "refund"), "Refunded, as the ticket appro", "length"),
    Scenario("o7", ("get_order",), "I could not find a refund for that order."),
    Scenario("o8", ("get_order", "refund", "get_order"), "Refund issued."),
)


def _completion(n: int, tool: str | None, words: str, finish: str) -> dict[str, object]:
    message: dict[str, object] = {"role": "assistant", "content": words if tool is None
                                  else None}
    if tool is not None:
        message["tool_calls"] = [{"id": f"call_{n}", "type": "function", "function": {
            "name": tool, "arguments": json.dumps({"order_id": "A-1"})}}]
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1,
            "model": "gpt-x", "usage": {"prompt_tokens": 9, "completion_tokens": 9,
                                        "total_tokens": 18},
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if tool else finish}]}


def main(out: str, per_call: bool = False) -> None:
    """The log of every scenario; ``per_call``: with no harness span around a
    conversation, so that each model call is a trace of its own (a per-call log)."""
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    import httpx
    import openai
    from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter
    from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(FileSpanExporter(out)))
    logging = LoggerProvider()
    logging.add_log_record_processor(SimpleLogRecordProcessor(FileLogExporter(out)))
    OpenAIInstrumentor().instrument(tracer_provider=tracing, logger_provider=logging)
    replies: list[dict[str, object]] = []

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=replies.pop(0))

    client = openai.OpenAI(api_key="none", base_url="http://mock.invalid/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(reply)))
    tracer = tracing.get_tracer("support-harness")
    tools = [{"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}}}}
        for name in ("get_order", "refund", "escalate")]
    for s in SCENARIOS:
        # One agent run, one trace: the harness's span is the parent of every call
        # (unless per_call: then each call is a trace of its own).
        with (contextlib.nullcontext() if per_call
              else tracer.start_as_current_span(f"support-run {s.id}")):
            messages: list[dict[str, object]] = [
                {"role": "system", "content": "You are a support agent."},
                {"role": "user", "content": f"Help with {s.id}, please."}]
            for n, tool in enumerate((*s.tools, None)):
                replies.append(_completion(n, tool, s.answer, s.finish))
                done = client.chat.completions.create(model="gpt-x", messages=messages,
                                                      tools=tools)
                said = done.choices[0].message
                messages.append(said.model_dump(exclude_none=True))
                for call in said.tool_calls or []:
                    messages.append({"role": "tool", "tool_call_id": call.id,
                                     "content": json.dumps({"status": "ok"})})
    tracing.shutdown()
    logging.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], per_call="--per-call" in sys.argv[2:])
