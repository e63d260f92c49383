"""The result cache: a rerun with nothing changed runs nothing and reports the same."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval import __version__
from metaeval.mutation.caches.result_cache import FORMAT as RESULT_FORMAT
from metaeval.mutation.caches.result_cache import ResultCache, project_test_files
from metaeval.mutation.find import targets
from metaeval.mutation.find.operators import select_operators
from metaeval.mutation.find.scan_cache import ScanCache
from metaeval.mutation.find.targets import find_mutants
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
from tests.mutation.conftest import copy_shop

METAEVAL = str(Path(sys.executable).parent / "metaeval")
TIMING = ("time limit per mutant", "fork:")


def mutate(project: Path, cache: Path) -> str:
    done = subprocess.run([METAEVAL, "mutate", "shop/pricing.py:discount_cents", "--mutants",
                           "no_patches", "--cache", str(cache), "--report",
                           str(cache.parent / "r.json")], cwd=project, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr  # every mutant here is killed
    return done.stdout


def without_timing(table: str) -> list[str]:
    return [line for line in table.splitlines() if not line.startswith(TIMING)]


def test_a_rerun_reuses_every_result_until_a_test_file_changes(tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    (project / "no_patches").mkdir()
    cache = tmp_path / "cache" / "mutate-cache.json"
    first = mutate(project, cache)
    assert "fork: 4 mutants run, 0 from cache" in first
    second = mutate(project, cache)
    assert "fork: 0 mutants run, 4 from cache" in second
    assert without_timing(second) == without_timing(first)
    # The selected tests' file changed: every result is stale.
    tests = project / "tests" / "test_pricing.py"
    tests.write_text(tests.read_text(encoding="utf-8") + "\n\ndef test_more():\n    pass\n",
                     encoding="utf-8")
    third = mutate(project, cache)
    assert "fork: 4 mutants run, 0 from cache" in third
    assert without_timing(third) == without_timing(first)


def mutant() -> Mutant:
    return Mutant(id="calc.py::double::op::0", kind=MutantKind.REWRITE, operator="op",
                  path="calc.py", module="calc", qualname="double", span=Span(2, 5, 2, 10),
                  original="x * 2", replacement="x * 3",
                  mutated_source="def double(x):\n    return x * 3\n")


def project(tmp_path: Path) -> Path:
    (tmp_path / "calc.py").write_text("def double(x):\n    return x * 2\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text("def test_double():\n    pass\n",
                                                     encoding="utf-8")
    return tmp_path


def test_a_stored_result_is_found_again_until_the_mutated_module_changes(
        tmp_path: Path) -> None:
    root = project(tmp_path)
    cache = ResultCache(root, ("-q",))
    result = MutantResult(mutant(), Status.KILLED, killed_by=("tests/test_calc.py::test_double",),
                          covered_by=("tests/test_calc.py::test_double",), duration=0.5)
    cache.store(result, None)
    cache.save(1.0, 8.0)
    again = ResultCache(root, ("-q",))
    found = again.lookup(mutant())
    assert found is not None and found.cached
    assert (found.status, found.killed_by) == (Status.KILLED, result.killed_by)
    assert again.last_limits() == (1.0, 8.0)
    # Other settings are another key; a changed module invalidates the entry.
    assert ResultCache(root, ("-x",)).lookup(mutant()) is None
    (root / "calc.py").write_text("def double(x):\n    return 2 * x\n", encoding="utf-8")
    assert ResultCache(root, ("-q",)).lookup(mutant()) is None


def test_a_new_test_file_invalidates_a_survivor(tmp_path: Path) -> None:
    root = project(tmp_path)
    cache = ResultCache(root, ())
    cache.store(MutantResult(mutant(), Status.SURVIVED,
                             covered_by=("tests/test_calc.py::test_double",)), None)
    cache.save(1.0, 8.0)
    assert ResultCache(root, ()).lookup(mutant()) is not None
    (root / "tests" / "test_more.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
    assert ResultCache(root, ()).lookup(mutant()) is None


def test_a_survivor_is_rerun_when_any_test_file_changes_but_a_kill_is_kept(
        tmp_path: Path) -> None:
    # A new test in a file that never reached the mutant may kill it now; a kill
    # by an unchanged test of unchanged code stays a kill.
    root = project(tmp_path)
    other = root / "tests" / "test_other.py"
    other.write_text("def test_other():\n    pass\n", encoding="utf-8")
    covered = ("tests/test_calc.py::test_double",)
    survivor, killed = mutant(), Mutant(
        "calc.py::double::shift_constant::0", MutantKind.REWRITE, "shift_constant", "calc.py",
        "calc", "double", Span(2, 16, 2, 17), "2", "3", "def double(x):\n    return x * 3\n")
    cache = ResultCache(root, ())
    cache.store(MutantResult(survivor, Status.SURVIVED, covered_by=covered), None)
    cache.store(MutantResult(killed, Status.KILLED, killed_by=covered, covered_by=covered), None)
    cache.save(1.0, 8.0)
    other.write_text("from calc import double\n\ndef test_other():\n    assert double(2) == 4\n",
                     encoding="utf-8")
    again = ResultCache(root, ())
    assert again.lookup(survivor) is None
    assert again.lookup(killed) is not None


def test_who_killed_a_mutant_outlives_its_result_but_a_survivor_names_no_one(
        tmp_path: Path) -> None:
    # Only the order of the next run's tests: a kill whose test file changed is run
    # again, its killer first; a survivor has no killer to put first.
    root = project(tmp_path)
    killer = ("tests/test_calc.py::test_double",)
    survivor = Mutant("calc.py::double::op::1", MutantKind.REWRITE, "op", "calc.py", "calc",
                      "double", Span(2, 12, 2, 13), "x", "y", "def double(x):\n    return y * 2\n")
    cache = ResultCache(root, ())
    cache.store(MutantResult(mutant(), Status.KILLED, killed_by=killer, covered_by=killer), None)
    cache.store(MutantResult(survivor, Status.SURVIVED, covered_by=killer), None)
    cache.save(1.0, 8.0)
    (root / "tests" / "test_calc.py").write_text("def test_double():\n    assert True\n",
                                                 encoding="utf-8")
    again = ResultCache(root, ())
    assert again.lookup(mutant()) is None
    assert again.killers(mutant()) == killer
    assert again.killers(survivor) == ()
    assert ResultCache(root, ("-x",)).killers(mutant()) == ()  # another run's settings


def test_a_corrupt_cache_file_is_an_empty_cache(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".metaeval").mkdir()
    (root / ".metaeval" / "mutate-cache.json").write_text("{not json", encoding="utf-8")
    cache = ResultCache(root, ())
    assert cache.lookup(mutant()) is None
    cache.save(0.0, 0.0)  # rewritten whole


def test_test_files_leave_out_virtual_environments_and_hidden_directories(
        tmp_path: Path) -> None:
    for name in ("tests/test_a.py", "tests/conftest.py", "pkg/b_test.py", ".venv/test_x.py",
                 "venv/lib/test_y.py", "pkg/helper.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    assert project_test_files(tmp_path) == ("pkg/b_test.py", "tests/conftest.py", "tests/test_a.py")


def test_a_rerun_finds_the_same_mutants_without_parsing_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path)
    scan = ScanCache(root)
    first = find_mutants(["calc.py"], root, (), scan)
    scan.save()
    assert first

    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(targets, "_scan", no_parse)
    assert find_mutants(["calc.py"], root, (), ScanCache(root)) == first
    # A changed module is parsed again.
    (root / "calc.py").write_text("def double(x):\n    return x + x\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="parsed again"):
        find_mutants(["calc.py"], root, (), ScanCache(root))


def test_the_scan_cache_knows_every_target_only_when_each_reads_as_scanned(
        tmp_path: Path) -> None:
    # What the plan asks before starting the warm runner early: a rerun where the
    # scan cache knows every target may run nothing at all.
    root = project(tmp_path)
    assert not ScanCache(root).knows_every(["calc.py"], root, (), False)
    scan = ScanCache(root)
    find_mutants(["calc.py"], root, (), scan)
    scan.save()
    assert ScanCache(root).knows_every(["calc.py"], root, (), False)
    assert not ScanCache(root).knows_every(["calc.py"], root, (), True)
    assert not ScanCache(root).knows_every(["calc.py"], root, ["drop_call"], False)
    (root / "calc.py").write_text("def double(x):\n    return x + x\n", encoding="utf-8")
    assert not ScanCache(root).knows_every(["calc.py"], root, (), False)


def test_a_cached_scan_is_not_reused_across_the_message_strings_option(tmp_path: Path) -> None:
    (tmp_path / "gate.py").write_text(
        'def check(role):\n    if role != "admin":\n        raise Denied("not allowed")\n',
        encoding="utf-8")
    source = (tmp_path / "gate.py").read_text(encoding="utf-8")
    scan = ScanCache(tmp_path)
    quiet = find_mutants(["gate.py"], tmp_path, ["empty_string_literal"], scan)
    scan.save()
    cached = ScanCache(tmp_path)
    chosen = select_operators(["empty_string_literal"])
    assert cached.knows(source, path="gate.py", module="gate", operators=chosen)
    assert not cached.knows(source, path="gate.py", module="gate", operators=chosen,
                            message_strings=True)
    loud = find_mutants(["gate.py"], tmp_path, ["empty_string_literal"], cached,
                        message_strings=True)
    assert [m.original for m in quiet] == ['"admin"']
    assert [m.original for m in loud] == ['"admin"', '"not allowed"']


DEEP = "[" * 1000 + "]" * 1000
POISON = {
    "too deep": DEEP.encode(),
    "not JSON": b"{not json",
    "not UTF-8": b'{"format": 1, "caf\xe9": 1}',
    "a repeated key": b'{"format": 1, "format": 1, "entries": {}}',
    "not an object": b"[]",
    "entries not an object": b'{"format": 1, "version": "x", "entries": [], "baseline": 1, '
                             b'"timeout": 1}',
    "limits not numbers": b'{"format": 1, "entries": {}, "baseline": "nan", "timeout": 1}',
    # OverflowError out of math.isfinite (found by tests/fuzz).
    "limits too large": b'{"format": 1, "entries": {}, "baseline": 1' + b"0" * 400
                        + b', "timeout": 1}',
}


def only_warning(stderr: str, path: Path) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"warning: {path}: ") and "empty cache" in lines[0]
    return lines[0]


@pytest.mark.parametrize("poison", list(POISON))
def test_an_unreadable_result_cache_is_cold_with_one_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], poison: str) -> None:
    root = project(tmp_path)
    path = root / ".metaeval" / "mutate-cache.json"
    path.parent.mkdir()
    # Each cache's own format, so that the bytes are read, not dropped as another
    # format's (which is no warning: an upgrade, not damage).
    path.write_bytes(POISON[poison].replace(b'"format": 1', b'"format": %d' % RESULT_FORMAT))
    cache = ResultCache(root, ())
    assert cache.lookup(mutant()) is None and cache.last_limits() == (0.0, 0.0)
    only_warning(capsys.readouterr().err, path)
    cache.store(MutantResult(mutant(), Status.KILLED, killed_by=("t",), covered_by=("t",)), None)
    cache.save(1.0, 8.0)  # rewritten whole, and read again without a word
    assert ResultCache(root, ()).lookup(mutant()) is not None
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("poison", [p for p in POISON if not p.startswith("limits")])
def test_an_unreadable_scan_cache_is_cold_with_one_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], poison: str) -> None:
    root = project(tmp_path)
    path = root / ".metaeval" / "mutate-scan-cache.json"
    path.parent.mkdir()
    path.write_bytes(POISON[poison].replace(b'"version": "x"', b'"version": "%s"'
                                            % __version__.encode()))
    scan = ScanCache(root)
    assert scan.entries == {}
    only_warning(capsys.readouterr().err, path)
    assert find_mutants(["calc.py"], root, (), scan)


def test_a_missing_or_outdated_cache_is_cold_without_a_word(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path)
    ResultCache(root, ())
    ScanCache(root)
    (root / ".metaeval").mkdir()
    (root / ".metaeval" / "mutate-cache.json").write_text('{"format": 0}', encoding="utf-8")
    (root / ".metaeval" / "mutate-scan-cache.json").write_text(
        '{"format": 1, "version": "0.0.1", "entries": {}}', encoding="utf-8")
    ResultCache(root, ())
    ScanCache(root)
    assert capsys.readouterr().err == ""


def test_a_damaged_scan_entry_is_scanned_again(tmp_path: Path) -> None:
    root = project(tmp_path)
    scan = ScanCache(root)
    first = find_mutants(["calc.py"], root, (), scan)
    scan.save()
    path = root / ".metaeval" / "mutate-scan-cache.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    for entry in document["entries"].values():
        entry["mutants"][0]["span"]["start_line"] = "two"  # a Span that would crash later
        entry["mutants"][-1]["qualname"] = ["double"]
    path.write_text(json.dumps(document), encoding="utf-8")
    assert find_mutants(["calc.py"], root, (), ScanCache(root)) == first


def test_mutate_with_a_poisoned_cache_runs_cold_and_warns_once(tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    (project / "no_patches").mkdir()
    cache = tmp_path / "cache" / "mutate-cache.json"
    cache.parent.mkdir()
    cache.write_text(DEEP, encoding="utf-8")
    cache.with_name("mutate-scan-cache.json").write_text(DEEP, encoding="utf-8")
    done = subprocess.run([METAEVAL, "mutate", "shop/pricing.py:discount_cents", "--mutants",
                           "no_patches", "--cache", str(cache), "--report",
                           str(tmp_path / "r.json")], cwd=project, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fork: 4 mutants run, 0 from cache" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 2 and "Traceback" not in done.stderr
    assert "fork: 0 mutants run, 4 from cache" in mutate(project, cache)  # rewritten, good again


def _poisoned(root: Path, name: str) -> None:
    """The cache at ``root`` with the stored entry's deps naming ``name`` too."""
    path = root / ".metaeval" / "mutate-cache.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    for entry in document["entries"].values():
        entry["deps"][name] = "0" * 64
    path.write_text(json.dumps(document), encoding="utf-8")


@pytest.mark.parametrize("name", ["/dev/zero", "../outside.py", "tests/pipe.py"])
def test_a_dependency_that_is_no_regular_file_is_a_miss_never_a_read(
        tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    # A cache comes from another job: "/dev/zero" as a dependency to hash would be
    # read until memory ran out, a fifo until a writer came.
    (tmp_path / "p").mkdir()
    root = project(tmp_path / "p")
    os.mkfifo(root / "tests" / "pipe.py")
    (tmp_path / "outside.py").write_text("x = 1\n", encoding="utf-8")
    cache = ResultCache(root, ("-q",))
    cache.store(MutantResult(mutant(), Status.KILLED, killed_by=("tests/test_calc.py::t",),
                             covered_by=("tests/test_calc.py::t",), duration=0.5), None)
    cache.save(1.0, 8.0)
    assert ResultCache(root, ("-q",)).lookup(mutant()) is not None  # the "no": a hit
    capsys.readouterr()
    _poisoned(root, name)
    assert ResultCache(root, ("-q",)).lookup(mutant()) is None
    warning = capsys.readouterr().err
    assert f"deps: {name!r}" in warning and "counted as changed" in warning


def test_a_dependency_outside_the_project_by_absolute_path_still_hits(tmp_path: Path) -> None:
    # metaeval records the files outside the project its tests ran by absolute path.
    (tmp_path / "p").mkdir()
    root = project(tmp_path / "p")
    (tmp_path / "lib.py").write_text("x = 1\n", encoding="utf-8")
    cache = ResultCache(root, ("-q",))
    cache.store(MutantResult(mutant(), Status.KILLED, killed_by=("tests/test_calc.py::t",),
                             covered_by=("tests/test_calc.py::t",), duration=0.5), None)
    cache.save(1.0, 8.0)
    path = root / ".metaeval" / "mutate-cache.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    lib = str(tmp_path / "lib.py")
    for entry in document["entries"].values():
        entry["deps"][lib] = hashlib.sha256(b"x = 1\n").hexdigest()
    path.write_text(json.dumps(document), encoding="utf-8")
    assert ResultCache(root, ("-q",)).lookup(mutant()) is not None
    (tmp_path / "lib.py").write_text("x = 2\n", encoding="utf-8")
    assert ResultCache(root, ("-q",)).lookup(mutant()) is None


def test_a_cache_linked_to_a_device_is_a_cold_cache_with_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from metaeval.mutation.cache_files import read_cache

    (tmp_path / "mutate-cache.json").symlink_to("/dev/zero")
    assert read_cache(tmp_path / "mutate-cache.json") is None
    assert "a character device" in capsys.readouterr().err
def _saved_entry(root: Path) -> tuple[Path, dict[str, object]]:
    cache = ResultCache(root, ())
    cache.store(MutantResult(mutant(), Status.KILLED, killed_by=("t",), covered_by=("t",),
                             duration=0.5, in_tests=0.25), None)
    cache.save(1.0, 8.0)
    path = root / ".metaeval" / "mutate-cache.json"
    return path, json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("field", "value", "named"), [
    ("duration", 1e308, "result.duration: got 1e+308; expected a number of seconds"),
    ("duration", -1e9, "result.duration: got -1000000000.0"),
    ("in_tests", "0.5", "result.in_tests: got '0.5'"),
    ("status", "Bogus", "result.status: got 'Bogus'; expected one of"),
    # Settled without running, never cached: an entry saying so was not written by a run.
    ("status", "Ignored", "result.status: got 'Ignored'"),
    # Found by the fuzz suite: a list is unhashable, and was a TypeError.
    ("status", ["Killed"], "result.status: got ['Killed']"),
    ("killed_by", "t", "result.killed_by: got 't'; expected a list of test ids"),
    ("detail", None, "result.detail: got None"),
])
def test_an_entry_out_of_range_makes_the_whole_cache_cold_with_one_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object,
        named: str) -> None:
    root = project(tmp_path)
    path, document = _saved_entry(root)
    assert ResultCache(root, ()).lookup(mutant()) is not None  # as written: trusted
    assert capsys.readouterr().err == ""
    entries = document["entries"]
    assert isinstance(entries, dict)
    (key, entry), = entries.items()
    entry["result"][field] = value  # the key: 64 hex digits, named by its first 40
    path.write_text(json.dumps(document), encoding="utf-8")
    cache = ResultCache(root, ())
    assert cache.lookup(mutant()) is None and cache.last_limits() == (0.0, 0.0)
    line = only_warning(capsys.readouterr().err, path)
    assert f"entries.{key[:37]}... (64 characters).{named}" in line


def test_limits_out_of_range_make_the_cache_cold(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path)
    path, document = _saved_entry(root)
    document["timeout"] = 1e308
    path.write_text(json.dumps(document), encoding="utf-8")
    assert ResultCache(root, ()).lookup(mutant()) is None
    assert "baseline and timeout: got 1e+308" in only_warning(capsys.readouterr().err, path)


def test_what_a_run_measured_beyond_the_range_is_saved_within_it(tmp_path: Path) -> None:
    # Its own file must read back: a mutant that ran two days is stored as one day.
    root = project(tmp_path)
    cache = ResultCache(root, ())
    cache.store(MutantResult(mutant(), Status.TIMEOUT, covered_by=("t",),
                             duration=2 * 86400.0), None)
    cache.save(3 * 86400.0, float("inf"))
    again = ResultCache(root, ())
    found = again.lookup(mutant())
    assert found is not None and found.duration == 86400.0
    assert again.last_limits() == (86400.0, 86400.0)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                   check=True, capture_output=True)


def test_a_cache_git_tracks_is_ignored_with_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path)
    path, _ = _saved_entry(root)
    scan = ScanCache(root)
    find_mutants(["calc.py"], root, (), scan)
    scan.save()
    _git(root, "init", "-q")
    # In the repository, not tracked (.metaeval/ is git-ignored): this machine's own.
    assert ResultCache(root, ()).lookup(mutant()) is not None
    assert ScanCache(root).entries
    assert capsys.readouterr().err == ""
    # Force-added to the branch: whoever wrote the branch wrote every result in it.
    _git(root, "add", "-f", ".metaeval")
    assert ResultCache(root, ()).lookup(mutant()) is None
    assert "tracked by git" in only_warning(capsys.readouterr().err, path)
    assert ScanCache(root).entries == {}
    only_warning(capsys.readouterr().err, root / ".metaeval" / "mutate-scan-cache.json")


def test_mutate_runs_every_mutant_when_the_cache_came_with_the_branch(tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    (project / "no_patches").mkdir()
    cache = project / ".metaeval" / "mutate-cache.json"
    assert "fork: 4 mutants run, 0 from cache" in mutate(project, cache)
    _git(project, "init", "-q")
    _git(project, "add", "-f", str(cache))
    done = subprocess.run([METAEVAL, "mutate", "shop/pricing.py:discount_cents", "--mutants",
                           "no_patches", "--cache", str(cache), "--report",
                           str(tmp_path / "r.json")], cwd=project, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fork: 4 mutants run, 0 from cache" in done.stdout
    assert f"warning: {cache}: tracked by git" in done.stderr


@pytest.mark.parametrize(("where", "value", "named"), [
    ("start_line", -1, "mutants[0].span: got"),
    ("end_column", 10**400, "mutants[0].span: got"),
    ("start_line", True, "mutants[0].span: got"),
])
def test_a_scan_entry_out_of_range_makes_the_scan_cache_cold_with_one_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, value: object,
        named: str) -> None:
    root = project(tmp_path)
    scan = ScanCache(root)
    first = find_mutants(["calc.py"], root, (), scan)
    scan.save()
    assert ScanCache(root).entries and capsys.readouterr().err == ""  # as written: read
    path = root / ".metaeval" / "mutate-scan-cache.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    entry = next(iter(document["entries"].values()))
    entry["mutants"][0]["span"][where] = value
    path.write_text(json.dumps(document), encoding="utf-8")
    again = ScanCache(root)
    assert again.entries == {}
    line = only_warning(capsys.readouterr().err, path)
    assert "not a scan cache: entries." in line and named in line
    assert find_mutants(["calc.py"], root, (), again) == first
