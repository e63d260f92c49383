"""MLflow traces written by MLflow itself, offline, for the mlflow importer's tests.

A support agent traced with MLflow's own fluent API (``@mlflow.trace`` for the
agent, its tools and a guardrail) calls the real ``openai`` client, which
``mlflow.openai.autolog()`` records as ``CHAT_MODEL`` spans; the client talks to a
mock transport (no network). The traces go to a local file tracking store, people's
verdicts and a judge's are logged with ``mlflow.log_feedback``, an expectation with
``mlflow.log_expectation``, and ``mlflow.search_traces`` reads them back to be
written with ``Trace.to_json()``, one a line, as a user exports them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import mlflow
from mlflow.entities import AssessmentSource, SpanType
from openai import OpenAI

from tests.importers.runs.measured import Scenario, chat_completion


class Tripped(Exception):
    """The guardrail said no."""


@contextmanager
def _file_store() -> Iterator[None]:
    # MLflow 3 keeps the file store in maintenance mode behind this switch; a sqlite
    # store would need SQLAlchemy, which mlflow-skinny leaves out.
    before = os.environ.get("MLFLOW_ALLOW_FILE_STORE")
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("MLFLOW_ALLOW_FILE_STORE", None)
        else:
            os.environ["MLFLOW_ALLOW_FILE_STORE"] = before


def write_traces(path: Path, store: Path, scenarios: Sequence[Scenario],
                 human: Mapping[str, Mapping[str, Any]],
                 judge: Mapping[str, Mapping[str, Any]], search: Path | None = None) -> None:
    """Each scenario run by the traced agent; ``human[check][scenario]`` logged as the
    annotator ``ann``'s feedback and ``judge[check][scenario]`` as an LLM judge's. With
    ``search``, the same traces as MLflow's CLI prints them there (``mlflow traces
    search --output json``)."""
    replies: list[dict[str, Any]] = []
    client = OpenAI(api_key="none", base_url="http://mock.invalid/v1",
                    http_client=httpx.Client(transport=httpx.MockTransport(
                        lambda request: httpx.Response(200, json=replies.pop(0)))))

    def tool(name: str, fails: bool = False) -> Any:
        def run(order_id: str) -> dict[str, str]:
            if fails:
                raise RuntimeError("the refund service is down")
            return {"order_id": order_id, "status": "ok"}
        return mlflow.trace(run, name=name, span_type=SpanType.TOOL)

    tools = {"get_order": tool("get_order"), "refund": tool("refund"),
             "escalate": tool("escalate"), "refund_down": tool("refund", fails=True)}

    @mlflow.trace(span_type=SpanType.GUARDRAIL)  # type: ignore[untyped-decorator]
    def no_abuse(text: str) -> bool:
        if "idiot" in text:
            raise Tripped("abusive message")
        return True

    @mlflow.trace(span_type=SpanType.AGENT)  # type: ignore[untyped-decorator]
    def support(s: Scenario) -> str:
        mlflow.update_current_trace(tags={"scenario": s.id})
        try:
            no_abuse(s.ask)
        except Tripped:
            return "I cannot help with that."
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": s.ask}]
        for _ in range(s.max_steps):
            reply = client.chat.completions.create(model="gpt-x", messages=messages)
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return str(message.content)
            for call in message.tool_calls:
                name = call.function.name
                try:
                    out = json.dumps(tools["refund_down" if name == "refund" and s.id == "m7"
                                           else name](**json.loads(call.function.arguments)))
                except RuntimeError as e:
                    out = f"Error: {e}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": out})
        raise RuntimeError(f"max steps ({s.max_steps}) exceeded")

    with _file_store():
        mlflow.set_tracking_uri(store.as_uri())
        experiment = mlflow.set_experiment("support")
        mlflow.openai.autolog()
        try:
            ids: dict[str, str] = {}
            for s in scenarios:
                replies[:] = [chat_completion(n, t, s.answer, s.finish)
                              for n, t in enumerate((*s.tools, None))]
                try:
                    support(s)
                except RuntimeError:
                    pass  # how the run ended is in its trace
                trace_id = mlflow.get_last_active_trace_id()
                assert trace_id is not None
                ids[s.id] = trace_id
            mlflow.flush_trace_async_logging()
            for verdicts, source in ((human, AssessmentSource("HUMAN", "ann")),
                                     (judge, AssessmentSource("LLM_JUDGE", "gpt-judge"))):
                for check, by_scenario in verdicts.items():
                    for scenario, value in by_scenario.items():
                        mlflow.log_feedback(trace_id=ids[scenario], name=check, value=value,
                                            source=source, rationale=f"{check} on {scenario}")
            mlflow.log_expectation(trace_id=ids["m1"], name="order_id", value="A-1")
            traces = mlflow.search_traces(locations=[experiment.experiment_id],
                                          return_type="list", order_by=["timestamp_ms ASC"])
            if search is not None:
                from click.testing import CliRunner
                from mlflow.cli import cli
                done = CliRunner().invoke(cli, [
                    "traces", "search", "--experiment-id", experiment.experiment_id,
                    "--output", "json"], env={"MLFLOW_TRACKING_URI": store.as_uri()})
                assert done.exit_code == 0, done.output
                search.write_text(done.stdout)
        finally:
            mlflow.openai.autolog(disable=True)
    with path.open("w") as f:
        f.writelines(trace.to_json() + "\n" for trace in traces)
