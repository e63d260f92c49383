"""One baseline shared by shards: ``--trace-only --write-coverage`` and ``--coverage``.

End to end on the fixture shop (each run a few seconds): a traced file makes a
run trace no test and changes no status; 4 shards reading it merge to the single
run; a file for another plan, or one that is not a map, is refused with exit 2.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from metaeval.config import load_config
from metaeval.errors import InputError
from metaeval.mutation import plan as plan_module
from metaeval.mutation.caches.coverage_cache import FORMAT, CoverageMap
from metaeval.mutation.caches.coverage_file import (
    load_coverage_file,
    read_coverage_file,
    write_coverage_file,
)
from metaeval.mutation.fork.parent import WarmStart, start_warm
from metaeval.mutation.isolation.options import RunOptions
from metaeval.mutation.plan import PlanSettings, plan
from metaeval.mutation.wire import CodeRun, Reuse
from tests.mutation.conftest import copy_shop, mutate_in, statuses, tree_digest


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """The shop, its --trace-only coverage file, and a plain run's statuses."""
    scratch = tmp_path_factory.mktemp("coverage-file")
    project = copy_shop(scratch)
    before = tree_digest(project)
    done = mutate_in(project, "--trace-only", "--write-coverage", str(scratch / "cov.json"))
    assert done.returncode == 0, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line == (f"--trace-only: 6 tests traced, 0 reused; the coverage map for the plan of "
                    f"16 mutants is in {scratch / 'cov.json'}")
    assert "Killed" not in done.stdout and "fork:" not in done.stdout  # no mutant ran
    plain = mutate_in(project, "--format", "json", "--report", str(scratch / "plain.json"))
    assert plain.returncode == 1, plain.stderr
    document = json.loads(plain.stdout)
    assert document["timing"]["traced_tests"] == 6
    # nothing of the project's changed; .metaeval/ holds the last run's survivors
    assert {k: v for k, v in tree_digest(project).items()
            if not k.startswith(".metaeval/")} == before
    return project, scratch / "cov.json", statuses(document)


# A whole mutate run (seconds of wall time): in CI's slow step, not the README's run.
@pytest.mark.slow
def test_a_run_with_the_coverage_file_traces_no_test_and_changes_no_status(
        traced: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    project, cov, want = traced
    # In another checkout of the same commit: the file names the project's files from
    # its root, so its records hold there too.
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(project, elsewhere)
    done = mutate_in(elsewhere, "--coverage", str(cov), "--format", "json")
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    # What the run's last line says too: "baseline: 0 tests traced, 6 reused".
    assert (document["timing"]["traced_tests"], document["timing"]["reused_tests"]) == (0, 6)
    assert statuses(document) == want
    text = mutate_in(elsewhere, "--coverage", str(cov))
    assert "baseline: 0 tests traced, 6 reused from a coverage map" in text.stdout


@pytest.mark.slow  # five mutate runs (CI: pytest -m slow)
def test_four_shards_reading_it_merge_to_the_single_run(
        traced: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    project, cov, want = traced
    for k in (1, 2, 3, 4):
        done = mutate_in(project, "--shard", f"{k}/4", "--coverage", str(cov), "--format", "json",
                       "--shard-out", str(tmp_path / f"out/s{k}"),
                       "--report", str(tmp_path / f"r{k}.json"))
        assert done.returncode in (0, 1), done.stderr
        if done.stdout.strip():  # a shard whose share runs: nothing traced again
            assert json.loads(done.stdout)["timing"]["traced_tests"] == 0
    merged = mutate_in(project, "--merge", str(tmp_path / "out"), "--format", "json")
    assert merged.returncode == 1, merged.stderr
    assert statuses(json.loads(merged.stdout)) == want
    shutil.rmtree(tmp_path / "out" / "s3")
    missing = mutate_in(project, "--merge", str(tmp_path / "out"))
    assert missing.returncode == 3
    assert "shard 3/4 is missing (no shard-3-of-4.json)" in missing.stderr


def test_a_file_traced_for_another_plan_exits_2_naming_both_hashes(
        traced: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    project, cov, _ = traced
    written = json.loads(cov.read_text())["plan_hash"]
    # Mutating message strings too is another plan: more mutants.
    done = mutate_in(project, "--coverage", str(cov), "--message-strings")
    assert done.returncode == 2
    assert f"error: --coverage: {cov}: field 'plan_hash': got {written!r}; expected '" \
        in done.stderr
    assert "Traceback" not in done.stderr and "Killed" not in done.stdout


@pytest.mark.parametrize(("text", "expected"), [
    ("{", "cannot read it as JSON"),
    ("[]", "got []; expected an object written by metaeval mutate --write-coverage"),
    ('{"plan_hash": "x"}', "field 'salt' is missing"),
])
def test_a_malformed_file_exits_2_naming_it(
        traced: tuple[Path, Path, dict[str, str]], tmp_path: Path, text: str,
        expected: str) -> None:
    project, _, _ = traced
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    done = mutate_in(project, "--coverage", str(bad))
    assert done.returncode == 2
    assert f"error: --coverage: {bad}: " in done.stderr and expected in done.stderr
    assert "Traceback" not in done.stderr


def test_the_plan_reads_the_file_once_and_its_warm_runner_reuses_what_it_read(
        traced: tuple[Path, Path, dict[str, str]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The warm runner reused the map by reading the file a second time: gone (or
    # changed) by then, its six records were lost and every test traced again.
    project, cov, _ = traced
    mine = tmp_path / "cov.json"
    shutil.copy(cov, mine)
    started: list[WarmStart] = []

    def start_once_the_file_is_gone(options: RunOptions, packages: tuple[str, ...]
                                    ) -> WarmStart:
        mine.unlink()
        started.append(start_warm(options, packages))
        return started[-1]

    monkeypatch.chdir(project)
    monkeypatch.setattr(plan_module, "start_warm", start_once_the_file_is_gone)
    made = plan(PlanSettings(no_cache=True, coverage_path=mine), load_config(project))
    try:
        assert made.warm is not None and [made.warm] == started
        assert made.warm.spec.reuse_path, "the warm runner was given no records to reuse"
        reuse = Reuse.read(Path(made.warm.spec.reuse_path))
        assert (len(reuse.tests), reuse.stale) == (6, 0)
    finally:
        for warm in started:
            warm.stop()


def test_negative_test_times_exit_2_instead_of_turning_survivors_into_timeouts(
        traced: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    # -1e9 seconds per test made each mutant's limit negative: the shop's two
    # survivors became detected Timeouts and the score rose from 64.3% to 85.7%.
    project, cov, _ = traced
    document = json.loads(cov.read_text())
    document["tests"] = {test: -1e9 for test in document["tests"]}
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(document))
    done = mutate_in(project, "--coverage", str(forged))
    assert done.returncode == 2, done.stdout
    assert f"error: --coverage: {forged}: field 'tests." in done.stderr
    assert "got -1000000000.0; expected a number of seconds from 0 to 86400" in done.stderr
    assert "Timeout" not in done.stdout and "Traceback" not in done.stderr


def test_trace_only_needs_a_file_and_fork_isolation(tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    done = mutate_in(project, "--trace-only")
    assert done.returncode == 2 and "give --write-coverage FILE" in done.stderr
    done = mutate_in(project, "--write-coverage", "c.json")
    assert done.returncode == 2 and "is written by --trace-only" in done.stderr
    done = mutate_in(project, "--trace-only", "--write-coverage", "c.json",
                   "--isolation", "subprocess")
    assert done.returncode == 2 and "need fork isolation" in done.stderr
    assert not (project / "c.json").exists()


# --- the file, field by field ----------------------------------------------------------


def _written(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("def f():\n    return 1\n")
    (tmp_path / "pyproject.toml").write_text("")
    cmap = CoverageMap(("pkg",), (), (CodeRun("pkg.m", str(tmp_path / "pkg" / "m.py"), 1, "f",
                                              ("tests/test_m.py::test_f",),
                                              (((2,), (0,)),)),),
                       {"tests/test_m.py::test_f": 0.5}, ("tests/test_m.py::test_f",))
    path = tmp_path / "cov.json"
    write_coverage_file(path, cmap, "abc", tmp_path)
    return path


def test_the_file_reads_back_with_its_plan_packages_and_relative_files(tmp_path: Path) -> None:
    path = _written(tmp_path)
    found = read_coverage_file(path, "abc")
    assert (found.plan, found.packages, found.pytest_args, found.tests) == ("abc", ("pkg",), (), 1)
    assert json.loads(path.read_text())["ran"][0]["file"] == "pkg/m.py"


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("plan_hash", 7, "field 'plan_hash': got 7; expected a plan hash"),
    ("salt", "[1]", "field 'salt': got '[1]'; expected [format, metaeval version"),
    ("salt", json.dumps([FORMAT, "0.0.0", ["pkg"], []]),
     "expected a map written by this metaeval"),
    ("tests", [], "field 'tests': got []; expected an object of test id to seconds"),
    ("tests", {"t": "slow"}, "field 'tests.t': got 'slow'; expected a number of seconds"),
    # A time sets the limit of every mutant the test runs: below 0 a survivor would be
    # a detected Timeout; 1e308 (finite, but twice is infinity) a limit never reached.
    ("tests", {"t": -1e9}, "field 'tests.t': got -1000000000.0; expected a number of "
                           "seconds from 0 to 86400"),
    ("tests", {"t": 1e308}, "field 'tests.t': got 1e+308; expected a number of seconds"),
    ("tests", {"t": 10**400}, "field 'tests.t': got 1000"),
    ("others", {"t": -1}, "field 'others.t': got -1; expected a number of seconds"),
    ("digests", [], "field 'digests': got []; expected an object of file name"),
    ("ran", [{"module": "m"}], "field 'ran[0].file': missing"),
    ("ran", [{"module": "m", "file": "f", "line": -1, "name": "f", "tests": []}],
     "field 'ran[0].line': got -1; expected a line number"),
    # An index past the record's tests was an IndexError in the middle of the run.
    ("ran", [{"module": "m", "file": "f", "line": 1, "name": "f", "tests": ["t"],
              "lines": [[[2], [1]]]}],
     "field 'ran[0].lines[0][1][0]': got 1; expected an index into this record's 1 tests"),
    ("ran", [{"module": "m", "file": "f", "line": 1, "name": "f", "tests": ["t"],
              "lines": [[[2.5], [0]]]}], "field 'ran[0].lines[0][0][0]': got 2.5"),
    ("ran", [{"module": "m", "file": "f", "line": 1, "name": "f", "tests": ["t"],
              "at_import": "yes"}],
     "field 'ran[0].at_import': got 'yes'; expected true or false"),
    ("shapes", {"pkg/m.py": {"skeleton": "x"}}, "field 'shapes.pkg/m.py.functions'"),
    ("shapes", {"pkg/m.py": {"skeleton": "x", "functions": {"f": [1, 10**9, "d"]}}},
     "field 'shapes.pkg/m.py.functions.f[1]': got 1000000000; expected a line number"),
])
def test_each_bad_field_is_named_with_what_was_expected(
        tmp_path: Path, field: str, value: object, expected: str) -> None:
    path = _written(tmp_path)
    document = json.loads(path.read_text())
    document[field] = value
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=r"^--coverage: ") as caught:
        load_coverage_file(path)
    assert str(path) in str(caught.value) and expected in str(caught.value)


def test_the_file_is_read_as_untrusted_json(tmp_path: Path) -> None:
    # A plan hash given twice (the last would silently win) and a NaN time are
    # refused while parsing, naming the file and what was wrong.
    path = _written(tmp_path)
    text = path.read_text()
    path.write_text('{"plan_hash": "other", ' + text[1:])
    with pytest.raises(InputError, match="plan_hash: the key appears twice") as caught:
        load_coverage_file(path)
    assert str(path) in str(caught.value)
    document = json.loads(text)
    test = next(iter(document["tests"]))
    path.write_text(text.replace(json.dumps(test) + ": ", json.dumps(test) + ": NaN, \"x\": ", 1))
    with pytest.raises(InputError, match="NaN is not a JSON number"):
        load_coverage_file(path)


def test_another_plan_is_refused_with_both_hashes(tmp_path: Path) -> None:
    path = _written(tmp_path)
    assert read_coverage_file(path, "abc").plan == "abc"  # the same file, the right plan
    with pytest.raises(InputError, match="field 'plan_hash': got 'abc'; expected 'abd'"):
        read_coverage_file(path, "abd")


def test_with_no_mutant_on_changed_lines_the_file_is_an_empty_map(tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    cov = tmp_path / "cov.json"
    done = mutate_in(project, "--since", "HEAD", "--trace-only", "--write-coverage", str(cov))
    assert done.returncode == 0, done.stderr
    assert f"nothing to mutate, no test traced; an empty coverage map for the plan is in {cov}" \
        in done.stderr
    assert read_coverage_file(cov, json.loads(cov.read_text())["plan_hash"]).tests == 0
    shard = mutate_in(project, "--since", "HEAD", "--shard", "1/2", "--coverage", str(cov),
                    "--shard-out", str(tmp_path / "out"))
    assert shard.returncode == 0, shard.stderr  # its plan matches; nothing to run
