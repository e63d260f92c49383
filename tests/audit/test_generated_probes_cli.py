"""``judge-audit --probes``, ``--write-probes`` and ``--probe-budget`` end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import Result

from metaeval.commands.judge_audit import (
    JudgeAuditPlan,
    ProbeSettings,
    load_items,
    resolve_judge,
    run_judge_audit,
)
from metaeval.importing import AllowedModules
from metaeval.judges.scales import ProbeSource
from metaeval.loaders.judge_items import load_judge_items
from tests.audit.conftest import judge_audit

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "meta_sets" / "judge"
LABELLED = ["--items", str(SETS / "pointwise.ndjson"), "--items", str(SETS / "position.ndjson")]
# Bars below 0.8: this test is about probes, not how near steady's TPR is to the bar.
DECIDABLE = ("--tpr-bar", "0.6", "--tnr-bar", "0.6")


def _audit(*args: str) -> Result:
    return judge_audit("--no-cache", *args)


@pytest.fixture(scope="module")
def biased() -> Result:
    return _audit("--judge", "biased", *LABELLED, "--probes", "generated")


@pytest.fixture(scope="module")
def steady() -> Result:
    return _audit("--judge", "steady", *LABELLED, "--probes", "generated", *DECIDABLE)


def test_biased_is_found_on_every_generated_probe_pointwise_and_pairwise(biased: Result) -> None:
    assert biased.exit_code == 1, biased.output
    for line in ("length bias: FOUND", "injection: FOUND", "pairwise length: FOUND",
                 "pairwise injection: FOUND", "controls: ok"):
        assert line in biased.output
    # 168 pointwise items: 12 length probes and 4 injection probes each
    assert ("probes (generated, seed 17): generated: 2016 length, 672 injection, "
            "12 pairwise length, 96 pairwise injection") in biased.output
    for reason in ("length bias FOUND", "injection bias FOUND", "pairwise length bias FOUND",
                   "pairwise injection bias FOUND"):
        assert f"  - {reason}" in biased.output


def test_steady_is_clean_on_every_generated_probe_and_may_gate(steady: Result) -> None:
    assert steady.exit_code == 0, steady.output
    for line in ("length bias: clean", "injection: clean", "pairwise length: clean",
                 "pairwise injection: clean", "controls: ok", "verdict: may gate"):
        assert line in steady.output
    assert "FOUND —" not in steady.output.split("controls:")[0]


def test_the_default_is_files_when_item_files_hold_probes_else_generated() -> None:
    with_files = _audit("--judge", "steady", "--items", str(SETS), "--format", "json")
    assert json.loads(with_files.output)["probes"]["source"] == "files"
    without = _audit("--judge", "steady", "--items", str(SETS / "position.ndjson"),
                     "--format", "json")
    document = json.loads(without.output)
    assert document["probes"]["source"] == "generated"
    assert document["pairwise_length"]["status"] == "clean"


def test_both_checks_each_origin_on_the_controls() -> None:
    result = _audit("--judge", "steady", "--items", str(SETS), "--probes", "both",
                    "--format", "json", *DECIDABLE)
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    probes = {c["probe"] for c in document["controls"]["checks"]}
    assert {"length", "injection", "length (generated)", "injection (generated)",
            "pairwise length (generated)", "pairwise injection (generated)"} <= probes
    origins = {(c["origin"], c["family"]) for c in document["probes"]["counts"]}
    assert ("files", "length") in origins and ("generated", "length") in origins


def test_written_probes_are_what_was_asked_and_audit_the_same_from_the_file(
        tmp_path: Path) -> None:
    written = tmp_path / "probes.ndjson"
    first = _audit("--judge", "biased", *LABELLED, "--probes", "generated", "--write-probes",
                   str(written), "--format", "json")
    records = [json.loads(line) for line in written.read_text().splitlines()]
    assert len(records) == 2016 + 672 + 12 + 96 and all(r["probe_format"] == 1 for r in records)
    assert {r["kind"] for r in records if "payload" in r} >= {"instruction", "code-block"}
    again = _audit("--judge", "biased", *LABELLED, "--items", str(written), "--probes", "files",
                   "--format", "json")
    a, b = json.loads(first.output), json.loads(again.output)
    for key in ("length", "injection", "pairwise_length", "pairwise_injection"):
        assert a[key]["status"] == b[key]["status"] == "FOUND"
        assert a[key]["p_value"] == b[key]["p_value"]
    assert b["probes"]["counts"][0]["origin"] == "files"


def test_write_probes_with_files_only_is_bad_usage(tmp_path: Path) -> None:
    result = _audit("--judge", "steady", "--items", str(SETS), "--probes", "files",
                    "--write-probes", str(tmp_path / "p.ndjson"))
    assert result.exit_code == 2 and "--write-probes: no probe was generated" in result.output


def test_write_probes_with_files_only_is_refused_before_the_cache_is_opened(
        tmp_path: Path) -> None:
    """The probes are made when the audit is planned: a flag that cannot be used stops
    it there, before the reply cache (an SQLite file) is created or a question asked."""
    cache = tmp_path / "replies.sqlite"
    result = judge_audit("--judge", "steady", "--items", str(SETS), "--probes", "files",
                         "--cache", str(cache), "--write-probes", str(tmp_path / "p.ndjson"))
    assert result.exit_code == 2 and "--write-probes: no probe was generated" in result.output
    assert not cache.exists()
    made = judge_audit("--judge", "steady", "--items", str(SETS), "--probes", "files",
                       "--cache", str(cache), "--format", "json")
    assert made.exit_code in (0, 1) and cache.exists()  # the same audit, without the flag


def test_generated_probes_need_a_live_judge(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"id": "pos-return-window", "order": "ab", "verdict": "a"}\n')
    result = _audit("--judge", "x", "--items", str(SETS), "--recorded", str(log),
                    "--probes", "generated")
    assert result.exit_code == 2 and "--probes: got 'generated'" in result.output
    budget = _audit("--judge", "x", "--items", str(SETS), "--recorded", str(log),
                    "--probe-budget", "5")
    assert budget.exit_code == 2 and "--probe-budget: applies to a live judge" in budget.output


def test_the_config_key_chooses_and_a_bad_value_is_named(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.metaeval.judge_audit]\nprobes = "both"\n')
    result = _audit("--judge", "steady", "--items", str(SETS), "--format", "json")
    assert json.loads(result.output)["probes"]["source"] == "both"
    flag = _audit("--judge", "steady", "--items", str(SETS), "--format", "json",
                  "--probes", "files")
    assert json.loads(flag.output)["probes"]["source"] == "files"  # the flag wins
    (tmp_path / "pyproject.toml").write_text('[tool.metaeval.judge_audit]\nprobes = "all"\n')
    bad = _audit("--judge", "steady", "--items", str(SETS))
    assert bad.exit_code == 2
    assert "tool.metaeval.judge_audit.probes: got 'all'; expected one of 'files'" in bad.output


CALLS: list[str] = []


def counting_judge(prompt: str) -> str:
    """A pairwise judge by prompt function: always the first; counts its calls."""
    CALLS.append(prompt)
    return "A"


def _budgeted(cache: Path, budget: int | None, notes: list[str]) -> Any:
    items = load_items([SETS / "position.ndjson"])
    return run_judge_audit(resolve_judge(JudgeAuditPlan(
        f"{__name__}:counting_judge", items, cache=cache, allowed=AllowedModules((__name__,)),
        probes=ProbeSettings(ProbeSource.GENERATED, budget=budget))), notify=notes.append)


def test_the_budget_caps_calls_deterministically_and_cached_replies_are_free(
        tmp_path: Path) -> None:
    CALLS.clear()
    notes: list[str] = []
    first = _budgeted(tmp_path / "a.sqlite", 100, notes)
    asked_labelled = 24  # 12 pairs in both orders, outside the budget
    assert len(CALLS) - asked_labelled <= 100
    plan = first.probe_plan
    assert plan.calls <= 100 and plan.dropped > 0 and plan.budget == 100
    assert notes and notes[0].startswith(f"probes: {plan.questions} question(s)")
    assert "--probe-budget 100" in notes[0]
    kinds = {f for _, f, n in plan.counts if n}
    assert kinds == {"pairwise length", "pairwise injection"}  # every family gets a share
    CALLS.clear()
    again = _budgeted(tmp_path / "b.sqlite", 100, [])  # a fresh cache: the same sample
    assert again.probe_plan.counts == plan.counts
    CALLS.clear()
    cached = _budgeted(tmp_path / "a.sqlite", 100, [])
    assert cached.probe_plan.cached >= plan.questions  # what was asked is now free
    assert cached.probe_plan.dropped < plan.dropped
    assert len(CALLS) <= 100


def test_an_unbudgeted_run_announces_every_call(tmp_path: Path) -> None:
    notes: list[str] = []
    result = _budgeted(tmp_path / "c.sqlite", None, notes)
    n = len(load_judge_items([SETS / "position.ndjson"]).pairwise)
    assert result.probe_plan.questions == n * 2 * 2 + n * 8 * 2 * 2
    assert notes == [f"probes: {result.probe_plan.questions} question(s) to the judge, 0 "
                     f"cached, {result.probe_plan.questions} call(s) to make"]


def test_recorded_verdicts_on_written_probes_are_audited_like_live_ones(tmp_path: Path) -> None:
    """Write the probes, record the biased judge's verdicts on them (as a team would
    log its own judge's), and audit from the log with no call."""
    from metaeval.audit.collect import ask_judge
    from metaeval.judges.fakes import BiasedJudge

    written = tmp_path / "probes.ndjson"
    _audit("--judge", "steady", "--items", str(SETS / "position.ndjson"), "--probes",
           "generated", "--write-probes", str(written))
    items = load_judge_items([SETS / "position.ndjson", written])
    table = ask_judge(BiasedJudge(), items)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(
        json.dumps({"id": slot.item, "order": slot.order.value, "variant": slot.variant.value,
                    "verdict": verdicts[0]}) + "\n"
        for slot, verdicts in table.decisions.items()))
    result = _audit("--judge", "my-judge", "--items", str(SETS / "position.ndjson"),
                    "--items", str(written), "--recorded", str(log), "--format", "json")
    document = json.loads(result.stdout)
    assert document["errors"] == []
    assert document["pairwise_length"]["status"] == "FOUND"
    assert document["pairwise_injection"]["status"] == "FOUND"
    assert document["probes"]["source"] == "files"


def test_a_pairwise_only_judge_is_asked_only_pairwise_probes() -> None:
    module = "tests.audit.test_pair_probes"
    items = load_items([SETS / "pointwise.ndjson", SETS / "position.ndjson"])
    audit = run_judge_audit(resolve_judge(JudgeAuditPlan(
        f"{module}:LongerJudge", items, allowed=AllowedModules((module,)),
        probes=ProbeSettings(ProbeSource.GENERATED))))
    assert audit.probe_plan is not None
    assert {f for _, f, _ in audit.probe_plan.counts} == {"pairwise length",
                                                          "pairwise injection"}
    assert audit.probes.pair_length.status.value == "FOUND"
    assert audit.probes.position.status.value == "clean"


def test_the_config_key_and_the_flag_reach_the_audit_as_a_probe_source() -> None:
    from metaeval.cli.app import judge_audit
    from metaeval.config import JudgeAuditSection
    from metaeval.judges.scales import configured_audit

    section = JudgeAuditSection(Path("pyproject.toml"), {"probes": "generated"})
    assert configured_audit(section).probes is ProbeSource.GENERATED
    assert configured_audit(JudgeAuditSection(Path("pyproject.toml"), {})).probes is None
    (option,) = [p for p in judge_audit.params if p.name == "probes"]
    context = click.Context(judge_audit)
    assert option.type_cast_value(context, "both") is ProbeSource.BOTH
    with pytest.raises(click.BadParameter, match="'all' is not one of 'files', 'generated', "
                                                 "'both'"):
        option.type_cast_value(context, "all")


def test_a_plan_whose_judge_is_not_resolved_is_refused_before_anything_runs() -> None:
    items = load_items([SETS / "position.ndjson"])
    with pytest.raises(ValueError, match="resolve_judge"):
        run_judge_audit(JudgeAuditPlan("steady", items))
    assert run_judge_audit(resolve_judge(JudgeAuditPlan("steady", items))).verdict is not None
