from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.contract import JsonObject
from metaeval.errors import InputError
from metaeval.gate import Bar, BarStatus, Results, decide, load_results, parse_bars

REPO = Path(__file__).resolve().parent.parent

META_EVAL: JsonObject = {
    "checks": [{"name": "refund_issued", "tpr": 1.0, "tnr": 0.8, "kappa": 0.75}],
    "evaluator": {"name": "evaluator", "kappa": 0.87}}
AUDIT: JsonObject = {"judge": {"name": "gpt-judge", "version": "abc123"},
         "agreement": {"pointwise": {"kappa": {"value": 0.5, "reason": ""}}}}
MUTATE: JsonObject = {"counts": {"Killed": 9, "Survived": 1}, "score": 0.9, "mutants": []}


def results() -> Results:
    return Results(META_EVAL, {"gpt-judge": AUDIT}, MUTATE)


def statuses(bars: list[Bar], calibrated: set[str] | None = None) -> list[BarStatus]:
    return [r.status for r in decide(bars, results(), calibrated or set())]


def test_bars_pass_and_fail_on_the_values_in_the_results() -> None:
    assert statuses([Bar("meta-eval:refund_issued.tpr", min=0.9),
                     Bar("meta-eval:refund_issued.tnr", min=0.9),
                     Bar("meta-eval:evaluator.kappa", min=0.87),
                     Bar("mutate:score", min=0.95),
                     Bar("mutate:counts.Survived", max=0)]) == [
        BarStatus.PASS, BarStatus.FAIL, BarStatus.PASS, BarStatus.FAIL, BarStatus.FAIL]


def test_a_missing_metric_fails() -> None:
    decided = decide([Bar("meta-eval:refund_isued.tpr", min=0.5),
                      Bar("mutate:nothing", min=0)], results(), set())
    assert [r.status for r in decided] == [BarStatus.MISSING, BarStatus.MISSING]
    assert all(r.status.fails for r in decided)
    assert decide([Bar("mutate:score", min=0)], Results(None, {}, None), set())[0].status \
        is BarStatus.MISSING


def test_judge_metrics_are_enforced_only_for_a_calibrated_identity() -> None:
    bar = Bar("judge-audit:gpt-judge.agreement.pointwise.kappa", min=0.6)
    (reported,) = decide([bar], results(), {"other-version"})
    assert reported.status is BarStatus.REPORTED and not reported.status.fails
    assert "abc123 has no calibration entry" in reported.detail
    assert statuses([bar], {"abc123"}) == [BarStatus.FAIL]


@pytest.mark.parametrize(("table", "words"), [
    ({"evaluator.kappa": 0.8}, "not a metric name"),
    ({"meta-eval:evaluator.kappa": "0.8"}, "expected a number (a minimum)"),
    ({"meta-eval:evaluator.kappa": {"least": 0.8}}, ".least: unknown key; expected min or max"),
    ({"meta-eval:evaluator.kappa": {"minimum": 0.8}}, "did you mean 'min'?"),
    ({"meta_eval:evaluator.kappa": 0.8}, "did you mean 'meta-eval'?"),
    ({"judge:x.kappa": 0.8}, "SOURCE one of meta-eval, judge-audit, mutate"),
])
def test_bad_bars_are_named(table: dict[str, object], words: str) -> None:
    with pytest.raises(InputError, match=r"tool\.metaeval\.gate") as caught:
        parse_bars(table, "pyproject.toml: tool.metaeval.gate")
    assert words in str(caught.value)


def test_a_number_too_large_for_a_float_is_no_bar_and_no_metric() -> None:
    # math.isfinite() of a 400-digit int raised OverflowError (found by tests/fuzz).
    with pytest.raises(InputError, match="expected a number"):
        parse_bars({"mutate:score": 10**400}, "pyproject.toml: tool.metaeval.gate")
    huge = Results(None, {}, {"score": 10**400})
    (decided,) = decide([Bar("mutate:score", min=0.5)], huge, set())
    assert decided.status is BarStatus.MISSING and "not a number" in decided.detail
    (fine,) = decide([Bar("mutate:score", min=0.5)], Results(None, {}, {"score": 10}), set())
    assert fine.status is BarStatus.PASS


def test_unknown_result_files_are_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(InputError, match="not a result of meta-eval, judge-audit or mutate"):
        load_results([path])


def test_gate_on_real_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    monkeypatch.chdir(REPO)
    meta = runner.invoke(main, ["meta-eval", "--resamples", "50", "--format", "json"])
    audit = runner.invoke(main, ["judge-audit", "--judge", "steady", "--format", "json",
                                 "--cache", str(tmp_path / "cache.sqlite")])
    assert meta.exit_code == 0 and audit.exit_code == 0, audit.output
    (tmp_path / "meta.json").write_text(meta.output)
    (tmp_path / "audit.json").write_text(audit.output)
    kappa = json.loads(meta.output)["evaluator"]["kappa"]
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.gate]\n"
        f'"meta-eval:evaluator.kappa" = {kappa}\n'
        '"meta-eval:refund_issued.tnr" = { min = 0.9 }\n'
        '"judge-audit:steady.agreement.pointwise.kappa" = 0.99\n')
    monkeypatch.chdir(tmp_path)
    out = runner.invoke(main, ["gate", "meta.json", "audit.json"])
    assert out.exit_code == 0, out.output  # the judge bar is missed but only reported
    assert "reported" in out.output
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.gate]\n"
        f'"meta-eval:evaluator.kappa" = {kappa + 0.01}\n')
    out = runner.invoke(main, ["gate", "meta.json", "audit.json"])
    assert out.exit_code == 1
    assert f"meta-eval:evaluator.kappa: {kappa:.4g} not >= {kappa + 0.01:g}" in out.output
