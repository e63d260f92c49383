"""A stand-in for a Langfuse server on loopback, for the langfuse importer's tests.

It takes what the real SDK posts (OTLP protobuf spans to ``/api/public/otel/v1/traces``,
score batches to ``/api/public/scores``), stores them as a Langfuse server does
(each span an observation: the ``langfuse.observation.*`` attributes its fields,
input and output kept as the raw strings the SDK wrote), and answers the public
API's reads the SDK's own client makes (``GET /api/public/v2/observations``,
``GET /api/public/v3/scores``), paged by cursor and cut to the field groups asked
for; the client parses every answer with the SDK's pydantic models, so a file
written from them has the API's real schema. Scores people enter come from the
annotation-queue UI, not the SDK: a score posted with ``metadata.annotator`` is
stored as that UI stores one (``source: ANNOTATION``, ``authorUserId``, ``queueId``),
and one with ``metadata.source: "EVAL"`` as an LLM-as-a-judge evaluator's.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.loopback import serving

GROUPS = {
    "basic": ("name", "level", "statusMessage", "version", "environment", "bookmarked",
              "public", "userId", "sessionId", "isRootObservation"),
    "io": ("input", "output"),
    "model": ("model", "internalModelId", "modelParameters"),
    "trace_context": ("tags", "release", "traceName"),
}
CORE = ("id", "traceId", "startTime", "endTime", "projectId", "parentObservationId", "type")
SCORE_GROUPS = {"details": ("comment", "configId", "metadata"), "subject": ("subject",),
                "annotation": ("authorUserId", "queueId")}


def _iso(nanos: int) -> str:
    return datetime.fromtimestamp(nanos / 1e9, UTC).isoformat().replace("+00:00", "Z")


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def _observation(span: Any) -> dict[str, Any]:
    a = {kv.key: _value(kv.value) for kv in span.attributes}
    failed = span.status.code == 2  # STATUS_CODE_ERROR
    parent = span.parent_span_id.hex() or None
    return {
        "id": span.span_id.hex(), "traceId": span.trace_id.hex(),
        "startTime": _iso(span.start_time_unix_nano), "endTime": _iso(span.end_time_unix_nano),
        "projectId": "project-1", "parentObservationId": parent,
        "type": str(a.get("langfuse.observation.type", "span")).upper(), "name": span.name,
        "level": a.get("langfuse.observation.level", "ERROR" if failed else "DEFAULT"),
        "statusMessage": a.get("langfuse.observation.status_message",
                               span.status.message or None),
        "version": a.get("langfuse.version"),
        "environment": a.get("langfuse.environment", "default"), "bookmarked": False,
        "public": False, "userId": a.get("user.id"), "sessionId": a.get("session.id"),
        "isRootObservation": parent is None,
        "input": a.get("langfuse.observation.input"),
        "output": a.get("langfuse.observation.output"),
        "model": a.get("langfuse.observation.model.name"), "internalModelId": None,
        "modelParameters": None, "tags": [], "release": a.get("langfuse.release"),
        "traceName": a.get("langfuse.trace.name"),
    }


def _score(posted: dict[str, Any], n: int) -> dict[str, Any]:
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    metadata = posted.get("metadata") or {}
    kind = posted.get("dataType", "NUMERIC")
    value = posted["value"]
    score = {
        "id": posted.get("id") or f"score-{n}", "projectId": "project-1",
        "name": posted["name"], "dataType": kind,
        "value": bool(value) if kind == "BOOLEAN" else value,
        "source": "API", "timestamp": posted.get("timestamp", now), "environment": "default",
        "createdAt": now, "updatedAt": now, "comment": posted.get("comment"),
        "configId": posted.get("configId"), "metadata": metadata, "authorUserId": None,
        "queueId": None,
        "subject": ({"kind": "observation", "id": posted["observationId"],
                     "traceId": posted.get("traceId")} if posted.get("observationId")
                    else {"kind": "trace", "id": posted["traceId"]}),
    }
    if "annotator" in metadata:
        score.update(source="ANNOTATION", authorUserId=metadata["annotator"],
                     queueId="queue-1")
    elif metadata.get("source") == "EVAL":
        score["source"] = "EVAL"
    return score


class Store:
    def __init__(self) -> None:
        self.observations: list[dict[str, Any]] = []
        self.scores: list[dict[str, Any]] = []
        self.lock = threading.Lock()


def _page(rows: list[dict[str, Any]], query: dict[str, list[str]], core: tuple[str, ...],
          groups: dict[str, tuple[str, ...]], scores: bool = False) -> dict[str, Any]:
    asked = set((query.get("fields") or [""])[0].split(","))
    keep = set(core) | {k for g, keys in groups.items() if g in asked for k in keys}
    start = int((query.get("cursor") or ["0"])[0])
    limit = int((query.get("limit") or ["50"])[0])
    chosen = rows[start:start + limit]
    meta: dict[str, Any] = {"limit": limit} if scores else {}  # v3 scores' meta has it
    if start + limit < len(rows):
        meta["cursor"] = str(start + limit)
    return {"data": [{k: v for k, v in row.items() if k in keep} for row in chosen],
            "meta": meta}


def _handler(store: Store) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
                ExportTraceServiceRequest,
            )

            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            path = urlsplit(self.path).path
            with store.lock:
                if path == "/api/public/otel/v1/traces":
                    request = ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    store.observations += [_observation(s) for r in request.resource_spans
                                           for scope in r.scope_spans for s in scope.spans]
                    self._answer(200, {})
                elif path == "/api/public/scores":
                    posted = json.loads(body)
                    for one in posted if isinstance(posted, list) else [posted]:
                        store.scores.append(_score(one, len(store.scores)))
                    self._answer(202, {"message": "Accepted"})
                else:
                    self._answer(404, {"message": f"no {path}"})

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            with store.lock:
                if url.path == "/api/public/v2/observations":
                    rows = sorted(store.observations, key=lambda o: o["startTime"])
                    self._answer(200, _page(rows, query, CORE, GROUPS))
                elif url.path == "/api/public/v3/scores":
                    core = ("id", "projectId", "name", "value", "dataType", "source",
                            "timestamp", "environment", "createdAt", "updatedAt")
                    self._answer(200, _page(store.scores, query, core, SCORE_GROUPS, True))
                else:
                    self._answer(404, {"message": f"no {url.path}"})

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def langfuse_server() -> Iterator[str]:
    """A loopback Langfuse stand-in for the life of the block; yields its base URL."""
    with serving(_handler(Store())) as url:
        yield url
