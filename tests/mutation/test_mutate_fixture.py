"""End to end: `metaeval mutate` on the fixture shop, each status where designed.

One run is shared by every assertion (it takes a few seconds: a baseline, the
forced-fail check, then each mutant in its own pytest child).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

from tests.mutation.conftest import copy_shop, git, tree_digest

METAEVAL = str(Path(sys.executable).parent / "metaeval")
SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "mutation-testing-report-schema.json"
PRICING = "shop/pricing.py"

# What the fixture was written to show. Written out by hand, not read from the run.
EXPECTED = {
    f"{PRICING}::discount_cents::negate_condition::0": "Killed",
    f"{PRICING}::discount_cents::swap_boolean_operator::0": "Killed",
    f"{PRICING}::discount_cents::flip_comparison::0": "Killed",
    f"{PRICING}::discount_cents::flip_comparison::1": "Killed",
    f"{PRICING}::clamp_quantity::negate_condition::0": "Killed",
    f"{PRICING}::clamp_quantity::flip_comparison::0": "Survived",
    f"{PRICING}::refund_note::negate_condition::0": "NoCoverage",
    f"{PRICING}::countdown::negate_condition::0": "Killed",
    f"{PRICING}::countdown::flip_comparison::0": "Killed",
    f"{PRICING}::legacy_rounding::negate_condition::0": "Ignored",
    f"{PRICING}::legacy_rounding::flip_comparison::0": "Ignored",
    "discount-ignores-percent": "Killed",
    "clamp-allows-any-quantity": "Survived",
    "refund-note-blank": "NoCoverage",
    "discount-target-gone": "RuntimeError",
    "countdown-never-ends": "Timeout",
}


@dataclass(frozen=True)
class Run:
    project: Path
    returncode: int
    output: dict[str, object]
    report: dict[str, object]
    seconds: float
    before: dict[str, str]


def mutate_json(project: Path, scratch: Path, *flags: str) -> Run:
    before = tree_digest(project)
    report = scratch / "mutation.json"
    started = time.monotonic()
    done = subprocess.run([METAEVAL, "mutate", "--format", "json", "--jobs", "2",
                           "--report", str(report), *flags], cwd=project, capture_output=True,
                          text=True, timeout=120)
    seconds = time.monotonic() - started
    assert done.stdout, done.stderr
    return Run(project, done.returncode, json.loads(done.stdout),
               json.loads(report.read_text(encoding="utf-8")), seconds, before)


@pytest.fixture(scope="module")
def run(shop: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The default: fork isolation, with a result cache kept outside the tree."""
    scratch = tmp_path_factory.mktemp("fork")
    return mutate_json(shop, scratch, "--cache", str(scratch / "cache.json"))


@pytest.fixture(scope="module")
def subprocess_run(shop: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The reference: a fresh pytest per mutant, every test, no cache. Each mutant's
    limit there counts a whole pytest start, so a busy machine can push a mutant that
    only starts slowly past the fixture's 3 s constant: 8 s keeps the looping mutant
    the only Timeout."""
    return mutate_json(shop, tmp_path_factory.mktemp("subprocess"), "--isolation",
                       "subprocess", "--no-cache", "--timeout-constant", "8")


def statuses(run: Run) -> dict[str, str]:
    mutants = run.output["mutants"]
    assert isinstance(mutants, list)
    return {m["id"]: m["status"] for m in mutants}


def by_id(run: Run) -> dict[str, dict[str, object]]:
    mutants = run.output["mutants"]
    assert isinstance(mutants, list)
    return {m["id"]: m for m in mutants}


def test_each_status_appears_exactly_where_designed(run: Run) -> None:
    assert statuses(run) == EXPECTED


@pytest.mark.slow  # a whole subprocess-isolation run (CI: pytest -m slow)
def test_subprocess_isolation_shows_each_status_where_designed(subprocess_run: Run) -> None:
    assert statuses(subprocess_run) == EXPECTED
    timing = subprocess_run.output["timing"]
    assert isinstance(timing, dict) and timing["isolation"] == "subprocess"
    assert (timing["forking_seconds"], timing["warm_resident_bytes"]) == (0.0, 0)


@pytest.mark.slow  # a whole subprocess-isolation run (CI: pytest -m slow)
def test_fork_and_subprocess_isolation_agree_on_every_mutant(run: Run,
                                                              subprocess_run: Run) -> None:
    fork, reference = by_id(run), by_id(subprocess_run)
    timing = run.output["timing"]
    assert isinstance(timing, dict) and timing["isolation"] == "fork"
    assert {k: m["status"] for k, m in fork.items()} == {
        k: m["status"] for k, m in reference.items()}
    for key, mutant in fork.items():
        # The killing test is one the baseline saw reach the mutant, and on this
        # fixture (all tests equally fast) the same one the full suite stops at.
        assert mutant["killed_by"] == reference[key]["killed_by"], key
        assert mutant["covered_by"] == reference[key]["covered_by"], key
        killed_by, covered_by = mutant["killed_by"], mutant["covered_by"]
        assert isinstance(killed_by, list) and isinstance(covered_by, list)
        if killed_by and covered_by:
            assert set(killed_by) <= set(covered_by), key


def test_fork_isolation_reports_time_in_tests_and_elsewhere(run: Run) -> None:
    timing = run.output["timing"]
    assert isinstance(timing, dict)
    # NoCoverage, Ignored and CompileError mutants are settled without a child.
    assert timing["ran"] == sum(1 for s in EXPECTED.values()
                                if s not in ("NoCoverage", "Ignored"))
    assert timing["cached"] == 0
    assert 0 < timing["elsewhere_seconds"] < timing["wall_seconds"]
    assert timing["in_tests_seconds"] > 0
    # Of the time elsewhere, what the warm process spent forking and what the
    # children spent putting their mutants in place, each measured where it happens.
    forking, placing = timing["forking_seconds"], timing["placing_seconds"]
    assert isinstance(forking, float) and isinstance(placing, float)
    assert forking > 0 and placing > 0
    assert forking + placing < timing["elsewhere_seconds"]
    # A Python process with pytest and the fixture imported is well over 16 MiB.
    assert timing["warm_resident_bytes"] > 16 * 2**20
    # Before the first mutant: collection (timed in the warm process), then the trace
    # and the forced-fail check (the runner's clock, from the process's start).
    collect, ready = timing["collect_seconds"], timing["baseline_ready_seconds"]
    assert isinstance(collect, float) and isinstance(ready, float)
    assert 0 < collect < ready < timing["wall_seconds"]


def test_a_survivor_makes_the_run_exit_1(run: Run) -> None:
    assert run.returncode == 1


def test_killed_by_names_the_test_that_failed(run: Run) -> None:
    mutants = run.output["mutants"]
    assert isinstance(mutants, list)
    by_id = {m["id"]: m for m in mutants}
    assert by_id["discount-ignores-percent"]["killed_by"] == [
        "tests/test_pricing.py::test_discount_takes_the_percentage_off"]
    assert by_id["clamp-allows-any-quantity"]["killed_by"] == []
    assert by_id["clamp-allows-any-quantity"]["covered_by"] == [
        "tests/test_pricing.py::test_clamp_quantity_keeps_a_small_quantity"]


def test_the_looping_mutant_times_out_without_stalling_the_run(run: Run) -> None:
    limit = run.output["timeout_seconds"]
    assert isinstance(limit, float)
    assert limit < 10  # fixture config: baseline x 1.0 + 3 s
    # Everything else takes a few seconds; a stalled run would hit the 120 s cap.
    assert run.seconds < limit + 30


def test_a_survivors_diff_and_breaks_sentence_are_reported(run: Run) -> None:
    mutants = run.output["mutants"]
    assert isinstance(mutants, list)
    clamp = next(m for m in mutants if m["id"] == "clamp-allows-any-quantity")
    assert clamp["breaks"] == "The quantity limit no longer caps an order."
    assert "-    if quantity > limit:" in clamp["diff"]
    assert "+clamp_quantity = lambda quantity, limit=10: quantity" in clamp["diff"]
    # Real line numbers: the def is on line 11, shown with three lines of context.
    assert clamp["diff"].startswith(
        "--- a/shop/pricing.py\n+++ b/shop/pricing.py\n@@ -8,11 +8,7 @@")


def test_the_report_validates_against_the_published_schema(run: Run) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(run.report, schema, cls=jsonschema.Draft7Validator)
    files = run.report["files"]
    assert isinstance(files, dict)
    assert files[PRICING]["source"] == (run.project / PRICING).read_text(encoding="utf-8")
    assert run.report["schemaVersion"] == "2"


def test_a_report_missing_a_required_field_fails_the_schema(run: Run) -> None:
    # Proves the validation above could fail: drop the status of one mutant.
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    broken = json.loads(json.dumps(run.report))
    del broken["files"][PRICING]["mutants"][0]["status"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema, cls=jsonschema.Draft7Validator)


def test_the_run_leaves_the_tree_byte_identical(run: Run) -> None:
    assert tree_digest(run.project) == run.before
    assert git(run.project, "status", "--porcelain", "--untracked-files=all",
               "--ignored") == ""


def _processes() -> list[tuple[int, int, list[bytes]]]:
    """(pid, parent pid, argv) of every process."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines()
                          if ":\t" in line)
            cmdline = (status.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        found.append((int(status.parent.name), int(fields.get("PPid", "0").strip()), cmdline))
    return found


def _mutant_children(parent: int, isolation: str) -> list[int]:
    """The processes running mutants: pytest children of the runner (subprocess), or
    the warm process and the children it forked (fork)."""
    processes = _processes()
    if isolation == "subprocess":
        found = []
        for pid, ppid, cmdline in processes:
            if ppid == parent and b"--metaeval-mutant" in cmdline:
                index = cmdline.index(b"--metaeval-mutant")
                if cmdline[index + 1] not in (b"baseline", b"forced-fail"):
                    found.append(pid)
        return found
    warm = [pid for pid, ppid, cmdline in processes
            if ppid == parent and any(a.startswith(b"--metaeval-warm=") for a in cmdline)]
    forked = [pid for pid, ppid, _ in processes if ppid in warm]
    return [*warm, *forked] if forked else []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the children")
@pytest.mark.parametrize("isolation", ["fork", "subprocess"])
def test_sigkill_midway_leaves_the_tree_byte_identical(tmp_path: Path, isolation: str) -> None:
    project = copy_shop(tmp_path)
    before = tree_digest(project)
    # The killed runner cannot remove its scratch directory: keep it under tmp_path.
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    proc = subprocess.Popen([METAEVAL, "mutate", "--jobs", "2", "--isolation", isolation,
                             "--report", str(tmp_path / "report.json")], cwd=project,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "TMPDIR": str(scratch)})
    deadline = time.monotonic() + 60
    children: list[int] = []
    while not children and time.monotonic() < deadline and proc.poll() is None:
        children = _mutant_children(proc.pid, isolation)
        time.sleep(0.02)
    assert children, "no mutant child started"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # The children die with the runner (parent-death signal), mid-mutant.
    deadline = time.monotonic() + 10
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(c) for c in children)
    assert tree_digest(project) == before
    assert git(project, "status", "--porcelain", "--untracked-files=all", "--ignored") == ""
    assert not (tmp_path / "report.json").exists()
