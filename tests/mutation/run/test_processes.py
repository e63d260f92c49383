"""Process hygiene: nothing metaeval starts outlives it, and every way it is
stopped is an orderly exit.

A test that starts a background process (here a ``sleep`` that writes its pid)
must not leave it running after the run, in either isolation, in the baseline
or under a mutant; Ctrl-C, SIGTERM and SIGHUP end ``metaeval mutate`` with 130,
143 and 129, one line, the scratch directories removed and every child gone;
and a mutant that allocates without bound meets the same memory limit in
either isolation.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from textwrap import dedent

import pytest

from metaeval.mutation.apart import load_patch_mutants
from metaeval.mutation.find.targets import find_mutants
from metaeval.mutation.isolation.options import Isolation, RunOptions
from metaeval.mutation.model import Status
from tests.builders import run_here
from tests.mutation.conftest import SUBPROCESS_SLOW, calc_project

METAEVAL = str(Path(sys.executable).with_name("metaeval"))
PIDS = "METAEVAL_TEST_PIDS"

# Each run of test_double records its own pid and a background sleep's.
SPAWNING = """\
    import os
    import subprocess
    import time
    from pathlib import Path

    from calc import double


    def test_double():
        sleeper = subprocess.Popen(["sleep", "1000"])
        where = Path(os.environ["METAEVAL_TEST_PIDS"])
        (where / f"{os.getpid()}-{sleeper.pid}").write_text("", encoding="utf-8")
        time.sleep(float(os.environ.get("METAEVAL_TEST_PAUSE", "0")))
        assert double(2) == 4
    """


def alive(pid: int) -> bool:
    """Running, or stopped; not gone and not a zombie waiting for a reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def recorded(where: Path) -> list[int]:
    return [int(pid) for name in os.listdir(where) for pid in name.split("-")]


def left_running(where: Path, within: float = 3.0) -> list[int]:
    """The recorded pids still running after ``within`` seconds (a killed orphan is
    reaped by init a moment later)."""
    deadline = time.monotonic() + within
    while True:
        running = [pid for pid in recorded(where) if alive(pid)]
        if not running or time.monotonic() > deadline:
            for pid in running:  # leave nothing behind for the next test
                os.kill(pid, signal.SIGKILL)
            return running
        time.sleep(0.1)


@pytest.fixture
def spawning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    (tmp_path / "p").mkdir()
    root = calc_project(tmp_path / "p", SPAWNING)
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.setenv(PIDS, str(pids))
    return root, pids


@pytest.mark.parametrize("isolation", [Isolation.FORK, SUBPROCESS_SLOW])
def test_a_process_a_test_starts_does_not_outlive_the_run(
        spawning: tuple[Path, Path], isolation: Isolation) -> None:
    root, pids = spawning
    options = RunOptions(root, root / "mutants", jobs=2, isolation=isolation)
    mutants = find_mutants(["calc.py"], root) + load_patch_mutants(root / "mutants", root)
    run = run_here(mutants, options)
    assert Status.KILLED in {r.status for r in run.results}  # the tests did run
    assert len(recorded(pids)) >= 4  # the baseline's test and at least one mutant's
    assert left_running(pids) == []


def test_the_check_sees_a_process_left_running(spawning: tuple[Path, Path]) -> None:
    # The mirror: the same test run by plain pytest, whose process group nobody kills.
    root, pids = spawning
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                   cwd=root, capture_output=True, check=True, start_new_session=True,
                   timeout=60)
    assert len(left_running(pids, within=0.5)) == 1  # the sleep; pytest itself ended


# --- being stopped --------------------------------------------------------------------


@pytest.mark.parametrize(("isolation", "signum", "code", "said"), [
    ("fork", signal.SIGINT, 130, "interrupted"),
    ("subprocess", signal.SIGINT, 130, "interrupted"),
    ("fork", signal.SIGTERM, 143, "terminated (SIGTERM)"),
    # The fork runs cover SIGTERM; subprocess isolation is the same clean-up path,
    # run end to end in CI (pytest -m slow).
    pytest.param("subprocess", signal.SIGTERM, 143, "terminated (SIGTERM)",
                 marks=pytest.mark.slow),
    pytest.param("subprocess", signal.SIGHUP, 129, "terminated (SIGHUP)",
                 marks=pytest.mark.slow),
])
def test_a_stopped_run_exits_in_order(
        spawning: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        isolation: str, signum: signal.Signals, code: int, said: str) -> None:
    root, pids = spawning
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    # As from a terminal: a suite started in the background of a script inherits
    # SIGINT ignored, and metaeval, like any program, leaves it ignored.
    proc = subprocess.Popen([METAEVAL, "mutate", "calc.py", "--no-cache", "--jobs", "2",
                             "--isolation", isolation], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "METAEVAL_TEST_PAUSE": "4"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # Stopped while mutants run: past the baseline's one test, and the check's in
    # subprocess isolation.
    deadline = time.monotonic() + 60
    while len(os.listdir(pids)) < (3 if isolation == "subprocess" else 2):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, (out, err)
    assert err.strip().splitlines()[-1] == said
    assert "Traceback" not in err
    assert os.listdir(scratch) == []  # metaeval-mutate-*, metaeval-warm-*: removed
    assert left_running(pids) == []  # the pytest processes and what their tests started


# --- memory ---------------------------------------------------------------------------


@pytest.mark.parametrize("isolation", [Isolation.FORK, SUBPROCESS_SLOW])
def test_a_mutant_that_allocates_without_bound_meets_the_limit_in_either_isolation(
        tmp_path: Path, isolation: Isolation) -> None:
    root = calc_project(tmp_path, "from calc import double\n\n\ndef test_double():\n"
                                  "    assert double(2) == 4\n")
    (root / "mutants" / "calc_mutants.py").write_text(dedent("""\
        from metaeval.mutation.patches import PatchMutant

        # 1 GiB of address space (calloc: mapped, never touched) against a 256 MiB limit.
        MUTANTS = [PatchMutant(id="hungry", target="calc:double",
                               replacement="lambda x: len(bytearray(1 << 30)) and x * 2",
                               breaks="Nothing but its appetite.")]
        """), encoding="utf-8")
    options = RunOptions(root, root / "mutants", jobs=1, isolation=isolation,
                         memory_limit=256 << 20)
    (result,) = run_here(load_patch_mutants(root / "mutants", root), options).results
    # The allocation fails in the test, which fails: killed, as a MemoryError should be.
    assert (result.status, result.killed_by) == (Status.KILLED, ("test_calc.py::test_double",))


def test_without_a_limit_the_same_allocation_succeeds() -> None:
    # The mirror: the fixture's allocation is within reach of an unlimited process,
    # so the kill above comes from the limit, not from the allocation itself.
    done = subprocess.run([sys.executable, "-c", "print(len(bytearray(1 << 30)) and 4)"],
                          capture_output=True, text=True, check=True)
    assert done.stdout == "4\n"
