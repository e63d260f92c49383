"""Smoke test of benchmarks/mutation_speed.py: flags, summary math, detection probes.

Nothing is downloaded and no tool is run; the benchmark itself is run by hand.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


bt = _load("bench_tools")
br = _load("bench_report")
ms = _load("mutation_speed")

FORGED = (
    "--- a/src/itsdangerous/signer.py",
    "+++ b/src/itsdangerous/signer.py",
    "@@ -229,7 +229,7 @@",
    "         try:",
    "             sig = base64_decode(sig)",
    "         except Exception:",
    "-            return False",
    "+            return True",
    " ",
)
# The same edit on the last `return False`, after the loop: tests kill it, it is not the gap.
LAST_RETURN = (
    "@@ -239,4 +239,4 @@",
    "                 return True",
    " ",
    "-        return False",
    "+        return True",
)


def test_flags_default_and_reject_unknown_tools(capsys: pytest.CaptureFixture[str]) -> None:
    args = ms.parse_args([])
    assert (args.runs, args.jobs, args.target, args.cosmic_ray_runs) == (3, 2, "both", 3)
    assert args.tools == ["metaeval", "mutmut", "cosmic-ray"]
    assert ms.parse_args(["--tools", "mutmut", "--runs", "2"]).cosmic_ray_runs == 2
    with pytest.raises(SystemExit) as exc:
        ms.parse_args(["--tools", "metaeval,pitest"])
    assert exc.value.code == 2
    assert "'metaeval,pitest'" in capsys.readouterr().err


def test_summary_takes_the_median_and_ratio_is_metaeval_over_other() -> None:
    mutants = tuple(bt.Mutant("f", "killed", ()) for _ in range(100))
    runs = [bt.ToolRun("mutmut", "t", i, wall, mutants) for i, wall in enumerate((30, 10, 20))]
    mm = br.summarize(runs)
    assert (mm.median_wall, mm.min_wall, mm.max_wall, mm.mutants) == (20, 10, 30, 100)
    assert mm.per_second == pytest.approx(5.0)
    assert mm.ms_per_mutant == pytest.approx(200.0)
    me = br.summarize([bt.ToolRun("metaeval", "t", 0, 4.0, mutants[:60])])
    assert br.speed_ratio(me, mm) == pytest.approx(3.0)
    assert br.speed_ratio(mm, me) == pytest.approx(1 / 3)


def test_forged_token_probe_finds_the_except_branch_only() -> None:
    forged = bt.Mutant("Signer.verify_signature", "Survived", FORGED)
    last = bt.Mutant("Signer.verify_signature", "Killed", LAST_RETURN)
    elsewhere = bt.Mutant("SigningAlgorithm.verify_signature", "Survived", FORGED)
    assert ms.forged_token([forged, last, elsewhere]) == [forged]
    assert ms.verdict([forged], ms.SURVIVED) == (True, "Survived")
    assert ms.verdict([last], ms.SURVIVED) == (False, "Killed")
    assert ms.verdict([], ms.SURVIVED) == (False, "no such mutant generated")


def test_expiry_probe_wants_the_inclusive_comparison() -> None:
    inclusive = bt.Mutant("TimestampSigner.unsign", "survived",
                          ("-            if age > max_age:", "+            if age >= max_age:"))
    negated = bt.Mutant("TimestampSigner.unsign", "killed",
                        ("-            if age > max_age:", "+            if age <= max_age:"))
    found = ms.expiry_boundary([inclusive, negated], "age > max_age", "age >= max_age")
    assert found == [inclusive]


def test_mutmut_names_map_to_qualnames() -> None:
    assert bt._mutmut_function("xǁSignerǁverify_signature__mutmut_12") == (
        "Signer.verify_signature")
    assert bt._mutmut_function("x_want_bytes__mutmut_3") == "want_bytes"


def test_time_limit_flag_defaults_to_none_and_must_be_positive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert ms.parse_args([]).time_limit is None
    assert ms.parse_args(["--time-limit", "120"]).time_limit == 120.0
    with pytest.raises(SystemExit):
        ms.parse_args(["--time-limit", "0"])
    assert "--time-limit: got 0.0" in capsys.readouterr().err


# A parent that forks a child ignoring SIGINT, then both sleep: the parent stops on
# Ctrl-C, the child only on SIGKILL of the group.
_FORKING = """
import os, signal, sys, time
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    time.sleep(60)
    os._exit(0)
print(pid, flush=True)
time.sleep(60)
"""


def test_run_past_the_limit_is_stopped_with_its_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bt, "GRACE_SECONDS", 0.5)  # the child holds stdout open: no quick exit
    m = bt.run_cmd([sys.executable, "-c", _FORKING], tmp_path, {}, time_limit=1.0)
    assert m.stopped_at_limit
    assert m.wall == 1.0
    child = int(m.stdout.split()[0])
    assert not bt.group_members(child)  # group of the parent, which was its leader
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text()


def test_run_within_the_limit_is_not_stopped(tmp_path: Path) -> None:
    m = bt.run_cmd([sys.executable, "-c", "print('ok')"], tmp_path, {}, time_limit=30)
    assert (m.stopped_at_limit, m.stdout, m.returncode) == (False, "ok\n", 0)
    assert m.wall < 30


def test_stopped_summary_rates_over_the_mutants_done() -> None:
    done = tuple(bt.Mutant("f", "killed", ()) for _ in range(30))
    left = tuple(bt.Mutant("f", "not checked", ()) for _ in range(70))
    run = bt.ToolRun("mutmut", "t", 0, 120.0, done + left, stopped_at_limit=True)
    assert run.done == 30
    mm = br.summarize([run])
    assert (mm.mutants, mm.done, mm.stopped_runs) == (100, 30, 1)
    assert mm.per_second == pytest.approx(0.25)
    assert mm.ms_per_mutant == pytest.approx(4000.0)
    me = br.summarize([bt.ToolRun("metaeval", "t", 0, 10.0, done)])
    assert br.speed_ratio(me, mm) == pytest.approx(12.0)
    assert "30 of 100 done" in br.speed_table([me, mm])
    data = mm.as_json()
    assert (data["stopped_at_limit"], data["done"]) == (True, 30)
    assert "stopped_at_limit" not in me.as_json() and "done" not in me.as_json()


def test_the_overhead_target_reads_the_runners_split(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    # Four mutants: 36 ms outside tests in all, 16 ms of it in os.fork of a 64 MiB
    # process: 9 ms a mutant passes the 10 ms target; 44 ms (11 a mutant) fails it.
    ran = [{"covered_by": ["t::a"]}] * 4
    timing: dict[str, object] = {"in_tests_seconds": 1.0, "elsewhere_seconds": 0.036,
                                 "forking_seconds": 0.016, "placing_seconds": 0.004,
                                 "warm_resident_bytes": 64 * 2**20}
    data: dict[str, object] = {}
    [(_, passed, detail)] = ms.overhead_checks(ran, timing, {"t::a": 0.5}, 1.0, 2, data)
    assert passed is True
    assert detail.startswith("9 ms (4 ms of it forking a 64 MiB process;")
    overhead = data["overhead_ms"]
    assert isinstance(overhead, dict) and overhead["forking"] == pytest.approx(4.0)
    assert "1.0 ms putting the mutant in place" in capsys.readouterr().out
    [(_, passed, _)] = ms.overhead_checks(ran, timing | {"elsewhere_seconds": 0.044},
                                          {}, 1.0, 2, {})
    assert passed is False


fc = _load("fork_cost")


def test_fork_cost_measures_each_import_set_in_a_fresh_process() -> None:
    bare, with_json = fc.measure("os", 5), fc.measure("os,json,decimal", 5)
    # Importing more makes a bigger process; both forked and reaped for real.
    assert 0 < bare["resident_mib"] < with_json["resident_mib"]
    assert 0 < bare["fork_ms"] < bare["fork_exit_ms"]


def test_fork_cost_names_a_module_that_does_not_import() -> None:
    with pytest.raises(SystemExit, match="importing no_such_module_here failed"):
        fc.measure("no_such_module_here", 1)
