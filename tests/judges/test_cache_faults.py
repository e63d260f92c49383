"""A judge reply cache that cannot be used never costs a reply.

Corrupt, locked, read-only (file or folder), or in a folder that cannot be made:
one warning line on stderr saying what happened, then the audit goes on without
the cache, or reading it without storing, and every reply is still the judge's.

File modes do not bind root, so the read-only cases run in a child process that
has dropped root's capabilities to override them when the tests run as root (as
CI does).
"""

from __future__ import annotations

import ctypes
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.judges.adapters import PromptedJudge, callable_backend
from metaeval.judges.base import Value
from metaeval.judges.cache import CachedJudge, ReplyCache

ITEMS = Path(__file__).resolve().parents[2] / "meta_sets" / "judge" / "position.ndjson"


class Counting:
    """A judge backend that answers 4 and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        return "4"


def _judge(backend: Counting) -> PromptedJudge:
    return PromptedJudge("counting", callable_backend(backend))


def _ask(cache: ReplyCache, questions: int = 3) -> tuple[list[Value | None], Counting]:
    backend = Counting()
    judge = CachedJudge(_judge(backend), cache)
    replies = [judge.score("q", f"answer {i}") for i in range(questions)]
    assert not any(r.call.failed for r in replies)
    return [r.value for r in replies], backend


def test_a_corrupt_cache_warns_once_and_every_reply_is_still_scored(tmp_path: Path) -> None:
    path = tmp_path / "judge-cache.sqlite"
    garbage = b"not a database, just bytes \x00\xff" * 200
    path.write_bytes(garbage)
    warnings: list[str] = []
    cache = ReplyCache(path, warn=warnings.append)
    values, backend = _ask(cache)
    cache.close()
    assert values == [4.0, 4.0, 4.0] and backend.calls == 3
    assert len(warnings) == 1
    assert str(path) in warnings[0] and "not a database" in warnings[0]
    assert "without the cache" in warnings[0] and "\n" not in warnings[0]
    assert path.read_bytes() == garbage  # the user's file is left as it was


def test_a_cache_locked_by_another_connection_warns_and_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "judge-cache.sqlite"
    ReplyCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        warnings: list[str] = []
        cache = ReplyCache(path, busy_timeout_s=0.05, warn=warnings.append)
        values, backend = _ask(cache)
        cache.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert values == [4.0, 4.0, 4.0] and backend.calls == 3
    assert len(warnings) == 1 and "locked" in warnings[0]


def test_a_lock_taken_during_the_run_costs_no_reply(tmp_path: Path) -> None:
    path = tmp_path / "judge-cache.sqlite"
    warnings: list[str] = []
    cache = ReplyCache(path, busy_timeout_s=0.05, warn=warnings.append)
    first, _ = _ask(cache, 1)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        values, backend = _ask(cache, 4)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    cache.close()
    assert first == [4.0] and values == [4.0] * 4 and backend.calls == 4
    assert len(warnings) == 1 and "locked" in warnings[0]


def test_a_cache_whose_folder_cannot_be_made_warns_and_goes_on(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache's folder should be")
    warnings: list[str] = []
    cache = ReplyCache(blocker / ".metaeval" / "judge-cache.sqlite", warn=warnings.append)
    values, backend = _ask(cache)
    cache.close()
    assert values == [4.0] * 3 and backend.calls == 3
    assert len(warnings) == 1 and "without the cache" in warnings[0]


def test_the_audit_runs_whole_on_a_corrupt_cache(tmp_path: Path) -> None:
    path = tmp_path / "judge-cache.sqlite"
    path.write_bytes(b"\x13garbage" * 512)
    args = ["judge-audit", "--judge", "steady", "--items", str(ITEMS), "--cache", str(path),
            "--format", "json", "--probes", "files"]
    result = CliRunner().invoke(main, args)
    document = json.loads(result.stdout)
    assert document["calls"] == {"made": 24, "cached": 0, "failed": 0, "failures": []}
    assert document["position"]["status"] == "clean"
    [warning] = result.stderr.splitlines()
    assert warning.startswith("warning: ") and str(path) in warning


# --- read-only: as an unprivileged user ---------------------------------------------------

CHILD = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from metaeval.judges.adapters import PromptedJudge, callable_backend
    from metaeval.judges.cache import CachedJudge, ReplyCache

    calls = []
    def backend(prompt):
        calls.append(prompt)
        return "4"

    warnings = []
    cache = ReplyCache(Path(sys.argv[1]), busy_timeout_s=0.05, warn=warnings.append)
    judge = CachedJudge(PromptedJudge("counting", callable_backend(backend)), cache)
    replies = [judge.score("q", answer) for answer in ("stored", "new one", "new two")]
    cache.close()
    print(json.dumps({"values": [r.value for r in replies],
                      "cached": [r.call.cached for r in replies],
                      "failed": [r.call.failed for r in replies],
                      "calls": len(calls), "warnings": warnings}))
""")


CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, PR_CAPBSET_DROP = 1, 2, 3, 24


def _without_root_overrides() -> None:
    """In the child before exec: drop the capabilities that let root ignore file
    modes, so a read-only file or folder binds it as it binds everyone else."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.fixture
def modes(tmp_path: Path) -> Iterator[Path]:
    """tmp_path, its modes put back afterwards so it can be removed."""
    yield tmp_path
    for p in [tmp_path, *tmp_path.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)


def _bound_by_modes(args: list[str], cwd: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", CHILD, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, check=False,
                          preexec_fn=_without_root_overrides if os.geteuid() == 0 else None)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _seed(path: Path) -> None:
    """A cache holding the reply to "stored", as the child will ask it."""
    cache = ReplyCache(path)
    CachedJudge(PromptedJudge("counting", callable_backend(lambda prompt: "4")),
                cache).score("q", "stored")
    cache.close()


def test_a_read_only_cache_file_is_read_and_not_written(modes: Path) -> None:
    path = modes / "judge-cache.sqlite"
    _seed(path)
    path.chmod(0o444)
    before = path.read_bytes()
    result = _bound_by_modes([str(path)], modes)
    assert result["values"] == [4.0, 4.0, 4.0]
    assert result["cached"] == [True, False, False] and result["calls"] == 2
    assert result["failed"] == [False, False, False]
    [warning] = result["warnings"]
    assert str(path) in warning and "not storing" in warning
    assert path.read_bytes() == before


def test_a_cache_in_a_read_only_folder_is_read_and_not_written(modes: Path) -> None:
    folder = modes / "ro"
    folder.mkdir()
    path = folder / "judge-cache.sqlite"
    _seed(path)  # the file stays writable; its folder (where the journal goes) is not
    folder.chmod(0o555)
    result = _bound_by_modes([str(path)], modes)
    assert result["values"] == [4.0, 4.0, 4.0]
    assert result["cached"] == [True, False, False] and result["calls"] == 2
    [warning] = result["warnings"]
    assert "not storing" in warning


@pytest.mark.parametrize("where", ["new file in a read-only folder", "folder not makeable"])
def test_no_cache_can_be_made_so_the_run_goes_on_without(modes: Path, where: str) -> None:
    folder = modes / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    path = folder / ("judge-cache.sqlite" if where.startswith("new") else
                     "sub/judge-cache.sqlite")
    result = _bound_by_modes([str(path)], modes)
    assert result["values"] == [4.0, 4.0, 4.0] and result["calls"] == 3
    [warning] = result["warnings"]
    assert "without the cache" in warning


@pytest.mark.parametrize("kind", ["dangling", "live", "folder", "fifo"])
def test_a_cache_at_a_link_or_a_special_file_is_never_opened(tmp_path: Path, kind: str) -> None:
    # .metaeval/judge-cache.sqlite comes with the branch: linked, it would make a
    # database outside the repository or write into the file it points at.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pricing.py").write_text("PRICE = 1\n", encoding="utf-8")
    repo = tmp_path / "repo"
    repo.mkdir()
    path = repo / ".metaeval" / "judge-cache.sqlite"
    if kind == "folder":
        (repo / ".metaeval").symlink_to(outside)
    else:
        path.parent.mkdir()
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to(outside / ("made.sqlite" if kind == "dangling" else "pricing.py"))
    warnings: list[str] = []
    cache = ReplyCache(path, warn=warnings.append)
    values, backend = _ask(cache)
    cache.close()
    assert values == [4.0] * 3 and backend.calls == 3
    assert len(warnings) == 1 and "without the cache" in warnings[0]
    assert ("a fifo, not a regular file" if kind == "fifo" else "is a symbolic link") in warnings[0]
    assert sorted(os.listdir(outside)) == ["pricing.py"]
    assert (outside / "pricing.py").read_text(encoding="utf-8") == "PRICE = 1\n"
