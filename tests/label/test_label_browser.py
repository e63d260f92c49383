"""The labelling page in headless Chromium, served by ``metaeval label`` in a process
of its own: five runs and five pairs labelled by keyboard, the server killed and
started again with every label in the file and on the page, meta-eval and
judge-audit reading that file; pointwise items the same way, with the comparison
view's progress per annotator; and hostile runs whose HTML and script never run.

Marked ``browser``: left out of the default run, run by ``.ci/run``.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metaeval.contract import JsonObject
from tests.audit.airline import airline_run
from tests.browser import Browser
from tests.label.conftest import PAIRS, RUNS, write_lines
from tests.label.serving import METAEVAL, start_label

pytestmark = pytest.mark.browser


def press(browser: Browser, key: str) -> None:
    for kind in ("keyDown", "keyUp"):
        browser.send("Input.dispatchKeyEvent", type=kind, key=key,
                     **({"text": key} if kind == "keyDown" else {}))


def label_server(project: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process, url = start_label("runs.jsonl", "items.ndjson", "--labels", "labels.jsonl",
                               "--annotator", "ann", *extra, cwd=project)
    try:
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=10)


def test_five_runs_and_five_pairs_by_keyboard_survive_a_killed_server(
        binary: str, project: Path) -> None:
    expected: dict[tuple[str, str], str] = {}
    server = label_server(project)
    process, url = next(server)
    with Browser(binary, url) as browser:
        browser.wait_for("document.body.dataset.ready === '1'")
        shown: Any = browser.evaluate(
            "state.shown.map((e) => ({kind: e.kind, id: e.id, checks: e.checks, "
            "shown: e.shown}))")
        assert [e["kind"] for e in shown].count("run") == RUNS
        assert [e["kind"] for e in shown].count("pair") == PAIRS
        saved = 0
        for entry in shown:
            if entry["kind"] == "run":
                bad = int(entry["id"][1:3]) % 2 == 0  # even tasks call the forbidden tool
                for check in entry["checks"]:
                    press(browser, "f" if bad else "p")
                    expected[(entry["id"], check)] = "fail" if bad else "pass"
            else:
                # "1": the left one is better; the file names the item's response.
                press(browser, "1")
                expected[(entry["id"], "")] = "a" if entry["shown"] == "ab" else "b"
            saved += len(entry["checks"])
            browser.wait_for(f"document.body.dataset.saved === '{saved}'")
        assert browser.evaluate("document.getElementById('progress').textContent") == (
            f"{RUNS + PAIRS} / {RUNS + PAIRS} labelled")
        # "1" on every pair is the side shown first every time: five of five, which
        # an exact test cannot call beyond chance (p = 1/16), so never FOUND.
        browser.evaluate("document.getElementById('compare').click()")
        browser.wait_for("!document.getElementById('comparison').hidden")
        (position,) = browser.evaluate(
            "[...document.querySelectorAll('#comparison tr.position')].map("
            "(r) => [...r.cells].map((c) => c.textContent))")
        orders = {e["shown"] for e in shown if e["kind"] == "pair"}
        assert position[:3] == ["ann", "clean" if len(orders) == 2 else "not run",
                                f"{PAIRS} of {PAIRS}"]
    process.send_signal(signal.SIGKILL)  # no clean-up, no compaction: nothing may be lost
    process.wait(timeout=10)
    next(server, None)
    rows = [json.loads(line) for line in (project / "labels.jsonl").read_text().splitlines()]
    got = {(r.get("run_id", r.get("item_id")), r.get("check", "")): r["label"] for r in rows}
    assert got == {k: v for k, v in expected.items()}
    assert {(r["annotator"], r.get("shown")) for r in rows if "item_id" in r} <= {
        ("ann", "ab"), ("ann", "ba")}

    server = label_server(project)
    process, url = next(server)
    with Browser(binary, url) as browser:
        browser.wait_for("document.body.dataset.ready === '1'")
        assert browser.evaluate("document.getElementById('progress').textContent") == (
            f"{RUNS + PAIRS} / {RUNS + PAIRS} labelled")
        # The first entry's label is shown as given, and the page asks for nothing.
        assert browser.evaluate("document.querySelectorAll('#view .choice .on').length") >= 1
    next(server, None)

    meta_eval = subprocess.run([METAEVAL, "meta-eval", "runs.jsonl", "--labels",
                                "labels.jsonl", "--format", "json"], cwd=project,
                               capture_output=True, text=True, timeout=300)
    assert meta_eval.returncode in (0, 1), meta_eval.stderr
    check = next(c for c in json.loads(meta_eval.stdout)["checks"]
                 if c["name"] == "no_tool_called")
    assert check["n"] == RUNS and check["kappa"] == 1.0
    audit = subprocess.run([METAEVAL, "judge-audit", "--judge", "steady", "--items",
                            "items.ndjson", "--labels", "labels.jsonl", "--no-cache",
                            "--probes", "files", "--format", "json"], cwd=project,
                           capture_output=True, text=True, timeout=300)
    assert audit.returncode in (0, 1), audit.stderr
    (pairwise,) = json.loads(audit.stdout)["annotators"]
    assert pairwise["agreement"]["annotators"] == [{"annotator": "ann", "items": PAIRS}]


SCRIPT = "<script>window.__pwned = 1; document.title = 'pwned'</script>"
IMAGE = "<img src=x onerror=\"window.__pwned = 2; document.title = 'pwned'\">"
LINK = "<a href=\"javascript:window.__pwned = 3\" id=\"evil\">click me</a>"
HOSTILE = f"{SCRIPT} {IMAGE} {LINK}"


def hostile_run(task: int) -> JsonObject:
    run: Any = airline_run(task, 0, bad=True, checks=True)
    run["category"] = f"near_miss/{IMAGE}"
    run["task"]["instruction"] = HOSTILE
    run["task"]["criteria"] = {"note": HOSTILE}
    run["trajectory"][0]["content"] = HOSTILE
    run["trajectory"][1]["args"] = {"reservation_id": IMAGE}
    run["trajectory"][2]["content"] = {"error": SCRIPT}
    run["trajectory"][-1]["content"] = f"Done. {LINK}"
    run["initial_state"] = {"notes": []}
    run["final_state"] = {"notes": [IMAGE]}
    return dict(run)


PWNED = ("window.__pwned === undefined && document.title === 'metaeval label' && "
         "document.querySelectorAll('main img, main script, main a, #comparison img, "
         "#comparison a, header img').length === 0")


def test_html_and_script_in_runs_items_and_labels_never_run(binary: str, project: Path) -> None:
    write_lines(project / "runs.jsonl", [hostile_run(t) for t in range(2)])
    write_lines(project / "items.ndjson", [
        {"id": "evil-pair", "prompt": HOSTILE, "response_a": IMAGE, "response_b": LINK,
         "reference": SCRIPT, "label": None, "category": SCRIPT}])
    (project / "labels.jsonl").write_text(json.dumps(
        {"run_id": "t00-trial0", "check": "*", "label": "pass", "annotator": IMAGE,
         "rationale": SCRIPT}) + "\n")
    server = label_server(project)
    _, url = next(server)
    try:
        with Browser(binary, url) as browser:
            browser.wait_for("document.body.dataset.ready === '1'")
            for _ in range(3):
                assert browser.evaluate(PWNED)
                # The hostile text is there, as text.
                assert "window.__pwned = 1" in browser.text()
                press(browser, "n")
            assert "evil-pair" in browser.text() and browser.evaluate(PWNED)
            browser.evaluate("document.getElementById('compare').click()")
            browser.wait_for("!document.getElementById('comparison').hidden")
            assert IMAGE in browser.evaluate(
                "document.getElementById('comparison').textContent")
            assert browser.evaluate(PWNED)
            # A check that could fail: the same markup given as HTML does run here.
            browser.evaluate("document.getElementById('view').insertAdjacentHTML("
                             f"'beforeend', {json.dumps(IMAGE)})")
            browser.wait_for("window.__pwned === 2 || !!document.querySelector('main img')")
            assert not browser.evaluate(PWNED)
    finally:
        next(server, None)


REFERENCE = "Returns are accepted within 30 days of delivery."
POINTS = 5


def point(i: int) -> JsonObject:
    """Even items answer from the reference (pass), odd ones do not (fail)."""
    return {"id": f"point-{i}", "prompt": f"How long is the return window? ({i})",
            "reference": REFERENCE, "label": None, "category": "returns",
            "response": f"{REFERENCE} Keep the receipt." if i % 2 == 0 else "No idea."}


def test_pointwise_items_by_keyboard_are_in_the_file_and_judge_audit_reads_them(
        binary: str, project: Path) -> None:
    write_lines(project / "items.ndjson", [point(i) for i in range(POINTS)])
    # Another annotator's two labels, from their own session, already in the file.
    write_lines(project / "labels.jsonl", [
        {"item_id": f"point-{i}", "label": "pass" if i % 2 == 0 else "fail",
         "annotator": "bo"} for i in range(2)])
    process, url = start_label("items.ndjson", "--labels", "labels.jsonl", "--annotator",
                               "ann", cwd=project)
    try:
        with Browser(binary, url) as browser:
            browser.wait_for("document.body.dataset.ready === '1'")
            shown: Any = browser.evaluate("state.shown.map((e) => [e.kind, e.id])")
            assert sorted(shown) == [["point", f"point-{i}"] for i in range(POINTS)]
            for saved, (_, item) in enumerate(shown, start=1):
                good = int(item.rsplit("-", 1)[1]) % 2 == 0
                press(browser, "p" if good else "f")
                browser.wait_for(f"document.body.dataset.saved === '{saved}'")
            assert browser.evaluate("document.getElementById('progress').textContent") == (
                f"{POINTS} / {POINTS} labelled")
            browser.evaluate("document.getElementById('compare').click()")
            browser.wait_for("!document.getElementById('comparison').hidden")
            progress = browser.evaluate(
                "[...document.querySelectorAll('#comparison tr.progress')].map("
                "(r) => [...r.cells].map((c) => c.textContent))")
            assert progress == [["ann", str(POINTS), str(POINTS)], ["bo", "2", str(POINTS)]]
    finally:
        process.send_signal(signal.SIGKILL)  # no clean-up: every label already written
        process.communicate(timeout=10)
    rows = [json.loads(line) for line in (project / "labels.jsonl").read_text().splitlines()]
    assert sorted(({k: v for k, v in r.items() if k != "at"} for r in rows
                   if r["annotator"] == "ann"), key=lambda r: r["item_id"]) == [
        {"item_id": f"point-{i}", "label": "pass" if i % 2 == 0 else "fail",
         "annotator": "ann"} for i in range(POINTS)]  # no "shown": one response, no order

    audit = subprocess.run([METAEVAL, "judge-audit", "--judge", "steady", "--items",
                            "items.ndjson", "--labels", "labels.jsonl", "--no-cache",
                            "--probes", "files", "--format", "json"], cwd=project,
                           capture_output=True, text=True, timeout=300)
    assert audit.returncode in (0, 1), audit.stderr
    document = json.loads(audit.stdout)
    (pointwise,) = document["annotators"]
    assert pointwise["kind"] == "pointwise"
    assert pointwise["agreement"]["annotators"] == [{"annotator": "bo", "items": 2},
                                                    {"annotator": "ann", "items": POINTS}]
    # The labels are the items' labels now: the steady judge read against them.
    point_agreement = document["agreement"]["pointwise"]
    assert point_agreement["n"] == POINTS
    assert (point_agreement["tp"], point_agreement["tn"]) == (3, 2)
