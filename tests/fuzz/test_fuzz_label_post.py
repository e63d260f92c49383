"""The labelling page's POST body, fuzzed over HTTP against a real server on loopback:
a valid label with exactly one field broken (or bytes that are no JSON at all) is
saved or refused with a 4xx, never a 500; the page's state still loads after it;
and whatever was acknowledged is in the labels file, which still loads."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from metaeval.config import load_config
from metaeval.label.server import Running
from metaeval.label.session import load_entries
from metaeval.label.store import LabelStore, read_rows
from tests.audit.airline import airline_run
from tests.builders import config_project
from tests.fuzz.strategies import Raw, apply, breaks, dump, encode

VALID: dict[str, object] = {"kind": "run", "id": "t00-trial0", "check": "*", "choice": "fail",
                            "rationale": "booked the wrong flight"}


def _schema(record: object, parent: tuple[str | int, ...]) -> dict[str, bool] | None:
    return {"kind": True, "id": True, "check": False, "choice": True, "rationale": False}


def post(url: str, body: bytes) -> int:
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as e:
        with e:
            return int(e.code)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Running, Path]]:
    project = tmp_path_factory.mktemp("label-fuzz")
    (project / "runs.jsonl").write_text("".join(
        json.dumps(airline_run(t, 0, bad=t % 2 == 0, checks=True)) + "\n" for t in range(3)))
    config_project(project, "[tool.metaeval]\nmeta_sets = ['.']\n")
    labels = project / "labels.jsonl"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        with LabelStore(labels) as store:
            entries = load_entries([project / "runs.jsonl"], "ann", store, load_config())
            with Running("ann", entries, store) as running:
                yield running, labels


@given(brk=breaks(VALID, _schema), raw=st.none() | st.binary(max_size=64))
@example(brk=None, raw=b'{"kind": "run", "id": "t00-trial0", "check": "*", "choice": "fail", '
                       b'"rationale": "x\\ud800y"}')
@example(brk=None, raw=b"[" * 5000)
@example(brk=None, raw=b"\xff\xfe")
def test_a_broken_post_is_saved_or_refused_never_a_500(
        server: tuple[Running, Path], brk: object, raw: bytes | None) -> None:
    running, labels = server
    if raw is not None:
        body = raw
    else:
        assert brk is not None
        body = encode(dump(apply(VALID, brk)))  # type: ignore[arg-type]
    status = post(running.url + "api/label", body)
    assert status in (200, 400, 404, 413, 415), (status, body[:200])
    with urllib.request.urlopen(running.url + "api/state", timeout=30) as state:
        assert state.status == 200
        assert json.loads(state.read())["annotator"] == "ann"
    # Every acknowledged label is in the file, and the file still loads.
    read = read_rows(labels)
    assert read.torn is None
    if status == 200:
        assert read.current  # at least the label just given


def test_the_valid_body_is_saved_and_a_broken_one_refused(server: tuple[Running, Path]
                                                          ) -> None:
    """The property above is meaningful: its valid record is saved, and breaking one
    field of it is refused."""
    running, labels = server
    assert post(running.url + "api/label", encode(dump(VALID))) == 200
    assert post(running.url + "api/label", encode(dump({**VALID, "choice": "maybe"}))) == 400
    assert post(running.url + "api/label", encode(dump({**VALID, "id": Raw("NaN")}))) == 400
    (row,) = [r.value for r in read_rows(labels).current
              if r.value.get("run_id") == "t00-trial0" and r.value.get("check") == "*"]
    assert row["label"] == "fail"
