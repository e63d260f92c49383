"""A chat-completions stub on 127.0.0.1 that answers from a script of replies."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

import pytest

from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity, JudgeReply, Mode, Scale
from tests.loopback import serving as loopback


@dataclass
class Stub:
    """``script`` is consumed one entry per request: (status, reply text); the last
    entry repeats. Records every request body and Authorization header."""

    script: list[tuple[int, str]] = field(default_factory=lambda: [(200, "4")])
    delay_s: float = 0.0
    requests: list[dict[str, object]] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    """Method and path of every request, POST or GET (a followed redirect is a GET)."""
    retry_after: str = "0.01"
    """The Retry-After header sent with a 429 ("" sends none)."""
    location: str = ""
    """Where a 3xx reply points (its Location header)."""
    active: int = 0
    most_active: int = 0
    overlap: int = 0
    """Hold each request until this many were in flight at once (at most 5 s): a
    concurrency limit shows without leaning on the scheduler's timing."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def __post_init__(self) -> None:
        self.changed = threading.Condition(self.lock)

    def reply_for(self, number: int) -> tuple[int, str]:
        return self.script[min(number, len(self.script) - 1)]


def _handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.answer({})

        def do_POST(self) -> None:
            self.answer(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

        def answer(self, body: dict[str, object]) -> None:
            with stub.lock:
                stub.paths.append(f"{self.command} {self.path}")
                number = len(stub.requests)  # taken under the lock: concurrent requests
                stub.requests.append(body)
                stub.auth.append(self.headers.get("Authorization", ""))
                stub.active += 1
                stub.most_active = max(stub.most_active, stub.active)
                stub.changed.notify_all()
                stub.changed.wait_for(lambda: stub.most_active >= stub.overlap, timeout=5)
            try:
                time.sleep(stub.delay_s)
                status, text = stub.reply_for(number)
                if status == 200:
                    payload = json.dumps({"choices": [{"message": {"role": "assistant",
                                                                   "content": text}}],
                                          "usage": {"prompt_tokens": 11,
                                                    "completion_tokens": 1}})
                else:
                    payload = json.dumps({"error": text})
                data = payload.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429 and stub.retry_after:
                    self.send_header("Retry-After", stub.retry_after)
                if 300 <= status < 400:
                    self.send_header("Location", stub.location)
                self.end_headers()
                self.wfile.write(data)
            finally:
                with stub.lock:
                    stub.active -= 1

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def serving() -> Iterator[Stub]:
    """One stub server on its own port, for as long as the block runs."""
    state = Stub()
    with loopback(_handler(state)) as url:
        state.url = f"{url}/v1"
        yield state


@pytest.fixture
def stub() -> Iterator[Stub]:
    with serving() as state:
        yield state


@pytest.fixture
def other_stub() -> Iterator[Stub]:
    """A second server on another port: another origin."""
    with serving() as state:
        yield state


@dataclass
class Recording:
    """Answers ``reply`` and keeps every question it was asked."""

    reply: str = "5"
    asked: list[tuple[str, str, str]] = field(default_factory=list)
    scale: Scale = DEFAULT_SCALE
    modes: frozenset[Mode] = frozenset(Mode)

    @property
    def identity(self) -> JudgeIdentity:
        return JudgeIdentity("recording")

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply:
        from metaeval.judges.parse import parse_pointwise

        self.asked.append((prompt, response, criterion))
        return parse_pointwise(self.reply, self.scale)

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply:
        raise AssertionError("a grader never compares")
