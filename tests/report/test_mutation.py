"""Rendering a mutation run: score, table, survivors' diffs, settings."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from metaeval.errors import InputError
from metaeval.mutation.isolation.options import Isolation
from metaeval.mutation.isolation.ran import ForkStats
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
from metaeval.mutation.run.runner import MutationRun
from metaeval.mutation.run.settings import MutateSettings, load_mutate_settings
from metaeval.mutation.score import mutation_score
from metaeval.report.mutation import (
    Shown,
    mutation_json,
    mutation_table,
    mutation_text,
    overhead_text,
    own_process_text,
)

SOURCE = "def allowed(tool):\n    return tool != 'delete'\n"


def mutant(i: int, kind: MutantKind = MutantKind.REWRITE) -> Mutant:
    if kind is MutantKind.PATCH:
        return Mutant(id=f"p{i}", kind=kind, operator="patch", path="guard.py", module="guard",
                      qualname="allowed", span=Span(1, 1, 2, 28), original=SOURCE,
                      replacement="allowed = lambda tool: True\n", target="guard:allowed",
                      breaks="The guard allows every tool.")
    return Mutant(id=f"r{i}", kind=kind, operator="flip_comparison", path="guard.py",
                  module="guard", qualname="allowed", span=Span(2, 12, 2, 28),
                  original="tool != 'delete'", replacement="tool == 'delete'",
                  mutated_source=SOURCE.replace("!=", "=="))


def run_of(*pairs: tuple[Status, MutantKind]) -> MutationRun:
    return MutationRun(tuple(MutantResult(mutant(i, kind), status)
                             for i, (status, kind) in enumerate(pairs)), 0.5, 6.5)


R, P = MutantKind.REWRITE, MutantKind.PATCH


@pytest.mark.parametrize(("statuses", "score"), [
    ((Status.KILLED, Status.TIMEOUT, Status.SURVIVED, Status.NO_COVERAGE), 0.5),
    # Ignored is out of the denominator; errors stay in it (they detected nothing).
    ((Status.KILLED, Status.IGNORED, Status.RUNTIME_ERROR, Status.COMPILE_ERROR), 1 / 3),
    ((Status.KILLED, Status.TIMEOUT), 1.0),
    ((Status.SURVIVED,), 0.0),
    ((Status.IGNORED,), None),
    ((), None),
])
def test_mutation_score(statuses: tuple[Status, ...], score: float | None) -> None:
    run = run_of(*((s, R) for s in statuses))
    assert mutation_score(run.results) == score


def test_the_table_counts_every_status_and_the_score() -> None:
    table = mutation_table(run_of((Status.KILLED, R), (Status.KILLED, P), (Status.SURVIVED, R),
                                  (Status.TIMEOUT, R)))
    rows = [line.split() for line in table.splitlines()[2:]]
    assert rows == [["Killed", "2"], ["Survived", "1"], ["NoCoverage", "0"], ["Timeout", "1"],
                    ["CompileError", "0"], ["RuntimeError", "0"], ["Ignored", "0"],
                    ["total", "4"], ["mutation", "score", "75.0%"]]


def test_the_overhead_line_splits_time_elsewhere_into_forking_and_placing() -> None:
    # Two mutants: 40 ms and 60 ms in tests, 30 ms and 10 ms outside them; of the
    # 40 ms outside, the warm process (96 MiB) spent 12 ms forking, the children
    # 8 ms putting their mutants in place.
    results = tuple(MutantResult(mutant(i), Status.KILLED, duration=d, in_tests=t)
                    for i, (d, t) in enumerate([(0.07, 0.04), (0.07, 0.06)]))
    run = MutationRun(results, 0.5, 6.5, Isolation.FORK, wall=1.25,
                      fork=ForkStats(forking=0.012, placing=0.008, resident=96 * 2**20))
    assert overhead_text(run) == (
        "fork: 2 mutants run, 0 from cache, 1.2s in all; in tests 0.1s, elsewhere 0.0s "
        "(per mutant 50.0 ms in tests, 20.0 ms elsewhere: 6.0 ms forking the warm process "
        "(96 MiB), 4.0 ms putting the mutant in place)")
    # A subprocess run forks no warm process: nothing to split.
    plain = MutationRun(results, 0.5, 6.5, Isolation.SUBPROCESS, wall=1.25)
    assert overhead_text(plain).endswith("(per mutant 50.0 ms in tests, 20.0 ms elsewhere)")


def test_the_overhead_line_says_what_the_baseline_traced_and_reused() -> None:
    results = (MutantResult(mutant(0), Status.KILLED, duration=0.07, in_tests=0.04),)
    run = MutationRun(results, 0.5, 6.5, Isolation.FORK, wall=1.25,
                      fork=ForkStats(traced_tests=3, reused_tests=40))
    assert overhead_text(run).endswith(
        "; baseline: 3 tests traced, 40 reused from a coverage map (the last run's, or --coverage)")
    beside = replace(run, fork=ForkStats(traced_tests=3, reused_tests=40, traced_beside=True))
    assert overhead_text(beside).endswith(
        "; baseline: 3 tests traced beside the mutants, 40 reused from a coverage map "
        "(the last run's, or --coverage)")


def test_the_overhead_line_says_what_was_paid_before_the_first_mutant() -> None:
    results = (MutantResult(mutant(0), Status.KILLED, duration=0.07, in_tests=0.04),)
    run = MutationRun(results, 0.5, 6.5, Isolation.FORK, wall=60.0,
                      fork=ForkStats(traced_tests=306, collected=12.74, baseline_ready=54.26))
    assert overhead_text(run).endswith(
        "; baseline: 306 tests traced, ready 54.3s after the warm process started "
        "(12.7s of it collecting)")
    # Traced beside the mutants: they waited only for collection.
    beside = replace(run, fork=ForkStats(traced_tests=3, reused_tests=40, traced_beside=True,
                                         collected=9.06))
    assert overhead_text(beside).endswith(
        "; baseline: 3 tests traced beside the mutants, 40 reused from a coverage map "
        "(the last run's, or --coverage), collected in 9.1s")
    # No warm process (subprocess isolation): nothing to say.
    assert "baseline" not in overhead_text(replace(run, fork=None,
                                                   isolation=Isolation.SUBPROCESS))


def test_survivors_show_their_diff_and_breaks_sentence(tmp_path: Path) -> None:
    (tmp_path / "guard.py").write_text(SOURCE, encoding="utf-8")
    text = mutation_text(run_of((Status.SURVIVED, R), (Status.SURVIVED, P), (Status.KILLED, R)),
                         tmp_path, None)
    assert "Survived: r0 (guard.py:2)\n--- a/guard.py\n+++ b/guard.py" in text
    assert "-    return tool != 'delete'\n+    return tool == 'delete'" in text
    assert ("Survived: p1 (guard.py:1)\n  breaks: The guard allows every tool.\n"
            "--- a/guard.py") in text
    assert "+allowed = lambda tool: True" in text
    assert "r2" not in text  # a killed mutant has no diff


def write_settings(tmp_path: Path, body: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.metaeval.mutate]\n{body}\n",
                                             encoding="utf-8")
    return tmp_path


def test_settings_default_when_absent(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    assert load_mutate_settings(tmp_path) == MutateSettings()


def test_settings_are_read(tmp_path: Path) -> None:
    root = write_settings(tmp_path, 'mutants = "faults"\npytest_args = ["-m", "not slow"]\n'
                                    "timeout_factor = 2\ntimeout_constant = 1.5\njobs = 3\n")
    assert load_mutate_settings(root) == MutateSettings(
        mutants="faults", pytest_args=("-m", "not slow"), timeout_factor=2.0,
        timeout_constant=1.5, jobs=3)


@pytest.mark.parametrize(("body", "message"), [
    ("jobs = -1", "tool.metaeval.mutate.jobs: got -1; expected an integer from 0 to 1024"),
    ("timeout_factor = 'x'", "tool.metaeval.mutate.timeout_factor: got 'x'; expected a number"),
    ("pytest_args = '-x'", "tool.metaeval.mutate.pytest_args: got '-x'; expected a list"),
    ("mutants = ''", "tool.metaeval.mutate.mutants: got ''; expected a path"),
])
def test_bad_settings_name_the_key_and_value(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_mutate_settings(write_settings(tmp_path, body))


# --- per operator ------------------------------------------------------------------------


def operator_run() -> MutationRun:
    """Three operators whose counts all differ: one detects everything, one is noisy."""
    def result(i: int, operator: str, status: Status) -> MutantResult:
        base = mutant(i, P if operator == "patch" else R)
        return MutantResult(replace(base, operator=operator), status)

    return MutationRun((
        result(0, "flip_comparison", Status.KILLED),
        result(1, "empty_string_literal", Status.SURVIVED),
        result(2, "flip_comparison", Status.TIMEOUT),
        result(3, "empty_string_literal", Status.NO_COVERAGE),
        result(4, "patch", Status.SURVIVED),
        result(5, "empty_string_literal", Status.KILLED),
        result(6, "flip_comparison", Status.IGNORED),
        result(7, "empty_string_literal", Status.RUNTIME_ERROR),
    ), 0.5, 6.5)


def test_the_table_output_has_a_row_per_operator_noisiest_first(tmp_path: Path) -> None:
    (tmp_path / "guard.py").write_text(SOURCE, encoding="utf-8")
    text = mutation_text(operator_run(), tmp_path, None)
    section = text.split("By operator:\n", 1)[1].split("\n\n", 1)[0]
    rows = [line.split() for line in section.splitlines()[2:]]
    assert rows == [
        # operator, mutants, detected (Killed + Timeout), survived, no coverage, errors,
        # ignored, score
        ["empty_string_literal", "4", "1", "1", "1", "1", "0", "25.0%"],
        ["patch", "1", "0", "1", "0", "0", "0", "0.0%"],
        ["flip_comparison", "3", "2", "0", "0", "0", "1", "100.0%"],  # Ignored: not scored
    ]
    assert section.splitlines()[0].split() == ["operator", "mutants", "detected", "survived",
                                               "no", "coverage", "errors", "ignored", "score"]
    # The status table still comes first, unchanged.
    assert text.startswith(mutation_table(operator_run()))


def test_the_json_output_counts_every_status_per_operator(tmp_path: Path) -> None:
    (tmp_path / "guard.py").write_text(SOURCE, encoding="utf-8")
    document = json.loads(mutation_json(operator_run(), tmp_path, None))
    by_operator = document["by_operator"]
    assert set(by_operator) == {"empty_string_literal", "flip_comparison", "patch"}
    noisy = by_operator["empty_string_literal"]
    assert noisy["mutants"] == 4 and noisy["score"] == 0.25
    assert noisy["counts"] == {"Killed": 1, "Survived": 1, "NoCoverage": 1, "Timeout": 0,
                               "CompileError": 0, "RuntimeError": 1, "Ignored": 0}
    quiet = by_operator["flip_comparison"]
    assert quiet["mutants"] == 3 and quiet["score"] == 1.0
    assert (quiet["counts"]["Killed"], quiet["counts"]["Timeout"],
            quiet["counts"]["Ignored"], quiet["counts"]["Survived"]) == (1, 1, 1, 0)
    assert by_operator["patch"] == {"mutants": 1, "score": 0.0, "counts": {
        "Killed": 0, "Survived": 1, "NoCoverage": 0, "Timeout": 0, "CompileError": 0,
        "RuntimeError": 0, "Ignored": 0}}
    # Per operator, the statuses add up to the run's.
    for status, total in document["counts"].items():
        assert sum(op["counts"][status] for op in by_operator.values()) == total


# --- a first run fits on a screen: the first survivors, then where the rest are ----------


def many_survivors(n: int, *, other_file_killed: int = 0) -> MutationRun:
    results = [MutantResult(replace(mutant(i), id=f"r{i}"), Status.SURVIVED) for i in range(n)]
    results += [MutantResult(replace(mutant(100 + i), id=f"k{i}", path="gate.py"),
                             Status.KILLED) for i in range(other_file_killed)]
    return MutationRun(tuple(results), 0.5, 6.5)


def test_the_text_shows_the_first_survivors_and_points_at_the_rest(tmp_path: Path) -> None:
    (tmp_path / "guard.py").write_text(SOURCE, encoding="utf-8")
    text = mutation_text(many_survivors(97), tmp_path, None, Shown(limit=5))
    assert [line for line in text.splitlines() if line.startswith("Survived: ")] == [
        f"Survived: r{i} (guard.py:2)" for i in range(5)]
    assert "5 of 97 undetected mutants shown; all of them:" in text
    for command in ("metaeval findings list", "metaeval findings show ID",
                    "metaeval mutate --show all", "metaeval mutate --html FILE"):
        assert command in text
    # Under 120 lines with 97 survivors (the first run printed 1,255).
    assert len(text.splitlines()) < 120
    # The report already written is named instead of the flag that writes one.
    assert "open out/report.html" in mutation_text(
        many_survivors(9), tmp_path, None, Shown(limit=5, html=Path("out/report.html")))


def test_every_survivor_shown_says_nothing_about_the_rest(tmp_path: Path) -> None:
    (tmp_path / "guard.py").write_text(SOURCE, encoding="utf-8")
    for shown in (Shown(limit=None), Shown(limit=5), None):
        text = mutation_text(many_survivors(5), tmp_path, None, shown)
        assert text.count("Survived: r") == 5
        assert "undetected mutants shown" not in text
    everything = mutation_text(many_survivors(12), tmp_path, None, Shown(limit=None))
    assert everything.count("Survived: r") == 12
    none = mutation_text(many_survivors(12), tmp_path, None, Shown(limit=0))
    assert none.count("Survived: r") == 0 and "0 of 12 undetected mutants shown" in none


def test_new_survivors_come_first_under_their_own_heading(tmp_path: Path) -> None:
    (tmp_path / "guard.py").write_text(SOURCE, encoding="utf-8")
    text = mutation_text(many_survivors(7), tmp_path, None,
                         Shown(limit=3, new=frozenset({"r5"})))
    heads = [line for line in text.splitlines()
             if line.startswith(("Survived: ", "New ", "Known "))]
    assert heads == ["New survivors (not in the baseline): 1", "Survived: r5 (guard.py:2)",
                     "Known survivors (in the baseline): 6, 2 shown",
                     "Survived: r0 (guard.py:2)", "Survived: r1 (guard.py:2)"]
    # must say no: nothing new, so no "new" heading; the known ones are still marked
    known = mutation_text(many_survivors(2), tmp_path, None, Shown(new=frozenset()))
    assert "New survivors" not in known
    assert "Known survivors (in the baseline): 2" in known.splitlines()
    # ... and a run not compared with a findings file has neither heading
    plain = mutation_text(many_survivors(2), tmp_path, None, Shown())
    assert "New survivors" not in plain and "Known survivors" not in plain


def test_the_table_output_has_a_row_per_file_thinnest_first(tmp_path: Path) -> None:
    (tmp_path / "guard.py").write_text(SOURCE, encoding="utf-8")
    text = mutation_text(many_survivors(2, other_file_killed=3), tmp_path, None, Shown())
    section = text.split("By file:\n", 1)[1].split("\n\n", 1)[0]
    rows = [line.split() for line in section.splitlines()[2:]]
    assert rows == [["guard.py", "2", "0", "2", "0", "0", "0", "0.0%"],
                    ["gate.py", "3", "3", "0", "0", "0", "0", "100.0%"]]


def test_the_first_survivors_shown_cover_each_function_before_a_second_of_one(
        tmp_path: Path) -> None:
    (tmp_path / "guard.py").write_text(SOURCE, encoding="utf-8")
    qualnames = ["a", "a", "a", "b", "a", "c"]
    run = MutationRun(tuple(MutantResult(replace(mutant(i), id=f"{q}{i}", qualname=q),
                                         Status.SURVIVED) for i, q in enumerate(qualnames)),
                      0.5, 6.5)
    heads = [line.split()[1] for line in mutation_text(run, tmp_path, None, Shown(limit=4))
             .splitlines() if line.startswith("Survived: ")]
    assert heads == ["a0", "b3", "c5", "a1"]
    # must say no: every survivor shown keeps them all, each once
    every = [line.split()[1] for line in mutation_text(run, tmp_path, None, Shown(limit=None))
             .splitlines() if line.startswith("Survived: ")]
    assert sorted(every) == sorted(f"{q}{i}" for i, q in enumerate(qualnames))


def test_the_mutants_in_a_process_of_their_own_are_named_up_to_five() -> None:
    def run(n: int) -> MutationRun:
        return MutationRun(tuple(MutantResult(mutant(i), Status.KILLED,
                                              own_process="executing m again raised")
                                 for i in range(n)), 0.5, 6.5)

    text = own_process_text(run(8))
    assert text.splitlines()[0] == "In a pytest process of their own (8):"
    assert len(text.splitlines()) == 7
    assert text.splitlines()[-1] == "  and 3 more (--format json: each mutant's own_process)"
    assert "more" not in own_process_text(run(5))
    assert json.loads(mutation_json(run(8), Path("."), None))["mutants"][7]["own_process"]
