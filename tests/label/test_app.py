"""The labelling server over HTTP on loopback (a thread in this process): the token
guards every page and API call, a label posted is in the file before the answer
comes, and a pair's sides are mapped back to the item's responses."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

import pytest
from scipy.stats import binomtest

from metaeval.config import load_config
from metaeval.contract import JsonObject
from metaeval.label.server import Running
from metaeval.label.session import load_entries
from metaeval.label.store import LabelStore
from tests.label.conftest import RUNS, pair, write_lines


def call(url: str, body: Mapping[str, object] | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {
        **({"Content-Type": "application/json"} if body is not None else {}),
        **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read()


@pytest.fixture
def running(project: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(project)
    with LabelStore(project / "labels.jsonl") as store:
        entries = load_entries([project / "runs.jsonl", project / "items.ndjson"], "ann",
                               store, load_config())
        with Running("ann", entries, store) as server:
            yield server


def test_every_request_without_the_token_is_refused(running: Running, project: Path) -> None:
    url = running.url
    root = url.removesuffix(f"{running.token}/")
    label = {"kind": "run", "id": "t00-trial0", "check": "*", "choice": "fail"}
    assert call(url)[0] == 200
    assert call(url + "label.js")[0] == 200
    assert call(url + "api/state")[0] == 200
    wrong = running.token[:-1] + ("A" if running.token[-1] != "A" else "B")
    for bad in (root, root + "label.js", root + "api/state", f"{root}{wrong}/api/state",
                f"{root}{running.token}api/state", f"{root}{running.token[:-2]}/api/state"):
        status, body = call(bad)
        assert status == 403, bad
        assert b"t00-trial0" not in body
    for bad in (root + "api/label", f"{root}{wrong}/api/label"):
        assert call(bad, label)[0] == 403
    assert (project / "labels.jsonl").read_bytes() == b""
    # Another host name (a rebinding attack's) is refused even with the token.
    assert call(url + "api/state", headers={"Host": "evil.example"})[0] == 400
    assert call(url + "api/label", label)[0] == 200
    assert (project / "labels.jsonl").read_bytes()


def test_a_label_is_in_the_file_when_the_answer_comes(running: Running, project: Path) -> None:
    status, body = call(running.url + "api/state")
    state = json.loads(body)
    pair = next(e for e in state["entries"] if e["kind"] == "pair")
    status, body = call(running.url + "api/label", {"kind": "pair", "id": pair["id"],
                                                    "check": "", "choice": "left",
                                                    "rationale": "<b>names the window</b>"})
    assert status == 200, body
    (row,) = [json.loads(line) for line in (project / "labels.jsonl").read_text().splitlines()]
    assert row.pop("at").startswith("20")  # when it was given
    # The left response is response_a when shown ab, response_b when shown ba.
    assert row == {"item_id": pair["id"], "label": "a" if pair["shown"] == "ab" else "b",
                   "annotator": "ann", "shown": pair["shown"],
                   "rationale": "<b>names the window</b>"}
    left = pair["left"]
    assert left == (f"30 days from delivery ({pair['id'][-1]})." if pair["shown"] == "ab"
                    else "No idea.")
    assert json.loads(body)["labels"][f"pair:{pair['id']}"][""]["choice"] == "left"


def test_a_bad_label_is_refused_and_nothing_is_written(running: Running,
                                                       project: Path) -> None:
    api = running.url + "api/label"
    for body in ({"kind": "run", "id": "nope", "check": "*", "choice": "pass"},
                 {"kind": "run", "id": "t00-trial0", "check": "nope", "choice": "pass"},
                 {"kind": "run", "id": "t00-trial0", "check": "*", "choice": "left"},
                 {"kind": "pair", "id": "pair-0", "check": "", "choice": "pass"},
                 {"kind": "run", "id": "t00-trial0", "check": "*", "choice": "pass",
                  "rationale": "x" * 10_001}):
        status, _ = call(api, body)
        assert status in (400, 404), body
    request = urllib.request.Request(api, b"kind=run", {"Content-Type":
                                                        "application/x-www-form-urlencoded"})
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=10)
    with raised.value as error:
        assert error.code == 415
    assert (project / "labels.jsonl").read_bytes() == b""


def test_each_annotator_sees_only_their_own_labels(project: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    (project / "labels.jsonl").write_text(
        '{"run_id": "t00-trial0", "check": "*", "label": "pass", "annotator": "bo"}\n')
    store = LabelStore(project / "labels.jsonl")
    entries = load_entries([project / "runs.jsonl"], "ann", store, load_config())
    with Running("ann", entries, store) as server:
        state = json.loads(call(server.url + "api/state")[1])
        assert state["labels"] == {}
        compare = json.loads(call(server.url + "api/compare")[1])
        assert compare["annotators"] == ["bo"]


def test_the_comparison_api_gives_krippendorffs_alpha(project: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import krippendorff
    import numpy as np

    monkeypatch.chdir(project)
    ann = ["pass", "fail", "pass", "fail", "pass"]
    bo = ["pass", "fail", "fail", "fail", "pass"]
    (project / "labels.jsonl").write_text("".join(
        json.dumps({"run_id": f"t{n:02d}-trial0", "check": "*", "label": label,
                    "annotator": who}) + "\n"
        for who, labels in (("ann", ann), ("bo", bo)) for n, label in enumerate(labels)))
    store = LabelStore(project / "labels.jsonl")
    entries = load_entries([project / "runs.jsonl"], "ann", store, load_config())
    with Running("ann", entries, store) as server:
        compare = json.loads(call(server.url + "api/compare")[1])
    (overall,) = [f for f in compare["figures"] if f["group"] == "*"]
    code = {"pass": 0, "fail": 1}
    expected = krippendorff.alpha(reliability_data=np.array([[code[x] for x in ann],
                                                             [code[x] for x in bo]]),
                                  level_of_measurement="nominal")
    assert overall["alpha"] == pytest.approx(expected, abs=1e-4)
    assert [(d["id"], d["labels"]) for d in compare["disagreements"]] == [
        ("t02-trial0", {"ann": "pass", "bo": "fail"})]


def test_the_comparison_api_gives_each_annotators_progress_and_position_bias(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    write_lines(project / "items.ndjson", [pair(i) for i in range(12)])
    rows: list[JsonObject] = []
    for n in range(RUNS):  # bo labels every check of every run; ann both of two runs
        for check in ("no_tool_called", "*"):
            rows.append({"run_id": f"t{n:02d}-trial0", "check": check, "label": "pass",
                         "annotator": "bo"})
            if n < 2 or (n == 2 and check == "*"):  # run 2: one check of two, not labelled
                rows.append({"run_id": f"t{n:02d}-trial0", "check": check, "label": "fail",
                             "annotator": "ann"})
    for i in range(12):
        shown = "ab" if i % 2 else "ba"
        # ann picks the side shown first on all but pair 3; bo picks response a (the
        # better one) whatever its side, and is unsure of the last pair.
        first = shown[0] if i != 3 else shown[1]
        rows.append({"item_id": f"pair-{i}", "label": first, "annotator": "ann",
                     "shown": shown})
        rows.append({"item_id": f"pair-{i}", "label": "a" if i < 11 else "unsure",
                     "annotator": "bo", "shown": shown})
    # A label no pair takes, from a hand-edited file: no pick, and no error page.
    rows.append({"item_id": "pair-0", "label": "pass", "annotator": "dee", "shown": "ab"})
    write_lines(project / "labels.jsonl", rows)
    store = LabelStore(project / "labels.jsonl")
    entries = load_entries([project / "runs.jsonl", project / "items.ndjson"], "cy", store,
                           load_config())
    with Running("cy", entries, store) as server:
        status, body = call(server.url + "api/compare")
    assert status == 200, body
    compare = json.loads(body)
    total = RUNS + 12
    # cy, this session's annotator, first though it has labelled nothing yet; bo's
    # "unsure" is an answer given, as on the page's own count.
    assert compare["progress"] == [
        {"annotator": "cy", "labelled": 0, "total": total},
        {"annotator": "ann", "labelled": 2 + 12, "total": total},
        {"annotator": "bo", "labelled": total, "total": total},
        {"annotator": "dee", "labelled": 1, "total": total}]
    positions = {p["annotator"]: p for p in compare["positions"]}
    assert list(positions) == ["ann", "bo"]
    ann, bo = positions["ann"], positions["bo"]
    assert (ann["first"], ann["second"], ann["shown_ab"], ann["shown_ba"]) == (11, 1, 6, 6)
    assert ann["p_value"] == pytest.approx(binomtest(11, 12, 0.5).pvalue, rel=1e-9)
    assert ann["status"] == "FOUND"
    # Must say no: bo chose by content, and the sides were drawn both ways.
    assert (bo["first"], bo["second"]) == (5, 6)
    assert bo["p_value"] == pytest.approx(binomtest(5, 11, 0.5).pvalue) == 1.0
    assert bo["status"] == "clean"


def post_raw(url: str, body: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read()


def test_a_lone_surrogate_or_a_deep_body_is_a_400_and_the_page_goes_on(
        running: Running, project: Path) -> None:
    label = running.url + "api/label"
    # What JSON.stringify sends for half a character: refused, never kept in memory.
    status, body = post_raw(label, b'{"kind": "run", "id": "t00-trial0", "check": "*", '
                                   b'"choice": "fail", "rationale": "x\\ud800y"}')
    assert status == 400 and b"surrogate" in body, body
    status, body = post_raw(label, b"[" * 30_000 + b"]" * 30_000)
    assert status == 400 and b"expected a JSON object" in body, body
    assert call(running.url + "api/state")[0] == 200
    assert call(label, {"kind": "run", "id": "t00-trial0", "check": "*",
                        "choice": "fail"})[0] == 200
    rows = [json.loads(line) for line in (project / "labels.jsonl").read_text().splitlines()]
    assert [r["label"] for r in rows] == ["fail"]


def test_a_slow_comparison_does_not_hold_up_a_label(
        running: Running, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from metaeval.label.agree import comparison as real

    release = threading.Event()

    def slow(*args: object) -> object:
        release.wait(30)  # a large team's figures, still being computed
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr("metaeval.label.app.comparison", slow)
    answers: list[int] = []
    compare = threading.Thread(target=lambda: answers.append(
        call(running.url + "api/compare")[0]))
    compare.start()
    try:
        # On the event loop, the comparison would hold this post until it timed out.
        status, _ = call(running.url + "api/label", {"kind": "run", "id": "t00-trial0",
                                                     "check": "*", "choice": "pass"})
        assert status == 200
        assert not answers  # the comparison was still running meanwhile
    finally:
        release.set()
        compare.join(30)
    assert answers == [200]


def test_the_browser_is_opened_on_a_one_time_path_not_the_token(running: Running) -> None:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    assert running.token not in running.launch_url
    with pytest.raises(urllib.error.HTTPError) as first:
        opener.open(running.launch_url, timeout=10)
    with first.value as answer:
        assert answer.code == 303
        assert answer.headers["Location"] == f"/{running.token}/"
    # Spent: whoever reads the browser's command line later gets nothing.
    assert call(running.launch_url)[0] == 403


def test_a_connection_that_never_sends_a_request_is_closed(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    import metaeval.label.server

    monkeypatch.setattr(metaeval.label.server, "FIRST_REQUEST_SECONDS", 0.5)
    monkeypatch.chdir(project)
    with LabelStore(project / "labels.jsonl") as store:
        entries = load_entries([project / "runs.jsonl"], "ann", store, load_config())
        with Running("ann", entries, store) as server:
            port = int(server.url.split(":")[2].split("/")[0])
            idle = [socket.create_connection(("127.0.0.1", port), timeout=10)
                    for _ in range(20)]
            try:
                idle[0].sendall(b"GET / HTTP/1.1\r\n")  # half a request is no request
                assert all(s.recv(1) == b"" for s in idle)  # closed by the server
            finally:
                for s in idle:
                    s.close()
            assert call(server.url + "api/state")[0] == 200
