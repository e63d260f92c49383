from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.commands.gate import gate as gate_command
from metaeval.config import Config, load_config
from metaeval.contract import JsonObject
from metaeval.errors import InputError
from metaeval.gate_bars import (
    Bar,
    BarResult,
    BarStatus,
    GateOptions,
    Results,
    decide,
    judge_verdicts,
    load_results,
    parse_bars,
    parse_options,
)
from tests.builders import AUDIT, META_EVAL, MUTATE, results

REPO = Path(__file__).resolve().parents[2]

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
    # Bars below 0.8: this test is not about how near steady's TPR is to the bar.
    audit = runner.invoke(main, ["judge-audit", "--judge", "steady", "--format", "json",
                                 "--cache", str(tmp_path / "cache.sqlite"),
                                 "--tpr-bar", "0.6", "--tnr-bar", "0.6"])
    assert meta.exit_code == 0 and audit.exit_code == 0, audit.output
    (tmp_path / "meta.json").write_text(meta.output)
    (tmp_path / "audit.json").write_text(audit.output)
    kappa = json.loads(meta.output)["evaluator"]["kappa"]
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.gate]\n"
        f'"meta-eval:evaluator.kappa" = {kappa}\n'
        '"judge-audit:steady.agreement.pointwise.kappa" = 0.99\n'
        "[tool.metaeval.meta_eval.checks.refund_issued]\nmin_tnr = 0.9\n")
    monkeypatch.chdir(tmp_path)
    out = runner.invoke(main, ["gate", "meta.json", "audit.json"])
    assert out.exit_code == 0, out.output  # the judge bar is missed but only reported
    assert "reported" in out.output
    assert re.search(r"meta-eval:refund_issued\.tnr +1 +>= 0\.9 +pass +"
                     r"\[tool\.metaeval\.meta_eval\.checks\.refund_issued\] min_tnr",
                     out.output), out.output
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.gate]\n"
        f'"meta-eval:evaluator.kappa" = {kappa + 0.01}\n')
    out = runner.invoke(main, ["gate", "meta.json", "audit.json"])
    assert out.exit_code == 1
    assert f"meta-eval:evaluator.kappa: {kappa:.4g} not >= {kappa + 0.01:g}" in out.output


def _audit(verdict: object, reasons: list[str] | None = None) -> JsonObject:
    return {**AUDIT, "verdict": verdict, "reasons": list(reasons or [])}  # type: ignore[dict-item]


def _verdicts(verdict: object, allow: bool = False) -> list[BarResult]:
    return judge_verdicts(Results(None, {"gpt-judge": _audit(verdict, ["length bias FOUND"])},
                                  None), GateOptions(allow_report_only=allow))


def test_a_judge_audit_is_held_to_its_verdict() -> None:
    (passed,) = _verdicts("may gate")
    assert passed.status is BarStatus.PASS and passed.bar.metric == "judge-audit:gpt-judge.verdict"
    (refused,) = _verdicts("report only")
    assert refused.status is BarStatus.FAIL and refused.status.fails
    assert "verdict 'report only' (length bias FOUND)" in refused.detail
    assert "allow_report_only = true" in refused.detail
    for void in ("void", None, 3):
        assert _verdicts(void)[0].status is BarStatus.FAIL


def test_allow_report_only_shows_a_report_only_judge_but_never_a_void_one() -> None:
    (shown_only,) = _verdicts("report only", allow=True)
    assert shown_only.status is BarStatus.REPORTED and not shown_only.status.fails
    assert _verdicts("void", allow=True)[0].status is BarStatus.FAIL


def test_allow_report_only_is_a_setting_not_a_bar() -> None:
    table = {"allow_report_only": True, "mutate:score": 0.9}
    assert parse_bars(table, "gate") == (Bar("mutate:score", min=0.9),)
    assert parse_options(table, "gate") == GateOptions(allow_report_only=True)
    assert parse_options({"mutate:score": 0.9}, "gate") == GateOptions()
    with pytest.raises(InputError, match=r"gate\.allow_report_only: got 'yes'; expected true"):
        parse_options({"allow_report_only": "yes"}, "gate")
    with pytest.raises(InputError, match="did you mean 'allow_report_only'"):
        parse_bars({"allow_report_onyl": True}, "gate")


def test_gate_fails_on_a_judge_audit_that_may_not_gate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    monkeypatch.chdir(REPO)
    audit = runner.invoke(main, ["judge-audit", "--judge", "biased", "--format", "json",
                                 "--no-cache"])
    assert audit.exit_code == 1, audit.output  # report only: its biases were found
    (tmp_path / "audit.json").write_text(audit.output)
    (tmp_path / "mutate.json").write_text(json.dumps(MUTATE))
    (tmp_path / "pyproject.toml").write_text('[tool.metaeval.gate]\n"mutate:score" = 0.5\n')
    monkeypatch.chdir(tmp_path)
    out = runner.invoke(main, ["gate", "mutate.json", "audit.json"])
    assert out.exit_code == 1, out.output
    assert "FAIL: 1 of 2 bars" in out.output
    assert "judge-audit:biased.verdict: verdict 'report only' (" in out.output
    (tmp_path / "pyproject.toml").write_text(
        '[tool.metaeval.gate]\n"mutate:score" = 0.5\nallow_report_only = true\n')
    out = runner.invoke(main, ["gate", "mutate.json", "audit.json"])
    assert out.exit_code == 0, out.output
    assert "not enforced (allow_report_only)" in out.output


@pytest.mark.parametrize(("metric", "said"), [
    ("mutate:counts.Survivd", "not in the results; did you mean 'Survived'?"),
    ("meta-eval:refund_isued.tpr", "not in the results; did you mean 'refund_issued'?"),
    ("meta-eval:evaluator.kapa", "not in the results; did you mean 'kappa'?"),
    ("judge-audit:gpt-jduge.verdict", "not in the results; did you mean 'gpt-judge'?"),
    ("judge-audit:other.verdict", "the judge-audit results given are of 'gpt-judge'"),
    # A level skipped, and a path that goes on past a number.
    ("mutate:Survived", "not in the results; did you mean 'counts.Survived'?"),
    ("mutate:counts.Survived.max",
     "not in the results; 'counts.Survived' is 1, with nothing under it"),
    ("mutate:counts", "not a number: a table of Killed, Survived; expected a metric under "
                      "it (e.g. mutate:counts.Killed)"),
    # Nothing close: no guess.
    ("mutate:counts.Zebra", "not in the results"),
    ("mutate:Zebra", "not in the results"),
])
def test_a_misspelt_metric_says_what_it_may_have_meant(metric: str, said: str) -> None:
    (missing,) = decide([Bar(metric, min=0)], results(), set())
    assert missing.status is BarStatus.MISSING
    assert missing.detail.endswith(said), missing.detail


def test_a_metric_of_a_result_not_given_says_so() -> None:
    (missing,) = decide([Bar("mutate:score", min=0)], Results(META_EVAL, {}, None), set())
    assert missing.detail == "not in the results; no mutate result given"


def test_with_no_bar_a_judge_audit_result_is_still_held_to_its_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n")
    (tmp_path / "audit.json").write_text(json.dumps(_audit("report only")))
    (tmp_path / "mutate.json").write_text(json.dumps(MUTATE))
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["gate", "audit.json"])
    assert out.exit_code == 1 and "FAIL: 1 of 1 bars" in out.output, out.output
    # Nothing to decide at all is still bad usage.
    out = CliRunner().invoke(main, ["gate", "mutate.json"])
    assert out.exit_code == 2 and "no bars" in out.output


def _config(tmp_path: Path, text: str) -> Config:
    (tmp_path / "pyproject.toml").write_text(text)
    return load_config(tmp_path)


META_EVAL_RESULT: JsonObject = {
    "checks": [{"name": "exact", "tpr": 0.8, "tnr": 1.0, "kappa": 0.75},
               {"name": "guard", "tpr": 1.0, "tnr": 0.9, "kappa": 0.9}],
    "evaluator": {"name": "evaluator", "tpr": 0.8, "tnr": 1.0, "kappa": 0.7}}


@pytest.mark.parametrize(("section", "expected"), [
    # An honest near-miss: TPR 0.8 on "exact" meets a 0.8 bar, as meta-eval says.
    ("min_tpr = 0.8\n", {"meta-eval:exact.tpr": BarStatus.PASS,
                          "meta-eval:guard.tpr": BarStatus.PASS}),
    ("min_tpr = 0.9\n", {"meta-eval:exact.tpr": BarStatus.FAIL,
                          "meta-eval:guard.tpr": BarStatus.PASS}),
    # A check's own bar wins over the section's, for that check only.
    ("min_tpr = 0.9\n[tool.metaeval.meta_eval.checks.exact]\nmin_tpr = 0.8\n",
     {"meta-eval:exact.tpr": BarStatus.PASS, "meta-eval:guard.tpr": BarStatus.PASS}),
    ("[tool.metaeval.meta_eval.checks.guard]\nmin_tnr = 0.95\n",
     {"meta-eval:guard.tnr": BarStatus.FAIL}),
    # A bar for a check the result does not hold fails as missing, never passes.
    ("[tool.metaeval.meta_eval.checks.gone]\nmin_kappa = 0.5\n",
     {"meta-eval:gone.kappa": BarStatus.MISSING}),
    ("", {}),
])
def test_the_gate_holds_a_meta_eval_result_to_the_meta_eval_bars(
        tmp_path: Path, section: str, expected: dict[str, BarStatus]) -> None:
    config = _config(tmp_path, "[tool.metaeval.meta_eval]\n" + section)
    (tmp_path / "meta.json").write_text(json.dumps(META_EVAL_RESULT))
    if not expected:  # no bar anywhere: nothing to decide is an error, not a pass
        with pytest.raises(InputError, match="no bars"):
            gate_command([tmp_path / "meta.json"], None, config)
        return
    decided = gate_command([tmp_path / "meta.json"], None, config)
    assert {r.bar.metric: r.status for r in decided} == expected


def test_the_meta_eval_bars_need_a_meta_eval_result(tmp_path: Path) -> None:
    config = _config(tmp_path, "[tool.metaeval.meta_eval]\nmin_tpr = 0.8\n"
                               '[tool.metaeval.gate]\n"mutate:score" = 0.5\n')
    (tmp_path / "mutate.json").write_text(json.dumps({"counts": {}, "score": 0.7,
                                                      "mutants": []}))
    decided = gate_command([tmp_path / "mutate.json"], None, config)
    assert [(r.bar.metric, r.status) for r in decided] == [("mutate:score", BarStatus.PASS)]


def test_the_paths_a_misspelt_metric_is_held_to_are_bounded() -> None:
    from metaeval.gate_bars import PATHS_SEEN, _paths

    huge: JsonObject = {"counts": {"Killed": 1}, "score": 1.0, "mutants": [],
                        **{f"k{i}": {f"s{j}": j for j in range(200)} for i in range(200)}}
    assert len(_paths(huge)) == PATHS_SEEN  # of 40,203: a result is data
    (missing,) = decide([Bar("mutate:Killed", min=0)], Results(None, {}, huge), set())
    assert missing.detail.endswith("did you mean 'counts.Killed'?")
