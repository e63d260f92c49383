"""Run a labelling session's application with uvicorn on 127.0.0.1 only, on a free
port the operating system picks, with a fresh random token per session.

``serve`` runs in the foreground until Ctrl-C (the command's case); ``Running``
runs it on a thread, for tests and tools that drive the page. Neither ever binds
another address: the page is for the person at this machine.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from metaeval.errors import InputError
from metaeval.label.app import Session, create_app
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


FIRST_REQUEST_SECONDS = 10.0
"""How long a connection may stay open before its first request has come whole: a
connection that never sends one (half open) is closed, so a thousand of them
cannot take every file descriptor the server has."""


class _Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for the first request; after it,
    uvicorn's own keep-alive timeout closes an idle connection."""

    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline = self.loop.call_later(FIRST_REQUEST_SECONDS, self._no_request)

    def _no_request(self) -> None:
        if self.cycle is None and not self.transport.is_closing():
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(exc)


def _server(session: Session) -> uvicorn.Server:
    return uvicorn.Server(uvicorn.Config(create_app(session), log_level="warning",
                                         access_log=False, lifespan="off", http=_Protocol))


def url_of(sock: socket.socket, path: str) -> str:
    port = sock.getsockname()[1]
    return f"http://{HOST}:{port}/{path}"


def serve(annotator: str, entries: tuple[Entry, ...], store: LabelStore, *,
          ready: Callable[[str, str], None], port: int = 0, blind: bool = True,
          others: tuple[Path, ...] = ()) -> None:
    """Serve until interrupted; ``ready`` gets the URL (with its token) and the one-time
    URL to open a browser on, once the socket listens, before the first request.
    ``blind`` and ``others``: as ``app.Session``'s."""
    session = Session(annotator, new_token(), entries, store, launch=new_token(),
                      blind=blind, others=others)
    sock = _bind(port)
    store.serving(sock.getsockname()[1])
    server = _server(session)
    ready(url_of(sock, f"{session.token}/"), url_of(sock, f"launch/{session.launch}"))
    server.run(sockets=[sock])


class Running:
    """A session served on a thread; ``url`` has the token; ``stop`` ends it."""

    def __init__(self, annotator: str, entries: tuple[Entry, ...], store: LabelStore, *,
                 blind: bool = True, others: tuple[Path, ...] = ()) -> None:
        session = Session(annotator, new_token(), entries, store, launch=new_token(),
                          blind=blind, others=others)
        self.token = session.token
        self.sock = _bind(0)
        store.serving(self.sock.getsockname()[1])
        self.url = url_of(self.sock, f"{self.token}/")
        self.launch_url = url_of(self.sock, f"launch/{session.launch}")
        self.server = _server(session)
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
