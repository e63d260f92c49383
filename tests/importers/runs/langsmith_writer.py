"""LangSmith runs and feedback written by the langsmith SDK itself, offline: a
``Client`` whose ``api_url`` is a loopback HTTP server that keeps what the SDK
posts (``POST /runs``, ``PATCH /runs/ID``, ``POST /feedback``) as LangSmith stores
it, and answers the SDK's ``list_runs`` and ``list_feedback`` with it; the files are
what a team writes from those (``run.model_dump_json()``, a line each)."""

from __future__ import annotations

import json
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.loopback import serving


class _Store:
    def __init__(self) -> None:
        self.runs: dict[str, dict[str, Any]] = {}
        self.feedback: list[dict[str, Any]] = []
        self.lock = threading.Lock()


def _handler(store: _Store) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _body(self) -> Any:
            size = int(self.headers.get("content-length") or 0)
            return json.loads(self.rfile.read(size) or b"null")

        def _answer(self, value: Any, status: int = 200) -> None:
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.startswith("/feedback"):
                self._answer(store.feedback if "offset=0" in self.path else [])
            elif self.path == "/info":
                self._answer({})
            else:
                self._answer({"detail": "not here"}, 404)

        def do_POST(self) -> None:
            body = self._body()
            with store.lock:
                if self.path == "/runs":
                    store.runs.setdefault(body["id"], {}).update(body)
                elif self.path == "/feedback":
                    store.feedback.append(body)
                elif self.path == "/runs/query":
                    # The server answers with the stored runs, their attachments as
                    # links (s3_urls), not the posted field.
                    self._answer({"runs": [{k: v for k, v in r.items() if k != "attachments"}
                                           for r in store.runs.values()], "cursors": {}})
                    return
            self._answer({})

        def do_PATCH(self) -> None:
            body = self._body()
            with store.lock:
                store.runs.setdefault(self.path.rsplit("/", 1)[1], {}).update(body)
            self._answer({})

    return Handler


@contextmanager
def langsmith_client() -> Iterator[tuple[Any, _Store]]:
    """A langsmith ``Client`` posting, run by run, to a loopback server, and its store."""
    from langsmith import Client

    store = _Store()
    with serving(_handler(store)) as url:
        yield Client(api_url=url, api_key="test", auto_batch_tracing=False), store


def settled(store: _Store, runs: int) -> None:
    """Wait until the SDK's background posts have reached the server: ``runs`` runs,
    each ended."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with store.lock:
            if len(store.runs) >= runs and all(r.get("end_time") for r in store.runs.values()):
                return
        time.sleep(0.05)
    raise AssertionError(f"the SDK posted {len(store.runs)} runs; expected {runs}")


PROJECT = "00000000-0000-0000-0000-000000000001"
"""The project's id, as feedback names it."""


def write_runs(client: Any, path: Path) -> None:
    """What a team's export does: every run ``list_runs`` returns, a line each."""
    with warnings.catch_warnings():
        # list_runs is deprecated for a newer query API the loopback server lacks.
        warnings.filterwarnings("ignore", message=".*list_runs.*")
        runs = list(client.list_runs(project_id=PROJECT))
    path.write_text("".join(run.model_dump_json() + "\n" for run in runs))


def write_feedback(client: Any, path: Path, run_ids: list[str]) -> None:
    """Every feedback ``list_feedback`` returns for the runs, a line each."""
    path.write_text("".join(f.model_dump_json() + "\n"
                            for f in client.list_feedback(run_ids=run_ids)))


def traced(client: Any, project: str, body: Callable[[], None]) -> None:
    """``body``'s traceable functions, traced to ``client``."""
    from langsmith.run_helpers import tracing_context

    with tracing_context(enabled=True, client=client, project_name=project):
        body()
