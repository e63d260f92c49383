"""write_atomic: the old file or the new one, never half of one; a failure names the path.

Tests run as root, which ignores permission bits: an unwritable place is a path
whose parent is a file, a directory of sysfs (read-only even to root), or a
system call made to fail with the error a full disk gives.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from metaeval.errors import OutputError
from metaeval.files import write_atomic


def test_it_writes_and_replaces_creating_the_directory(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "report.json"
    write_atomic(target, "one\n", follow_links=True)
    write_atomic(target, "two\n", follow_links=True)
    assert target.read_text(encoding="utf-8") == "two\n"
    assert os.listdir(target.parent) == ["report.json"]  # no temporary file left


def test_a_new_file_gets_the_mode_any_new_file_gets(tmp_path: Path) -> None:
    before = os.umask(0o022)
    try:
        write_atomic(tmp_path / "findings.json", "{}\n", follow_links=True)
    finally:
        os.umask(before)
    # Not mkstemp's 0600: a findings file is committed and read by others.
    assert (tmp_path / "findings.json").stat().st_mode & 0o777 == 0o644


def test_an_existing_file_keeps_its_mode_and_a_link_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "shared" / "pyproject.toml"
    real.parent.mkdir()
    real.write_text("[project]\n", encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "pyproject.toml"
    link.symlink_to(real)
    write_atomic(link, "[project]\n[tool.metaeval]\n", follow_links=True)
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8") == "[project]\n[tool.metaeval]\n"
    assert real.stat().st_mode & 0o777 == 0o640


def test_a_full_disk_keeps_the_old_file_and_removes_the_temporary_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "findings.json"
    target.write_text("old\n", encoding="utf-8")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("metaeval.files.os.fsync", full)
    with pytest.raises(OutputError) as caught:
        write_atomic(target, "new\n", follow_links=True)
    assert str(caught.value) == f"{target}: cannot write: No space left on device (ENOSPC)"
    assert target.read_text(encoding="utf-8") == "old\n"
    assert os.listdir(tmp_path) == ["findings.json"]


def test_a_parent_that_is_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "reports").write_text("a file, not a directory", encoding="utf-8")
    target = tmp_path / "reports" / "r.json"
    with pytest.raises(OutputError) as caught:
        write_atomic(target, "{}", follow_links=True)
    assert str(caught.value) == (f"{target}: cannot write: {tmp_path / 'reports'} is not a "
                                 "directory (ENOTDIR)")


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="no sysfs")
def test_a_read_only_directory_is_an_output_error_even_for_root() -> None:
    with pytest.raises(OutputError, match=r"^/sys/kernel/metaeval\.json: cannot write: "):
        write_atomic(Path("/sys/kernel/metaeval.json"), "{}", follow_links=True)


def test_a_path_metaeval_chose_is_never_written_through_a_link(tmp_path: Path) -> None:
    # A branch links .metaeval/mutation-report.json to a source file.
    source = tmp_path / "shop" / "pricing.py"
    source.parent.mkdir()
    source.write_text("PRICE = 1\n", encoding="utf-8")
    report = tmp_path / ".metaeval" / "mutation-report.json"
    report.parent.mkdir()
    report.symlink_to(source)
    with pytest.raises(OutputError) as caught:
        write_atomic(report, "{}\n", follow_links=False)
    assert str(caught.value) == (f"{report}: cannot write: {report} is a symbolic link; "
                                 "metaeval writes no file of its own through one (ELOOP)")
    assert source.read_text(encoding="utf-8") == "PRICE = 1\n" and report.is_symlink()


def test_a_dangling_link_or_a_linked_directory_is_refused_too(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calibration.json").symlink_to(outside / "made.json")  # dangling
    with pytest.raises(OutputError, match="is a symbolic link"):
        write_atomic(repo / "calibration.json", "{}\n", follow_links=False)
    outside.mkdir()
    (repo / ".metaeval").symlink_to(outside)
    with pytest.raises(OutputError, match=r"\.metaeval is a symbolic link"):
        write_atomic(repo / ".metaeval" / "mutate-cache.json", "{}\n", follow_links=False)
    assert os.listdir(outside) == []
    # The "no": a plain path metaeval chose is written as ever.
    write_atomic(repo / "own" / "mutate-cache.json", "{}\n", follow_links=False)
    assert (repo / "own" / "mutate-cache.json").read_text(encoding="utf-8") == "{}\n"


def test_a_device_or_a_fifo_is_never_replaced(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "report.json")
    for follow in (True, False):
        with pytest.raises(OutputError) as caught:
            write_atomic(tmp_path / "report.json", "{}\n", follow_links=follow)
        assert str(caught.value) == (f"{tmp_path / 'report.json'}: cannot write: it is a "
                                     "fifo; expected a regular file or none, refusing to "
                                     "replace it")
    assert os.listdir(tmp_path) == ["report.json"]  # still the fifo, no temporary file
    # A link the user named, to a device: refused after following it.
    (tmp_path / "null.json").symlink_to("/dev/null")
    with pytest.raises(OutputError, match="it is a character device"):
        write_atomic(tmp_path / "null.json", "{}\n", follow_links=True)


# The child writes a large file and stops inside write_atomic, after the temporary
# file is made and before the rename: there it is killed, so no clean-up runs.
_KILLED_WRITER = """
import os, sys, time
from pathlib import Path
import metaeval.files as files
def stop(fd):
    Path(sys.argv[2]).write_text("ready")
    time.sleep(120)
files.os.fsync = stop
files.write_atomic(Path(sys.argv[1]), "x" * 23_000_000, follow_links=False)
"""


def test_a_writer_killed_mid_write_leaves_a_temporary_file_the_next_write_removes(
        tmp_path: Path) -> None:
    target = tmp_path / "meta-eval.html"
    ready = tmp_path / "ready"
    child = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(target), str(ready)])
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        assert ready.exists(), "the writer never reached its write"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    (stale,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert stale.name.startswith(f".meta-eval.html.{child.pid}-")
    assert stale.stat().st_size == 23_000_000
    # The "no": a live writer's temporary file, and a name metaeval did not make, stay.
    live = tmp_path / f".meta-eval.html.{os.getpid()}-0123abcd.tmp"
    live.write_text("mine, still writing", encoding="utf-8")
    theirs = tmp_path / ".meta-eval.html.notes.tmp"
    theirs.write_text("the user's", encoding="utf-8")
    write_atomic(target, "<html>\n", follow_links=False)
    assert target.read_text(encoding="utf-8") == "<html>\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [target.name, ready.name, live.name, theirs.name])
