"""The labelling page's web application (Starlette): the page, its script and style,
and a small JSON API, all under ``/<token>/``.

Every request whose path does not start with the session's token is refused
with 403, before any route runs (the comparison of the token takes the same time
whatever it is given); so another page in the same browser, which cannot read
the printed URL, can neither read the runs nor post a label. A request naming
another host (DNS rebinding) is refused too. The responses forbid any script but
the page's own and any request but to this server (Content-Security-Policy), and
send no referrer. A label is checked here (what it labels, the choice, the
rationale's length) before the store keeps it; the API never echoes data as
markup: the page puts everything in as text.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from metaeval.contract import JsonObject, JsonValue
from metaeval.errors import MetaevalError
from metaeval.label.agree import comparison
from metaeval.label.queue import Entry
from metaeval.label.store import ITEM, RUN, Key, LabelStore, key_of, read_rows
from metaeval.untrusted_json import JsonInputError, parse_json

MAX_BODY = 64 * 1024
"""Bytes a posted label may take: a rationale of 10,000 characters and its fields."""
MAX_RATIONALE = 10_000
CHOICES = {"run": ("pass", "fail", "unsure"), "point": ("pass", "fail", "unsure"),
           "pair": ("left", "right", "tie", "unsure")}
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "connect-src 'self'; img-src 'self'; base-uri 'none'; "
                               "form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
ASSETS = {"": ("label.html", "text/html; charset=utf-8"),
          "label.js": ("label.js", "text/javascript; charset=utf-8"),
          "label.css": ("label.css", "text/css; charset=utf-8")}


@dataclass(frozen=True, slots=True)
class Session:
    """One annotator's labelling session: what to label, in order, and where it goes."""

    annotator: str
    token: str
    entries: tuple[Entry, ...]
    store: LabelStore
    launch: str = ""
    """The one-time path the browser is opened on (``TokenGate``); empty: none."""
    blind: bool = True
    """No grader's or judge's verdict on the page (``--show-graders`` turns it off)."""
    others: tuple[Path, ...] = ()
    """Other annotators' labels files, read (never written) for the comparison view."""

    def all_rows(self) -> list[JsonObject]:
        """This session's rows in force and those of ``others``, read again now (their
        servers may have added labels since); a key in two files counts from the
        first one read, this session's file first."""
        rows: dict[Key, JsonObject] = {key_of(r): r for r in self.store.rows()}
        for path in self.others:
            for row in read_rows(path).current:
                rows.setdefault(key_of(row.value), row.value)
        return list(rows.values())

    def entry(self, kind: str, entry_id: str) -> Entry | None:
        return next((e for e in self.entries if e.kind == kind and e.id == entry_id), None)


class TokenGate:
    """403 for every request whose path is not under ``/<token>/``; and one request, the
    first, to ``/launch/<launch>``, answered with a redirect to the page.

    The browser is opened on the launch path, so that the token never appears on a
    command line (``ps`` shows it to every user of the machine): the launch path is
    spent by the browser's first request, and the token reaches it in a redirect."""

    def __init__(self, app: ASGIApp, token: str, launch: str = "") -> None:
        self.app = app
        self.prefix = f"/{token}/".encode()
        self.launch = f"/launch/{launch}".encode() if launch else b""

    def _launched(self, path: bytes) -> bool:
        if not self.launch or not hmac.compare_digest(path, self.launch):
            return False
        self.launch = b""  # spent
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = str(scope.get("path", "")).encode()
            if self._launched(path):
                await Response(None, 303, {**HEADERS, "Location": self.prefix.decode()})(
                    scope, receive, send)
                return
            given = path[:len(self.prefix)]
            if not hmac.compare_digest(given.ljust(len(self.prefix), b"\0"), self.prefix):
                await PlainTextResponse("forbidden: this page needs the URL metaeval label "
                                        "printed, with its token", 403, HEADERS)(
                    scope, receive, send)
                return
        await self.app(scope, receive, send)


def _key(entry: Entry, check: str, annotator: str) -> Key:
    return Key(RUN if entry.kind == "run" else ITEM, entry.id,
               check if entry.kind == "run" else "", annotator)


def _own(session: Session) -> dict[str, JsonValue]:
    """The annotator's own labels, by entry: ``kind:id`` -> check -> choice (as the
    page names it: a pair's label as the side it was shown on) and rationale."""
    own: dict[str, JsonValue] = {}
    for entry in session.entries:
        got: JsonObject = {}
        for check in entry.checks:
            row = session.store.get(_key(entry, check, session.annotator))
            if row is not None:
                got[check] = {"choice": _choice(entry, row), "rationale":
                              row.get("rationale", "")}
        if got:
            own[f"{entry.kind}:{entry.id}"] = got
    return own


def _choice(entry: Entry, row: JsonObject) -> JsonValue:
    label = row["label"]
    if entry.kind != "pair" or label not in ("a", "b"):
        return label
    shown = row.get("shown", entry.shown)
    return "left" if (label == "a") == (shown == "ab") else "right"


def _label_row(session: Session, entry: Entry, check: str, choice: str,
               rationale: str) -> JsonObject:
    row: JsonObject
    if entry.kind == "run":
        row = {"run_id": entry.id, "check": check, "label": choice,
               "annotator": session.annotator}
    else:
        label = choice
        if entry.kind == "pair" and choice in ("left", "right"):
            label = "a" if (choice == "left") == (entry.shown == "ab") else "b"
        row = {"item_id": entry.id, "label": label, "annotator": session.annotator}
        if entry.kind == "pair":
            row["shown"] = entry.shown
    if rationale:
        row["rationale"] = rationale
    return row


def _bad(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status, HEADERS)


def create_app(session: Session) -> Starlette:
    """The application of one session."""
    assets = {name: (resources.files("metaeval.label").joinpath("static", file).read_bytes(),
                     media) for name, (file, media) in ASSETS.items()}

    async def asset(request: Request) -> Response:
        name = request.path_params.get("name", "")
        if name not in assets:
            return PlainTextResponse("not found", 404, HEADERS)
        body, media = assets[name]
        return Response(body, 200, HEADERS, media)

    async def state(request: Request) -> Response:
        return JSONResponse({"annotator": session.annotator, "blind": session.blind,
                             "entries": [e.json(blind=session.blind) for e in session.entries],
                             "labels": _own(session)}, 200, HEADERS)

    async def label(request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0] != "application/json":
            return _bad("expected Content-Type: application/json", 415)
        length = request.headers.get("content-length")
        if length is None or not length.isdigit() or int(length) > MAX_BODY:
            return _bad(f"expected a body of at most {MAX_BODY} bytes", 413)
        body = await request.body()
        try:
            # The data readers' parser: depth bounded, a lone surrogate (what
            # JSON.stringify sends for half a character) refused, never a 500.
            value = parse_json(body[:MAX_BODY].decode("utf-8"))
        except (UnicodeDecodeError, JsonInputError) as e:
            return _bad(f"expected a JSON object in UTF-8 ({e})")
        if not isinstance(value, dict):
            return _bad("expected a JSON object")
        kind, entry_id = value.get("kind"), value.get("id")
        check, choice = value.get("check", ""), value.get("choice")
        rationale = value.get("rationale", "")
        entry = (session.entry(kind, entry_id)
                 if isinstance(kind, str) and isinstance(entry_id, str) else None)
        if entry is None:
            return _bad(f"no entry {kind!r} {entry_id!r} in this session", 404)
        if check not in entry.checks:
            return _bad(f"check {check!r}: expected one of {', '.join(entry.checks)}")
        if choice not in CHOICES[entry.kind]:
            return _bad(f"choice {choice!r}: expected one of {', '.join(CHOICES[entry.kind])}")
        if not isinstance(rationale, str) or len(rationale) > MAX_RATIONALE:
            return _bad(f"rationale: expected a string of at most {MAX_RATIONALE} characters")
        try:
            session.store.put(_label_row(session, entry, check, choice, rationale))
        except MetaevalError as e:
            return _bad(str(e), 500)
        return JSONResponse({"saved": True, "labels": _own(session)}, 200, HEADERS)

    async def compare(request: Request) -> Response:
        kinds = {e.id: "pairwise" if e.kind == "pair" else "pointwise"
                 for e in session.entries if e.kind != "run"}
        targets = {(RUN if e.kind == "run" else ITEM, e.id): e.checks for e in session.entries}
        # Off the event loop: a large team's figures must not hold up a label posted
        # meanwhile (the store's lock is taken only to copy its rows).
        try:
            rows = await run_in_threadpool(session.all_rows)
        except MetaevalError as e:
            return _bad(str(e), 422)
        figures = await run_in_threadpool(comparison, rows, kinds, targets, session.annotator)
        return JSONResponse(figures, 200, HEADERS)

    token = session.token
    routes = [Route(f"/{token}/api/state", state),
              Route(f"/{token}/api/label", label, methods=["POST"]),
              Route(f"/{token}/api/compare", compare),
              Route(f"/{token}/", asset),
              Route(f"/{token}/{{name}}", asset)]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"]),
                  Middleware(TokenGate, token=token, launch=session.launch)]
    return Starlette(routes=routes, middleware=middleware)

