"""Run a labelling session's application with uvicorn on 127.0.0.1 only, on a free
port the operating system picks, with a fresh random token per session.

``serve`` runs in the foreground until Ctrl-C (the command's case); ``Running``
runs it on a thread, for tests and tools that drive the page. Neither ever binds
another address: the page is for the person at this machine.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType

import uvicorn

from metaeval.errors import InputError
from metaeval.label.app import create_app
from metaeval.label.queue import Entry
from metaeval.label.store import LabelStore

HOST = "127.0.0.1"


def new_token() -> str:
    """A per-session token: 128 random bits, URL-safe."""
    return secrets.token_urlsafe(16)


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as e:
        sock.close()
        raise InputError(f"--port {port}: cannot listen on {HOST}:{port} ({e.strerror or e}); "
                         "expected a free port, or none for one the system picks") from e
    sock.listen(64)
    return sock


def _server(annotator: str, token: str, entries: tuple[Entry, ...],
            store: LabelStore) -> uvicorn.Server:
    from metaeval.label.app import Session

    app = create_app(Session(annotator, token, entries, store))
    return uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                         lifespan="off"))


def url_of(sock: socket.socket, token: str) -> str:
    port = sock.getsockname()[1]
    return f"http://{HOST}:{port}/{token}/"


def serve(annotator: str, entries: tuple[Entry, ...], store: LabelStore, *, port: int = 0,
          ready: Callable[[str], None]) -> None:
    """Serve until interrupted; ``ready`` gets the URL (with its token) once the
    socket listens, before the first request can come."""
    token = new_token()
    sock = _bind(port)
    store.serving(sock.getsockname()[1])
    server = _server(annotator, token, entries, store)
    ready(url_of(sock, token))
    server.run(sockets=[sock])


class Running:
    """A session served on a thread; ``url`` has the token; ``stop`` ends it."""

    def __init__(self, annotator: str, entries: tuple[Entry, ...], store: LabelStore) -> None:
        self.token = new_token()
        self.sock = _bind(0)
        store.serving(self.sock.getsockname()[1])
        self.url = url_of(self.sock, self.token)
        self.server = _server(annotator, self.token, entries, store)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the labelling server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()

    def __enter__(self) -> Running:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()
