"""``metaeval mutate --executor ray`` on a real Ray cluster started here on loopback
(a head and a second node, one CPU each): status for status the same as a local
run, the source tree untouched, and a worker killed mid-batch costs nothing and
counts nothing twice. Marked ``ray``: the default run leaves it out; .ci/run
runs it with the extra installed."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mutation.conftest import copy_shop, git, tree_digest
from tests.mutation.ray_cluster import LocalCluster

if not os.environ.get("METAEVAL_REQUIRE_RAY"):  # .ci/run sets it: no silent skip there
    pytest.importorskip("ray")
pytestmark = pytest.mark.ray

METAEVAL = str(Path(sys.executable).parent / "metaeval")


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    started = LocalCluster(nodes=2)
    try:
        yield started.start()
    finally:
        assert not started.stop()  # every process of the cluster ended


def _mutate(project: Path, report: Path, *flags: str, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([METAEVAL, "mutate", "--no-cache", "--format", "json",
                           "--report", str(report), *flags], cwd=project, env=env,
                          capture_output=True, text=True, timeout=600)


def _statuses(report: Path) -> dict[str, str]:
    """Status by mutant id, each id once (a duplicate would be lost in a dict)."""
    document = json.loads(report.read_text())
    mutants = [m for f in document["files"].values() for m in f["mutants"]]
    ids = [m["id"] for m in mutants]
    assert len(ids) == len(set(ids)), ids
    return {m["id"]: m["status"] for m in mutants}


def test_a_ray_run_equals_a_local_run(cluster: LocalCluster, tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    local = _mutate(project, tmp_path / "local.json", "--jobs", "1")
    before = tree_digest(project)
    remote = _mutate(project, tmp_path / "ray.json", "--executor", "ray",
                     "--ray-address", cluster.address, env=cluster.driver_env)
    assert remote.returncode == local.returncode == 1, remote.stderr
    assert tree_digest(project) == before
    statuses = _statuses(tmp_path / "ray.json")
    assert statuses == _statuses(tmp_path / "local.json")
    assert {"Killed", "Survived", "NoCoverage", "Timeout"} <= set(statuses.values())
    shown, expected = json.loads(remote.stdout), json.loads(local.stdout)
    assert (shown["counts"], shown["score"]) == (expected["counts"], expected["score"])
    # Traced once, on the head: no batch traced a test again.
    assert shown["timing"]["traced_tests"] == expected["timing"]["traced_tests"] > 0
    # Each mutant's killer and coverage, too: the map the batches reused was the head's.
    assert ([(m["killed_by"], m["covered_by"]) for m in shown["mutants"]]
            == [(m["killed_by"], m["covered_by"]) for m in expected["mutants"]])


KILLER = '''
import os
import signal
from pathlib import Path

from shop.pricing import discount_cents

MARKER = Path({marker!r})


def _ray_worker():
    """The nearest ancestor that is a Ray worker (its title is ray::...), if any."""
    pid = os.getppid()
    while pid > 1:
        cmdline = Path(f"/proc/{{pid}}/cmdline").read_bytes()
        if cmdline.startswith(b"ray::"):
            return pid
        pid = int(Path(f"/proc/{{pid}}/stat").read_text().rpartition(")")[2].split()[1])
    return None


def test_half_price():
    worker = _ray_worker()
    if worker is not None:
        try:
            MARKER.open("x").close()  # once: the batch run again must go through
        except FileExistsError:
            pass
        else:
            os.kill(worker, signal.SIGKILL)
    assert discount_cents(1000, 50) == 500
'''


def test_a_worker_killed_mid_batch_loses_nothing_and_counts_nothing_twice(
        cluster: LocalCluster, tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    marker = tmp_path / "killed-once"
    (project / "tests" / "test_killer.py").write_text(KILLER.format(marker=str(marker)))
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "a test that kills its Ray worker once")
    local = _mutate(project, tmp_path / "local.json", "--jobs", "1")
    assert not marker.exists()  # no Ray worker above a local run
    before = tree_digest(project)
    remote = _mutate(project, tmp_path / "ray.json", "--executor", "ray",
                     "--ray-address", cluster.address, env=cluster.driver_env)
    assert marker.exists(), remote.stderr  # a worker was killed mid-batch
    assert remote.returncode == local.returncode, remote.stderr
    assert tree_digest(project) == before
    statuses = _statuses(tmp_path / "ray.json")
    assert statuses == _statuses(tmp_path / "local.json")
    # The fixture's one RuntimeError is a patch mutant's missing target, in both runs.
    details = [m["detail"] for m in json.loads(remote.stdout)["mutants"]]
    assert not [d for d in details if "Ray" in d], details


def test_without_an_address_a_local_cluster_runs_and_is_gone_after(tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    local = _mutate(project, tmp_path / "local.json", "--jobs", "1")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    # Short: Ray's socket paths under it must stay within the 107 bytes of AF_UNIX.
    short = Path(tempfile.mkdtemp(prefix="r"))
    try:
        remote = _mutate(project, tmp_path / "ray.json", "--executor", "ray", "--jobs", "2",
                         env={**env, "TMPDIR": str(short)})
        assert remote.returncode == local.returncode == 1, remote.stderr
        assert _statuses(tmp_path / "ray.json") == _statuses(tmp_path / "local.json")
        sessions = list((short / "ray").glob("session_2*"))
        assert len(sessions) == 1  # the cluster was this run's, under its TMPDIR
        # Stopped with the run: no process is left in that session.
        assert not [p for p in Path("/proc").glob("[0-9]*/cmdline")
                    if str(sessions[0]).encode() in _read(p)]
    finally:
        shutil.rmtree(short, ignore_errors=True)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def test_batches_are_small_and_at_least_four_a_cpu() -> None:
    from metaeval.mutation.run.ray_executor import MAX_BATCH, batch_size

    assert batch_size(1000, slots=2) == MAX_BATCH
    assert batch_size(40, slots=2) == 5  # 8 batches: 4 a CPU
    assert batch_size(3, slots=8) == 1


def test_an_address_where_nothing_answers_is_exit_2_at_once(tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    with socket.socket() as s:  # a port nothing listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
        done = _mutate(project, tmp_path / "ray.json", "--executor", "ray",
                       "--ray-address", address)
    assert done.returncode == 2, done.stderr
    assert f"--ray-address {address!r}: nothing answers there" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_batch_counts_its_own_mutants_once_and_names_one_it_lost() -> None:
    from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
    from metaeval.mutation.run.ray_executor import BatchOutcome, Shipped, _record

    def mutant(name: str) -> Mutant:
        return Mutant(name, MutantKind.PATCH, "", "p.py", "p", name, Span(1, 1, 1, 2), "", "")

    killed = Shipped("Killed", ("t::a",), ("t::a",), 1.0, "in /node/copy/p.py", 0.5, "")
    # Index 7 is another batch's: never counted here. Index 2 is missing from the outcome.
    outcome = BatchOutcome("/node/copy", ((1, killed), (1, killed), (7, killed)), 3.0,
                           (0, 0, 0.0, 0.0, 0.0, 0, 0))
    seen: list[tuple[int, MutantResult]] = []
    _record(outcome, {1: mutant("one"), 2: mutant("two")}, Path("/head"),
            lambda i, r: seen.append((i, r)))
    assert [(i, r.mutant.id, r.status) for i, r in seen] == [
        (1, "one", Status.KILLED), (2, "two", Status.RUNTIME_ERROR)]
    assert seen[0][1].detail == "in /head/p.py"  # the node's copy named as the head's
    assert "without it" in seen[1][1].detail
