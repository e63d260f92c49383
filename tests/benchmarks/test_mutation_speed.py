"""Smoke test of benchmarks/mutation_speed.py: flags, summary math, detection probes.

Nothing is downloaded and no tool is run; the benchmark itself is run by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.benchmarks.conftest import load_benchmark

bt = load_benchmark("bench_tools")
br = load_benchmark("bench_report")
ms = load_benchmark("mutation_speed")

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


fc = load_benchmark("fork_cost")


def test_fork_cost_measures_each_import_set_in_a_fresh_process() -> None:
    bare, with_json = fc.measure("os", 5), fc.measure("os,json,decimal", 5)
    # Importing more makes a bigger process; both forked and reaped for real.
    assert 0 < bare["resident_mib"] < with_json["resident_mib"]
    assert 0 < bare["fork_ms"] < bare["fork_exit_ms"]


def test_fork_cost_names_a_module_that_does_not_import() -> None:
    with pytest.raises(SystemExit, match="importing no_such_module_here failed"):
        fc.measure("no_such_module_here", 1)


# ---------------------------------------------------------------- inspect_ai (issue 14)

bi = load_benchmark("bench_inspect_ai")


def test_target_flags_keep_both_as_default_and_add_inspect_ai() -> None:
    assert ms.parse_args([]).chosen == ["itsdangerous", "metaeval"]
    assert ms.parse_args(["--target", "inspect_ai"]).chosen == ["inspect_ai"]
    assert ms.parse_args(["--target", "all"]).chosen == ["itsdangerous", "metaeval",
                                                         "inspect_ai"]
    args = ms.parse_args(["--inspect-ai-targets", "src/a.py, src/b/", "--isolation-check"])
    assert (args.inspect_ai_targets, args.isolation_check) == (("src/a.py", "src/b/"), True)
    assert ms.parse_args([]).inspect_ai_targets == bi.DEFAULT_TARGETS
    assert not ms.parse_args([]).isolation_check
    # The offline selection stays the default; the networked one is asked for.
    assert ms.parse_args([]).inspect_ai_selection == "offline"
    assert ms.parse_args(["--inspect-ai-selection", "networked"]).inspect_ai_selection == \
        "networked"


SHARED_CACHE = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "inspect_ai"


@pytest.mark.skipif(not (SHARED_CACHE / "tiktoken-cache").is_dir(),
                    reason="no shared inspect_ai snapshot")
def test_tiktoken_cache_is_the_shared_encoding_for_both_tools(tmp_path: Path) -> None:
    import hashlib

    folder = bi.tiktoken_cache(SHARED_CACHE, tmp_path)
    (cached,) = folder.iterdir()
    # tiktoken's own check: the sha256 SOURCE.md gives, not one computed here.
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == (
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d")
    target = bi.make_target(tmp_path, ("src/a.py",), ("tests",), folder)
    env = bt.tool_env(tmp_path / "venv", tmp_path / "copy", target)
    assert env["TIKTOKEN_CACHE_DIR"] == str(folder)
    assert "TIKTOKEN_CACHE_DIR" not in bt.tool_env(
        tmp_path / "venv", tmp_path / "copy", bi.make_target(tmp_path, (), ()))


def test_a_changed_tiktoken_cache_is_one_line(tmp_path: Path) -> None:
    import gzip

    (tmp_path / "tiktoken-cache").mkdir()
    (tmp_path / "tiktoken-cache" / "fb37.gz").write_bytes(gzip.compress(b"not the ranks"))
    with pytest.raises(bi.SetupError, match=r"fb37.gz: sha256 '[0-9a-f]{64}'; expected "
                                            r"'446a9538"):
        bi.tiktoken_cache(tmp_path, tmp_path / "work")
    with pytest.raises(bi.SetupError, match=r"expected one \.gz file"):
        bi.tiktoken_cache(tmp_path / "work", tmp_path / "work")


def test_both_tools_get_the_same_files_and_tests() -> None:
    import tomllib

    targets = ("src/inspect_ai/scorer/_match.py", "src/inspect_ai/scorer/_metrics/")
    args = bi.read_pytest_args("tests/scorer\n\n# offline only\n--ignore=tests/scorer/x.py\n"
                               "--deselect=tests/scorer/t.py::test_a\n")
    assert args == ("tests/scorer", "--ignore=tests/scorer/x.py",
                    "--deselect=tests/scorer/t.py::test_a")
    metaeval = tomllib.loads(bi.metaeval_config(targets, args))["tool"]["metaeval"]["mutate"]
    assert metaeval == {"targets": list(targets), "pytest_args": list(args)}
    mutmut = tomllib.loads(bi.mutmut_config(targets, args))["tool"]["mutmut"]
    assert mutmut["source_paths"] == ["src/inspect_ai"]
    # A file stays as it is, a folder becomes mutmut's glob of what it holds.
    assert mutmut["only_mutate"] == ["src/inspect_ai/scorer/_match.py",
                                     "src/inspect_ai/scorer/_metrics/*"]
    assert mutmut["pytest_add_cli_args_test_selection"] == list(args)


def test_outside_fork_counts_the_runners_deferred_and_groups_reasons() -> None:
    report = {"timing": {"deferred": 3, "ran": 100}, "mutants": [
        {"own_process": "module-level code ran the mutated function\nmore"},
        {"own_process": "module-level code ran the mutated function"},
        {"own_process": "import cycle; a pytest process of its own took 1.7s, 1.6s of it "
                        "starting and collecting"}, {"own_process": ""}, {}]}
    deferred, ran, reasons = bi.outside_fork(report)
    assert (deferred, ran) == (3, 100)
    assert reasons == {"module-level code ran the mutated function": 2, "import cycle": 1}
    # The cost differs mutant by mutant: a reason without it groups them.
    other = {"own_process": "import cycle; a pytest process of its own took 2.0s, 1.9s of it "
                            "starting and collecting"}
    _, _, reasons = bi.outside_fork(report | {"mutants": [*report["mutants"], other]})
    assert reasons["import cycle"] == 2
    # The runner counted one more than carry a reason: it shows as unexplained.
    _, _, reasons = bi.outside_fork(report | {"timing": {"deferred": 4, "ran": 100}})
    assert reasons[""] == 1


def _summary(tool: str, wall: float, mutants: int) -> object:
    return br.Summary(tool, mutants, {}, wall, wall, wall, 1)


def test_issue_targets_pass_at_their_bounds_and_fail_past_them() -> None:
    mm = _summary("mutmut", 200.0, 800)  # 4 mutants/s
    explained = (2, 100, bi.Counter({"import cycle": 2}))
    checks = bi.target_checks(_summary("metaeval", 100.0, 600), mm, explained)
    assert [ok for _, ok, _ in checks] == [True, True, True]  # 0.5x wall, 1.5x rate, 2%
    assert checks[0][2].startswith("0.50x (100.0 s vs 200.0 s)")
    slow = bi.target_checks(_summary("metaeval", 101.0, 600), mm,
                            (3, 100, bi.Counter({"import cycle": 3})))
    assert [ok for _, ok, _ in slow] == [False, False, False]
    unexplained = bi.target_checks(_summary("metaeval", 10.0, 600), mm,
                                   (1, 100, bi.Counter({"": 1})))
    assert unexplained[2][1] is False and "1 without a reason" in unexplained[2][2]
    alone = bi.target_checks(_summary("metaeval", 10.0, 600), None, (0, 10, bi.Counter()))
    assert [ok for _, ok, _ in alone] == [None, None, True]


def test_since_target_is_the_reaching_tests_plus_ten_seconds() -> None:
    assert bi.since_check(15.0, 5.0, 12)[1] is True
    _, ok, detail = bi.since_check(15.1, 5.0, 12)
    assert ok is False and detail == "15.1 s vs 15.0 s (12 tests in 5.0 s + 10 s)"
    assert bi.since_check(3.0, None, 0)[1] is None


def test_isolation_check_names_every_status_that_parts() -> None:
    fork = {"a": "Killed", "b": "Survived", "c": "Killed"}
    assert bi.isolation_check(fork, dict(fork))[1] is True
    _, ok, detail = bi.isolation_check(fork, {"a": "Killed", "b": "Killed"})
    assert ok is False
    assert detail == ("3 mutants, 2 differ: b: fork Survived, subprocess Killed; "
                      "c: fork Killed, subprocess missing")
    assert bi.isolation_check({}, {})[1] is False  # nothing compared is no evidence
    assert bi.statuses_by_id({"mutants": [{"id": "x", "status": "Killed"}]}) == {"x": "Killed"}


SCORER = '''def match_str(value, target, ignore_case=True):
    """Doc."""

    def clean(text):
        if ignore_case:
            return text.casefold()
        return text

    if ignore_case:
        value = value.casefold()
    return value, target in value
'''


def test_since_change_is_one_line_in_one_function_and_its_tests_come_from_coverage() -> None:
    changed = bi.one_line_change(SCORER)
    # The function's own line changes, not the nested one's (whole lines compared).
    assert changed.splitlines()[8] == "    if bool(ignore_case):"
    assert changed.replace("    if bool(ignore_case):", "    if ignore_case:") == SCORER
    with pytest.raises(bt.BenchError, match="found 2"):
        bi.one_line_change(SCORER + SCORER)
    assert bi.function_span(SCORER, 5) == (4, 7)  # the inner clean, not match_str
    assert bi.function_span(SCORER, 9) == (1, 11)
    assert bi.function_span(SCORER, 20) is None
    report = {"mutants": [
        {"path": "src/p/_common.py", "line": 5, "covered_by": ["t::a", "t::b"]},
        {"path": "src/p/_common.py", "line": 7, "covered_by": ["t::b", "t::c"]},
        {"path": "src/p/_common.py", "line": 9, "covered_by": ["t::d"]},
        {"path": "src/p/_match.py", "line": 5, "covered_by": ["t::e"]}]}
    assert bi.tests_reaching(report, "p/_common.py", (4, 7)) == ["t::a", "t::b", "t::c"]
    coverage = {"ran": [
        {"file": "/x/src/p/_common.py", "line": 1, "name": "match_str", "tests": ["t::b", "t::a"]},
        {"file": "/x/src/p/_common.py", "line": 4, "name": "clean", "tests": ["t::c"]},
        {"file": "/x/src/p/_match.py", "line": 1, "name": "match", "tests": ["t::e"]}]}
    assert bi.tests_from_coverage(coverage, "p/_common.py", 1) == ["t::a", "t::b"]
    assert bi.tests_from_coverage({}, "p/_common.py", 1) == []


def test_a_missing_snapshot_exits_2_with_one_line(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = ms.main(["--target", "inspect_ai", "--work", str(tmp_path / "work"),
                    "--inspect-ai-source", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"setup failed: no constraints.txt in {tmp_path} (see --inspect-ai-source)\n"
    (tmp_path / "constraints.txt").write_text("")
    (tmp_path / "pytest_args.txt").write_text("tests\n")
    assert ms.main(["--target", "inspect_ai", "--work", str(tmp_path / "work"),
                    "--inspect-ai-source", str(tmp_path)]) == 2
    assert "no inspect_ai-*.tar.gz in" in capsys.readouterr().err


def test_the_ray_benchmark_reads_statuses_and_defaults_to_three_runs() -> None:
    bench_ray = load_benchmark("bench_ray")
    args = bench_ray.parse_args([])
    assert args.runs == 3 and args.work.name == ".work"
    stdout = json.dumps({"mutants": [{"id": "a", "status": "Killed"},
                                     {"id": "b", "status": "Survived"}]})
    assert bench_ray.statuses(stdout) == {"a": "Killed", "b": "Survived"}
