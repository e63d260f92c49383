"""Labels people can trust, in headless Chromium against ``metaeval label`` processes:
a reopened page never changes an earlier label without the explicit action and the
file keeps every change; a rationale typed first is kept; the blind page holds no
verdict in its DOM; two annotators on two files see each other's agreement; a
stale tab after a restart says what happened.

Marked ``browser``: left out of the default run, run by ``.ci/run``.
"""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.browser import Browser
from tests.label.conftest import RUNS
from tests.label.serving import start_label
from tests.label.test_label_browser import press

pytestmark = pytest.mark.browser


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
    process.communicate(timeout=10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(project: Path, *extra: str, annotator: str = "ann", labels: str = "labels.jsonl",
          what: tuple[str, ...] = ("runs.jsonl",)) -> tuple[subprocess.Popen[str], str]:
    return start_label(*what, "--labels", labels, "--annotator", annotator, *extra,
                       cwd=project)


def current(browser: Browser) -> Any:
    return browser.evaluate("({id: state.shown[state.index].id, "
                            "checks: state.shown[state.index].checks})")


def label_entry(browser: Browser, key: str, saved: int) -> int:
    entry = current(browser)
    for _ in entry["checks"]:
        saved += 1
        press(browser, key)
        browser.wait_for(f"document.body.dataset.saved === '{saved}'")
    return saved


def test_a_reopened_page_changes_no_label_without_asking_and_keeps_every_change(
        binary: str, project: Path) -> None:
    labels = project / "labels.jsonl"
    process, url = serve(project)
    try:
        with Browser(binary, url) as browser:
            browser.wait_for("document.body.dataset.ready === '1'")
            first = current(browser)
            label_entry(browser, "p", 0)
            second = current(browser)
            # A rationale typed before the label is kept with it.
            press(browser, "r")
            browser.evaluate("document.activeElement.value = 'typed first';"
                             "document.activeElement.dispatchEvent(new Event('input'))")
            browser.send("Input.dispatchKeyEvent", type="keyDown", key="Enter",
                         code="Enter", windowsVirtualKeyCode=13)
            browser.send("Input.dispatchKeyEvent", type="keyUp", key="Enter")
            label_entry(browser, "f", len(first["checks"]))
    finally:
        stop(process)
    given = {(r["run_id"], r["check"]): r for r in rows(labels)}
    assert given[(second["id"], "*")]["rationale"] == "typed first"
    before = len(rows(labels))

    process, url = serve(project)  # reopened
    try:
        with Browser(binary, url) as browser:
            browser.wait_for("document.body.dataset.ready === '1'")
            # It opens at the first entry not labelled, not at the top of the list.
            opened = current(browser)
            assert opened["id"] not in (first["id"], second["id"])
            assert browser.evaluate("state.index") == 2
            # Back on the first entry, the keys of a careless run of typing: no change.
            press(browser, "k")
            press(browser, "k")
            browser.wait_for(f"state.shown[state.index].id === '{first['id']}'")
            press(browser, "f")
            browser.wait_for("document.body.dataset.armed === '1'")
            assert "again to change it" in browser.evaluate(
                "document.getElementById('status').textContent")
            for kind in ("keyDown", "keyUp"):
                browser.send("Input.dispatchKeyEvent", type=kind, key="Escape", code="Escape",
                             windowsVirtualKeyCode=27)
            press(browser, "p")  # the label it has: nothing to write
            assert len(rows(labels)) == before
            # The explicit action: the same key twice.
            press(browser, "k")
            browser.wait_for(f"state.shown[state.index].id === '{first['id']}'")
            press(browser, "f")
            browser.wait_for("document.body.dataset.armed === '1'")
            press(browser, "f")
            browser.wait_for("document.body.dataset.saved === '1'")
            press(browser, "z")  # and undone
            browser.wait_for("document.body.dataset.saved === '2'")
            assert browser.evaluate("document.getElementById('status').textContent") == (
                f"undone: {first['id']} is pass again")
    finally:
        stop(process)
    history = [(r["run_id"], r["check"], r["label"], r.get("was")) for r in rows(labels)]
    assert history[before:] == [(first["id"], "*", "fail", "pass"),
                                (first["id"], "*", "pass", "fail")]
    assert history[:before] == [(r[0], r[1], r[2], None) for r in history[:before]]


def test_the_blind_page_holds_no_verdict_and_adjudication_shows_them(
        binary: str, project: Path) -> None:
    for extra, blind in (((), True), (("--show-graders",), False)):
        process, url = serve(project, *extra, labels=f"labels-{blind}.jsonl")
        try:
            with Browser(binary, url) as browser:
                browser.wait_for("document.body.dataset.ready === '1'")
                for _ in range(RUNS):  # every entry shown once
                    dom = browser.evaluate("document.documentElement.outerHTML")
                    state = browser.evaluate("JSON.stringify(state.entries)")
                    if blind:
                        assert "grader found" not in dom
                        assert "not allowed" not in dom and "found pass" not in dom
                        assert '"graded"' not in state and '"overall"' not in state
                    press(browser, "n")
                mode = browser.evaluate("document.getElementById('mode').textContent")
                assert mode.startswith("blind" if blind else "adjudication")
                if not blind:
                    assert "grader found" in browser.evaluate(
                        "document.documentElement.outerHTML")
        finally:
            stop(process)


def test_two_annotators_on_two_files_see_each_others_agreement(
        binary: str, project: Path) -> None:
    (project / "bo.jsonl").write_text("")  # bo has not labelled yet
    ann, url_ann = serve(project, "--compare-with", "bo.jsonl", labels="ann.jsonl")
    try:
        bo, url_bo = serve(project, "--compare-with", "ann.jsonl", annotator="bo",
                           labels="bo.jsonl")
        try:
            for url, key in ((url_ann, "p"), (url_bo, "f")):
                with Browser(binary, url) as browser:
                    browser.wait_for("document.body.dataset.ready === '1'")
                    label_entry(browser, key, 0)
                    browser.evaluate("document.getElementById('compare').click()")
                    browser.wait_for("!document.getElementById('comparison').hidden")
                    heading = browser.evaluate(
                        "document.querySelector('#comparison h2').textContent")
                    progress = browser.evaluate(
                        "[...document.querySelectorAll('#comparison tr.progress')].map("
                        "(r) => r.cells[0].textContent)")
            # bo's page, second: both annotators, read from both files while both serve.
            assert heading == "Annotators: ann, bo"
            assert progress == ["bo", "ann"]
        finally:
            stop(bo)
    finally:
        stop(ann)


def test_a_stale_tab_after_a_restart_says_what_happened(binary: str, project: Path) -> None:
    port = str(free_port())
    process, url = serve(project, "--port", port)
    try:
        with Browser(binary, url) as browser:
            browser.wait_for("document.body.dataset.ready === '1'")
            stop(process)
            process, _ = serve(project, "--port", port)  # a new token on the same port
            press(browser, "p")
            browser.wait_for("document.getElementById('status').className === 'error'")
            status = browser.evaluate("document.getElementById('status').textContent")
            assert status.startswith("not saved: this page's address is no longer valid: the "
                                     "server was restarted or stopped. Open the new address")
            assert "JSON" not in status
    finally:
        stop(process)
