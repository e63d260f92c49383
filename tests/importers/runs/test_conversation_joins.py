"""A conversation id joins every record that names it, wherever the record stands:
two conversations a busy server interleaves in one log are two runs, each merged in
record order; and the joining holds the conversations open at one place in the log,
never the log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from click.testing import CliRunner
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.util.genai.handler import TelemetryHandler
from opentelemetry.util.genai.types import InputMessage, OutputMessage, TextPart

from metaeval.cli import main
from metaeval.contract import Message
from metaeval.importers.runs.common import BadRecord, ImportedRun
from metaeval.importers.runs.mapped import EXTENDS, SAME_CONVERSATION, joined
from tests.importers.runs.conftest import export

# Who says what in each turn of each conversation (the test's own record of it).
TURNS = {"conv-a": ["Refund order A-1.", "It was broken.", "Thanks."],
         "conv-b": ["Where is order B-2?", "Cancel it then."]}
INTERLEAVED = [("conv-a", 0), ("conv-b", 0), ("conv-a", 1), ("conv-b", 1), ("conv-a", 2)]


def _reply(conversation: str, turn: int) -> str:
    return f"{conversation} reply {turn}"


def _turn(handler: TelemetryHandler, conversation: str, turn: int) -> None:
    """One turn as a chat server records it: a trace of its own, naming its
    conversation, whose one model call re-sends the conversation so far."""
    history: list[InputMessage] = []
    for k in range(turn):
        history += [InputMessage(role="user", parts=[TextPart(content=TURNS[conversation][k])]),
                    InputMessage(role="assistant",
                                 parts=[TextPart(content=_reply(conversation, k))])]
    history.append(InputMessage(role="user", parts=[TextPart(content=TURNS[conversation][turn])]))
    with handler.invoke_local_agent(agent_name="support", conversation_id=conversation), \
            handler.inference("anthropic", request_model="claude-x") as chat:
        chat.input_messages = history
        chat.output_messages = [OutputMessage(role="assistant", parts=[
            TextPart(content=_reply(conversation, turn))], finish_reason="stop")]


def test_two_interleaved_conversations_are_two_runs_in_record_order(
        provider: TracerProvider, tmp_path: Path) -> None:
    log = tmp_path / "spans.jsonl"
    export(provider, log)
    handler = TelemetryHandler(tracer_provider=provider)
    for conversation, turn in INTERLEAVED:
        _turn(handler, conversation, turn)
    provider.force_flush()
    out = tmp_path / "runs.jsonl"
    done = CliRunner().invoke(main, ["import", "otel", str(log), "-o", str(out)])
    assert done.exit_code == 0, done.output
    runs = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert sorted(runs) == ["conv-a", "conv-b"]
    for conversation, said in TURNS.items():
        run = runs[conversation]
        expected = [event for k, text in enumerate(said) for event in (
            {"type": "message", "role": "user", "content": text},
            {"type": "message", "role": "assistant", "content": _reply(conversation, k)})]
        assert run["trajectory"] == expected
        assert run["metadata"]["joined"] == {"calls": len(said), "rule": SAME_CONVERSATION}


def _run(run_id: str, conversation: str, *said: str) -> ImportedRun:
    return ImportedRun(run_id, f"log.jsonl:{run_id}", "t",
                       tuple(Message("user", text) for text in said), conversation=conversation)


def test_records_naming_a_conversation_are_merged_and_the_rest_are_not() -> None:
    records = [_run("a1", "A", "a"), _run("b1", "B", "b"), _run("x", "", "x"),
               _run("a2", "A", "a", "a2"), _run("c1", "C", "c"), _run("b2", "B", "b", "b2")]
    runs = {r.id: r for r in joined(records, True, None, [])}
    assert sorted(runs) == ["a1", "b1", "c1", "x"]
    assert [e.content for e in runs["a1"].trajectory if isinstance(e, Message)] == ["a", "a2"]
    assert runs["a1"].metadata["joined"] == {"calls": 2, "rule": SAME_CONVERSATION}
    assert "joined" not in runs["c1"].metadata and "joined" not in runs["x"].metadata
    # Not a per-call format: nothing is joined, whatever the records name.
    assert len(list(joined(records, False, None, []))) == len(records)


def test_a_record_with_no_conversation_still_extends_the_one_before_it() -> None:
    records = [_run("x1", "", "q"), _run("a1", "A", "a"), _run("x2", "", "q", "more")]
    runs = {r.id: r for r in joined(records, True, None, [])}
    assert sorted(runs) == ["a1", "x1"]
    assert runs["x1"].metadata["joined"] == {"calls": 2, "rule": EXTENDS}


def test_a_conversation_is_let_go_at_its_last_record() -> None:
    # The second reading is a stream: each conversation comes out once its last record
    # has been read, so the join holds the conversations open, not the log.
    records = [_run(f"r{n}", f"conv-{n // 2}", "q", *["more"] * (n % 2)) for n in range(200)]
    read: list[str] = []

    def stream() -> Iterator[ImportedRun]:
        for run in records:
            read.append(run.id)
            yield run

    out = joined(stream(), True, None, [], iter(records))
    for n in range(100):
        run = next(out)
        assert run.id == f"r{2 * n}"
        assert run.metadata["joined"] == {"calls": 2, "rule": SAME_CONVERSATION}
        assert len(read) == 2 * n + 2  # read no further than the conversation's last record
    assert next(out, None) is None


def test_a_record_past_its_conversations_last_one_is_an_error_not_a_second_run() -> None:
    # The log grew between the two readings: the first saw one record of A.
    first = [_run("a1", "A", "a")]
    second = [*first, _run("a2", "A", "a", "a2")]
    errors: list[tuple[ImportedRun, BadRecord]] = []
    runs = list(joined(second, True, None, errors, first))
    assert [r.id for r in runs] == ["a1"]
    ((run, bad),) = errors
    assert run.id == "a2"
    assert "a record of conversation 'A' after its last one" in bad.message


def test_a_log_that_names_no_conversation_is_read_once() -> None:
    records = [_run("x1", "", "q"), _run("x2", "", "q", "more"), _run("y", "", "other")]
    read_again: list[str] = []

    def again() -> Iterator[ImportedRun]:
        for run in records:
            read_again.append(run.id)
            yield run

    assert [r.id for r in joined(iter(records), True, None, [], again())] == ["x1", "y"]
    assert read_again == []
    # The mirror: one record naming a conversation, and the log is read again.
    named = [*records, _run("a", "A", "a")]
    records.append(named[-1])
    assert len(list(joined(iter(named), True, None, [], again()))) == 3
    assert read_again == ["x1", "x2", "y", "a"]
