"""Every label the page was told was saved is in the file, and the file loads: after
a full disk, with two tabs posting at once, and with a second server refused."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from metaeval.config import load_config
from metaeval.label.server import Running
from metaeval.label.session import load_entries
from metaeval.label.store import LabelStore, read_rows
from metaeval.loaders.labels_files import read_labels
from tests.label.serving import METAEVAL, start_label
from tests.label.test_app import call

FULL_DISK = textwrap.dedent("""
    import resource, signal, sys
    from pathlib import Path
    from metaeval.errors import OutputError
    from metaeval.label.store import LabelStore

    path = Path(sys.argv[1])
    # A file-size limit stands in for a full disk: writes past it come back short,
    # then fail (EFBIG), as a full disk's do (ENOSPC).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    with LabelStore(path) as store:
        store.put({"run_id": "r0", "check": "*", "label": "pass", "annotator": "ann"})
        resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + 100, hard))
        for n in (1, 2):
            try:
                store.put({"run_id": f"r{n}", "check": "*", "label": "fail",
                           "annotator": "ann", "rationale": "x" * 5000})
            except OutputError as e:
                print("refused:", e)
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # space is back
        for n in (3, 4, 5):
            store.put({"run_id": f"r{n}", "check": "*", "label": "pass", "annotator": "ann"})
""")


def test_a_write_that_fails_on_a_full_disk_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    refused = done.stdout.splitlines()
    assert len(refused) == 2 and all(line.startswith(f"refused: {path}: cannot write: ")
                                     for line in refused)
    # The labels acknowledged before and after, each on a line of its own; the file loads.
    annotations, errors = read_labels([path])
    assert not errors
    assert [a.run_id for a in annotations] == ["r0", "r3", "r4", "r5"]
    assert path.read_text().count("\n") == 4
    with LabelStore(path) as store:
        assert store.torn is None and len(store.rows()) == 4


@pytest.fixture
def project_store(project: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(project)
    with LabelStore(project / "labels.jsonl") as store:
        yield project, store


def test_two_tabs_posting_500_labels_each_lose_none(project_store: tuple[Path, LabelStore]
                                                   ) -> None:
    project, store = project_store
    entries = load_entries([project / "runs.jsonl", project / "items.ndjson"], "ann", store,
                           load_config())
    targets = [(e.kind, e.id, check) for e in entries for check in e.checks]
    choices = {"run": ("pass", "fail", "unsure"), "pair": ("left", "right", "tie")}
    acknowledged: dict[str, tuple[str, str, str]] = {}
    failures: list[str] = []

    def tab(n: int, url: str) -> None:
        for i in range(500):
            kind, entry_id, check = targets[(i * 7 + n * 3) % len(targets)]
            # Each post unique by its rationale, so each must be a line of its own.
            rationale = f"tab{n}-{i}"
            status, body = call(url + "api/label", {
                "kind": kind, "id": entry_id, "check": check,
                "choice": choices[kind][(i + n) % 3], "rationale": rationale})
            if status == 200:
                acknowledged[rationale] = (kind, entry_id, check)
            else:
                failures.append(f"{status} {body!r}")

    with Running("ann", entries, store) as server:
        tabs = [threading.Thread(target=tab, args=(n, server.url)) for n in (0, 1)]
        for t in tabs:
            t.start()
        for t in tabs:
            t.join()
    assert not failures and len(acknowledged) == 1000
    read = read_rows(project / "labels.jsonl")  # the whole history checks out
    written = [str(row.value.get("rationale")) for row in read.history]
    assert sorted(written) == sorted(acknowledged)  # every acknowledged label, once
    # What counts is each key's last line, as the page had it.
    last: dict[tuple[str, str], str] = {}
    for row in read.history:
        key = row.value.get("run_id") or row.value["item_id"]
        last[(str(key), str(row.value.get("check", "")))] = str(row.value["rationale"])
    assert {str(r.value["rationale"]) for r in read.current} == set(last.values())
    assert len(read.current) == len(targets)


def test_a_second_server_on_one_file_is_refused_naming_the_first(project: Path) -> None:
    args = ["runs.jsonl", "--labels", "labels.jsonl", "--annotator"]
    first, url = start_label(*args, "ann", cwd=project)
    try:
        port = url.split(":")[2].split("/")[0]
        second = subprocess.run([METAEVAL, "label", *args, "bo", "--no-browser"],
                                cwd=project, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert second.stdout == ""
        assert (f"labels.jsonl: another metaeval label is serving this labels file (pid "
                f"{first.pid}, port {port}: ") in second.stderr
        assert "Traceback" not in second.stderr
        status, _ = call(url + "api/label", {"kind": "run", "id": "t00-trial0", "check": "*",
                                             "choice": "fail"})
        assert status == 200  # the first goes on serving
    finally:
        first.terminate()
        first.communicate(timeout=30)
    rows = [json.loads(line) for line in (project / "labels.jsonl").read_text().splitlines()]
    assert [(r["run_id"], r["annotator"]) for r in rows] == [("t00-trial0", "ann")]


def test_a_port_in_use_is_a_clear_error(project: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run([METAEVAL, "label", "runs.jsonl", "--labels", "labels.jsonl",
                               "--annotator", "ann", "--no-browser", "--port", str(port)],
                              cwd=project, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert f"error: --port {port}: cannot listen on 127.0.0.1:{port} (" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (project / "labels.jsonl.lock").exists()  # the lock let go on the way out
