"""The mutate session: plan, run, report file, survivors against the findings file.

Most cases stand in for the runner (its own tests run real suites), so what is
checked here is the session's decisions: when nothing runs, which exit code,
which lines in which order. Two cases run a real suite, for the two ways a run
proves nothing.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from metaeval.commands import mutate_run as session
from metaeval.commands.mutate import plan_mutate
from metaeval.commands.mutate_values import Message, MutateRequest
from metaeval.errors import ExitCode, InputError
from metaeval.mutation.findings_file import accept
from metaeval.mutation.findings_file import load as load_findings
from metaeval.mutation.findings_file import save as save_findings
from metaeval.mutation.isolation.options import Isolation
from metaeval.mutation.model import MutantResult, Status
from tests.mutation.conftest import (
    PRICING,
    SURVIVOR,
    FakeRunner,
    calc_project,
    git,
    never_run,
    rendered_run,
)


def test_since_leaving_no_mutant_stops_before_running(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", never_run)
    outcome = rendered_run(MutateRequest(since_ref="HEAD", mutants_dir=Path("no_patches")))
    assert outcome.code is ExitCode.OK
    assert outcome.before == (
        Message("--since HEAD: 0 of 11 mutants on changed lines", stderr=True),
        Message("nothing to mutate: no mutant on a line changed against HEAD"))
    assert (outcome.run, outcome.report, outcome.after) == (None, None, ())
    # A stopped plan writes nothing: no report, no cache.
    assert not (shop_here / ".metaeval").exists()


def test_since_keeps_only_the_changed_function_and_plans_to_run_it(shop_here: Path) -> None:
    pricing = shop_here / PRICING
    pricing.write_text(pricing.read_text(encoding="utf-8").replace(
        "    if quantity > limit:\n", "    if quantity > limit:  # the cap\n"), encoding="utf-8")
    plan = plan_mutate(MutateRequest(since_ref="HEAD", mutants_dir=Path("no_patches"), jobs=3))
    assert plan.stop is None
    assert [m.id for m in plan.mutants] == [f"{PRICING}::clamp_quantity::negate_condition::0",
                                           SURVIVOR]
    assert plan.notes == (Message("--since HEAD: 2 of 11 mutants on changed lines",
                                  stderr=True),)
    # A flag wins over [tool.metaeval.mutate]; an unset one takes the config's value.
    assert (plan.options.jobs, plan.options.timeout_factor) == (3, 1.0)
    # The warm runner started before libcst parsed the targets; nothing ran it yet.
    assert plan.warm is not None and plan.warm.proc.poll() is None
    plan.warm.stop()
    assert plan.warm.proc.poll() is not None and not plan.warm.scratch.exists()


def test_the_warm_runner_starts_only_when_a_mutant_may_need_running(
        shop_here: Path) -> None:
    request = MutateRequest(mutants_dir=Path("no_patches"))
    first = plan_mutate(request)
    assert first.warm is not None and first.scan is not None
    first.warm.stop()
    first.scan.save()
    # Every target in the scan cache, no result in the result cache: started in the
    # plan all the same, once its mutants are known (the run only uses it).
    second = plan_mutate(request)
    assert second.warm is not None and second.results is not None
    second.warm.stop()
    for m in second.mutants:
        second.results.store(MutantResult(m, Status.KILLED, duration=0.1), None)
    second.results.save(1.0, 4.0)
    # The result cache answers every mutant: a rerun starts no process.
    third = plan_mutate(request)
    assert third.warm is None and third.results is not None
    assert all(third.results.lookup(m) is not None for m in third.mutants)
    # A changed test file makes every result stale: the warm runner is back.
    (shop_here / "tests" / "test_pricing.py").write_text(
        (shop_here / "tests" / "test_pricing.py").read_text() + "\n", encoding="utf-8")
    fourth = plan_mutate(request)
    assert fourth.warm is not None
    fourth.warm.stop()
    assert plan_mutate(MutateRequest(mutants_dir=Path("no_patches"), no_cache=True,
                                     isolation=Isolation.SUBPROCESS)).warm is None


def test_no_mutant_found_is_void_without_running(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(session, "run_mutants", never_run)
    outcome = rendered_run(MutateRequest())
    assert outcome.code is ExitCode.VOID
    assert outcome.before == (Message(
        "error: no mutant found: no targets given or configured, and no patch mutants under "
        f"{tmp_path.resolve() / 'mutants'}", stderr=True),)
    assert outcome.run is None


def test_a_finished_run_writes_its_report_and_scan_cache(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = FakeRunner(survivors=[SURVIVOR])
    monkeypatch.setattr(session, "run_mutants", runner)
    seen: list[tuple[int, int]] = []
    outcome = rendered_run(MutateRequest(paths=(f"{PRICING}:clamp_quantity",),
                                         mutants_dir=Path("no_patches")),
                           progress=lambda done, total, result: seen.append((done, total)))
    assert outcome.code is ExitCode.FINDINGS  # a survivor, and no findings file asked for
    assert seen == [(1, 2), (2, 2)]
    assert outcome.report == Path(".metaeval/mutation-report.json")
    written = json.loads((shop_here / outcome.report).read_text(encoding="utf-8"))
    statuses = {m["id"]: m["status"] for f in written["files"].values() for m in f["mutants"]}
    assert statuses == {f"{PRICING}::clamp_quantity::negate_condition::0": "Killed",
                        SURVIVOR: "Survived"}
    assert (shop_here / ".metaeval" / "mutate-scan-cache.json").is_file()
    assert (outcome.after, outcome.comparison) == ((), None)


def test_a_new_survivor_fails_against_the_baseline_and_a_known_one_does_not(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    findings = shop_here / "findings.json"
    request = MutateRequest(paths=(PRICING,), mutants_dir=Path("no_patches"),
                            baseline_path=findings, update_baseline=True, no_cache=True)
    first = rendered_run(request)
    # Writing the baseline was the point of that run: the survivor is recorded, open.
    assert first.code is ExitCode.OK
    assert first.comparison is not None and len(first.comparison.new) == 1
    assert first.after[0].text.startswith("against findings.json: 1 new, 0 expired, 0 known "
                                          "open")
    assert "new survivors (recorded as open):" in first.after[0].text
    assert first.after[1:] == (Message("findings: wrote findings.json"),)
    assert json.loads(findings.read_text(encoding="utf-8"))["findings"][0]["mutant_id"] == SURVIVOR
    git(shop_here, "add", "findings.json")

    second = rendered_run(MutateRequest(paths=(PRICING,), mutants_dir=Path("no_patches"),
                                        baseline_path=findings, no_cache=True))
    assert second.code is ExitCode.OK
    assert second.after == (Message("against findings.json: 0 new, 0 expired, 1 known open, "
                                    "0 accepted, 0 fixed"),)
    # The mirror: the same new survivor fails a run that does not update the file.
    (shop_here / "fresh.json").write_text('{"version": 1, "findings": []}\n')
    third = rendered_run(MutateRequest(paths=(PRICING,), mutants_dir=Path("no_patches"),
                                       baseline_path=Path("fresh.json"), no_cache=True))
    assert third.code is ExitCode.FINDINGS
    assert "new survivors (fail the run):" in third.after[0].text


def test_bootstrapping_a_baseline_exits_0_after_writing_it(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    findings = shop_here / "mutants" / "findings.json"  # the config's default, not there yet
    outcome = rendered_run(MutateRequest(paths=(PRICING,), mutants_dir=Path("no_patches"),
                                         update_baseline=True, no_cache=True))
    assert outcome.code is ExitCode.OK
    assert [e["mutant_id"] for e in json.loads(findings.read_text())["findings"]] == [SURVIVOR]
    assert outcome.after[-1] == Message("findings: wrote mutants/findings.json")
    # The mirror: without --update-baseline the same survivor fails the run.
    again = rendered_run(MutateRequest(paths=(PRICING,), mutants_dir=Path("no_patches"),
                                       no_cache=True))
    assert again.code is ExitCode.FINDINGS


def test_updating_keeps_failing_on_an_acceptance_past_its_expiry(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    request = MutateRequest(paths=(PRICING,), mutants_dir=Path("no_patches"),
                            baseline_path=Path("findings.json"), update_baseline=True,
                            no_cache=True)
    assert rendered_run(request).code is ExitCode.OK
    tracked = load_findings(shop_here / "findings.json")
    tracked, _ = accept(tracked, SURVIVOR, "decided by support", "Dana", dt.date(2020, 1, 1))
    save_findings(tracked, shop_here / "findings.json")
    outcome = rendered_run(request)  # an update does not renew a lapsed decision
    assert outcome.code is ExitCode.FINDINGS
    assert outcome.comparison is not None and len(outcome.comparison.expired) == 1
    assert load_findings(shop_here / "findings.json").entries[0].until == "2020-01-01"


NEGATE = f"{PRICING}::clamp_quantity::negate_condition::0"


def test_a_pull_requests_sarif_holds_its_new_survivors_and_a_full_run_every_open_one(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    findings = Path("findings.json")
    rendered_run(MutateRequest(paths=(PRICING,), mutants_dir=Path("no_patches"),
                               baseline_path=findings, update_baseline=True, no_cache=True))
    git(shop_here, "add", "findings.json")
    git(shop_here, "commit", "-qm", "the backlog: one open finding")
    pricing = shop_here / PRICING
    pricing.write_text(pricing.read_text(encoding="utf-8").replace(
        "    if quantity > limit:\n", "    if quantity > limit:  # the cap\n"), encoding="utf-8")
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR, NEGATE]))

    def sarif_ids(since_ref: str | None) -> list[str]:
        outcome = rendered_run(MutateRequest(
            paths=(PRICING,), mutants_dir=Path("no_patches"), baseline_path=findings,
            sarif_path=Path("out.sarif"), no_cache=True, since_ref=since_ref))
        assert outcome.code is ExitCode.FINDINGS  # the new survivor fails both runs
        results = json.loads((shop_here / "out.sarif").read_text())["runs"][0]["results"]
        return [r["properties"]["mutantId"] for r in results]

    assert sarif_ids(since_ref="HEAD") == [NEGATE]  # what the pull request introduced
    assert sorted(sarif_ids(None)) == sorted([NEGATE, SURVIVOR])  # the new and the backlog


def test_an_unreadable_findings_file_still_leaves_the_run_to_show(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner())
    findings = shop_here / "findings.json"
    findings.write_text("[not json", encoding="utf-8")
    outcome = rendered_run(MutateRequest(paths=(PRICING,), mutants_dir=Path("no_patches"),
                                         baseline_path=findings, no_cache=True))
    assert outcome.code is ExitCode.BAD_INPUT
    assert isinstance(outcome.findings_error, InputError)
    assert str(findings) in str(outcome.findings_error)
    assert outcome.run is not None and outcome.report is not None
    assert (shop_here / outcome.report).is_file()


def test_a_suite_failing_without_mutants_is_void_and_writes_no_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = calc_project(tmp_path, """\
        from calc import double


        def test_wrong():
            assert double(2) == 5
        """)
    monkeypatch.chdir(root)
    outcome = rendered_run(MutateRequest(report_path=Path("r.json"), no_cache=True))
    assert outcome.code is ExitCode.VOID
    (why,) = outcome.after
    assert why.stderr and why.text.startswith("error: ")
    assert "test_calc.py::test_wrong" in why.text
    assert outcome.run is None and not (root / "r.json").exists()


def test_a_run_where_no_mutant_executed_is_void_with_its_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = calc_project(tmp_path, """\
        from calc import double


        def test_double():
            assert double(2) == 4
        """)
    monkeypatch.chdir(root)
    outcome = rendered_run(MutateRequest(report_path=Path("r.json"), no_cache=True,
                                         baseline_path=root / "findings.json"))
    assert outcome.code is ExitCode.VOID
    assert outcome.after == (Message("error: no mutant ran (1 found); nothing was tested",
                                     stderr=True),)
    assert outcome.run is not None
    assert [r.status for r in outcome.run.results] == [Status.NO_COVERAGE]
    assert outcome.report == Path("r.json") and (root / "r.json").is_file()
    # A void run is never compared with the findings file.
    assert outcome.comparison is None and not (root / "findings.json").exists()
