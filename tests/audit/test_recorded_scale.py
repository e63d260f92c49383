"""Recorded verdicts go through the same range checks as a live reply.

``"verdict": 99`` on 1-5 items made every item pass; 0, -1 and 6 crashed with
MetricInputError; 1e309 and a 400-digit integer with OverflowError. Each is now a
file:line error, the other lines still load, and the run exits 2 naming every
bad line. A log on another scale is accepted once its scale is declared.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.judges.base import JudgeIdentity, Mode, Scale
from metaeval.loaders.recorded_verdicts import load_recorded
from tests.audit.conftest import judge_audit

HUGE = "1" + "0" * 399  # a 400-digit integer

ITEMS = [
    {"id": "good-1", "prompt": "q", "response": "right", "label": "pass"},
    {"id": "good-2", "prompt": "q", "response": "right again", "label": "pass"},
    {"id": "bad-1", "prompt": "q", "response": "wrong", "label": "fail"},
    {"id": "bad-2", "prompt": "q", "response": "wrong again", "label": "fail"},
]
PAIR = {"id": "pair", "prompt": "q", "response_a": "one", "response_b": "two", "label": "a"}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "items.ndjson").write_text("".join(json.dumps(i) + "\n" for i in ITEMS))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _log(project: Path, lines: list[str]) -> Path:
    path = project / "recorded.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _audit(*args: str) -> Result:
    return judge_audit("--judge", "logged", "--items", "items.ndjson", "--format", "json",
                       *args)


def _pointwise(good: str, bad: str) -> list[str]:
    """Verdicts for the four items (``good`` for the passes, ``bad`` for the fails,
    written as JSON text)."""
    return [f'{{"id": "good-1", "verdict": {good}}}', f'{{"id": "good-2", "verdict": {good}}}',
            f'{{"id": "bad-1", "verdict": {bad}}}', f'{{"id": "bad-2", "verdict": {bad}}}']


@pytest.mark.parametrize(("verdict", "shown"), [
    ("99", "99"), ("0", "0"), ("-1", "-1"), ("6", "6"), ("5.5", "5.5"),
    (HUGE, HUGE[:57] + "... (400 characters)"), ("true", "true"), ('"4"', "'4'"),
    ('"a"', "'a'"), ("[4]", "[4]"),
])
def test_a_verdict_outside_what_a_pointwise_judge_can_say_is_a_line_error(
        project: Path, verdict: str, shown: str) -> None:
    recorded = _log(project, _pointwise("5", verdict))
    result = _audit("--recorded", str(recorded))
    assert result.exit_code == 2, result.output
    for line in (3, 4):  # both bad lines named, each with the field and the value
        assert (f"{recorded}:{line}: verdict: got {shown}; expected a number from 1 to 5"
                in result.output)
    assert f"{recorded}:1:" not in result.output and "Traceback" not in result.output


def test_a_verdict_too_large_for_a_float_is_a_line_error(project: Path) -> None:
    # Refused by the reader of every data file, before the verdict's own checks.
    recorded = _log(project, _pointwise("5", "1e309"))
    result = _audit("--recorded", str(recorded))
    assert result.exit_code == 2, result.output
    for line in (3, 4):
        assert (f"{recorded}:{line}: verdict: got a number too large for a float (it reads "
                "as infinity); expected a finite number") in result.output


def test_99_used_to_pass_every_item(project: Path) -> None:
    result = _audit("--recorded", str(_log(project, _pointwise("99", "99"))))
    assert result.exit_code == 2
    assert "verdict: got 99; expected a number from 1 to 5" in result.output


@pytest.mark.parametrize(("verdict", "shown"), [("4", "4"), ('"pass"', "'pass'"),
                                                ("true", "true"), ('"first"', "'first'")])
def test_a_pairwise_verdict_must_be_a_pair_label(project: Path, verdict: str,
                                                 shown: str) -> None:
    with (project / "items.ndjson").open("a") as f:
        f.write(json.dumps(PAIR) + "\n")
    lines = [*_pointwise("5", "1"), '{"id": "pair", "order": "ab", "verdict": "a"}',
             f'{{"id": "pair", "order": "ba", "verdict": {verdict}}}']
    recorded = _log(project, lines)
    result = _audit("--recorded", str(recorded))
    assert result.exit_code == 2
    assert (f"{recorded}:6: verdict: got {shown}; expected 'a', 'b', 'tie' or null"
            in result.output)


def test_the_other_lines_still_load(tmp_path: Path) -> None:
    path = tmp_path / "recorded.jsonl"
    path.write_text('{"id": "p", "verdict": 4}\n{"id": "q", "verdict": 99}\n'
                    '{"id": "r", "verdict": "fail"}\n{"id": "s", "verdict": 1e309}\n'
                    '{"id": "w", "verdict": "b"}\n{"id": "u", "verdict": null}\n')
    kinds = {"p": Mode.POINTWISE, "q": Mode.POINTWISE, "r": Mode.POINTWISE,
             "s": Mode.POINTWISE, "w": Mode.PAIRWISE, "u": Mode.POINTWISE}
    records, errors = load_recorded(path, Scale(1, 5, 4), kinds)
    assert [(r.id, r.verdict) for r in records] == [("p", 4.0), ("r", False), ("w", "b"),
                                                    ("u", None)]
    assert [(e.line, e.field) for e in errors] == [(2, "verdict"), (4, "verdict")]


def _ten_point_log(project: Path) -> Path:
    return _log(project, _pointwise("8", "3"))


def test_a_log_on_a_1_to_10_scale_is_refused_until_its_scale_is_declared(
        project: Path) -> None:
    recorded = _ten_point_log(project)
    refused = _audit("--recorded", str(recorded))
    assert refused.exit_code == 2
    assert f"{recorded}:1: verdict: got 8; expected a number from 1 to 5" in refused.output
    assert "--scale" in refused.output  # says how to declare another
    accepted = _audit("--recorded", str(recorded), "--scale", "1-10")
    assert accepted.exit_code in (0, 1), accepted.output
    point = json.loads(accepted.stdout)["agreement"]["pointwise"]
    # 8 passes on 1-10 (pass at 8 by default, as for a configured judge), 3 fails.
    assert (point["tp"], point["tn"], point["fn"], point["fp"]) == (2, 2, 0, 0)


def test_pass_at_moves_the_pass_mark(project: Path) -> None:
    recorded = _ten_point_log(project)
    result = _audit("--recorded", str(recorded), "--scale", "1-10", "--pass-at", "9")
    point = json.loads(result.stdout)["agreement"]["pointwise"]
    assert (point["tp"], point["fn"]) == (0, 2)  # 8 < 9: the passes now fail


def test_the_scale_can_be_declared_in_config(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.metaeval.judge_audit]\nscale = "1-10"\n')
    result = _audit("--recorded", str(_ten_point_log(project)))
    assert result.exit_code in (0, 1), result.output
    assert json.loads(result.stdout)["agreement"]["pointwise"]["tp"] == 2
    # The flag wins over the config.
    flagged = _audit("--recorded", str(_ten_point_log(project)), "--scale", "1-5")
    assert flagged.exit_code == 2 and "got 8; expected a number from 1 to 5" in flagged.output


@pytest.mark.parametrize(("args", "message"), [
    (["--scale", "10-1"], "--scale: got '10-1'; expected LOW-HIGH"),
    (["--scale", "1-"], "--scale: got '1-'; expected LOW-HIGH"),
    (["--scale", "one-ten"], "--scale: got 'one-ten'; expected LOW-HIGH"),
    (["--scale", "\uff11-\uff15"], "expected LOW-HIGH"),  # fullwidth digits are not digits
    (["--scale", "1-10", "--pass-at", "11"], "--pass-at: got 11; expected an integer in 1..10"),
    (["--pass-at", "0"], "--pass-at: got 0; expected an integer in 1..5"),
])
def test_a_bad_declared_scale_is_bad_input(project: Path, args: list[str],
                                           message: str) -> None:
    result = _audit("--recorded", str(_ten_point_log(project)), *args)
    assert result.exit_code == 2 and message in result.output, result.output


@pytest.mark.parametrize(("table", "message"), [
    ('scale = "10-1"', "tool.metaeval.judge_audit.scale: got '10-1'; expected LOW-HIGH"),
    ("scale = 10", "tool.metaeval.judge_audit.scale: got 10; expected LOW-HIGH"),
    ("pass_at = 7", "tool.metaeval.judge_audit.pass_at: got 7; expected an integer in 1..5"),
    ('scal = "1-10"', "tool.metaeval.judge_audit.scal: unknown key; expected one of alpha, "
                      "alt_epsilon, annotators, kappa_bar, label_classes, label_pass_at, "
                      "label_scale, pass_at, probes, require_alt_test, scale"),
    ('label_classes = ["hate"]', "tool.metaeval.judge_audit.label_classes: got ['hate']; "
                                 "expected at least two distinct class names"),
    ('annotators = "expert"', "tool.metaeval.judge_audit.annotators: got 'expert'; expected "
                              "one of 'experts', 'skilled', 'crowd'"),
    ("alt_epsilon = 1.5", "tool.metaeval.judge_audit.alt_epsilon: got 1.5; expected a number "
                          "in [0, 1)"),
    ('require_alt_test = "yes"', "tool.metaeval.judge_audit.require_alt_test: got 'yes'; "
                                 "expected true or false"),
])
def test_a_bad_judge_audit_table_is_bad_input(project: Path, table: str, message: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.metaeval.judge_audit]\n{table}\n")
    result = _audit("--recorded", str(_ten_point_log(project)))
    assert result.exit_code == 2 and message in result.output, result.output


def test_scale_is_for_recorded_verdicts_only(project: Path) -> None:
    result = _audit("--scale", "1-10", "--no-cache")
    assert result.exit_code == 2
    assert "--scale: applies to --recorded only" in result.output


def test_a_declared_scale_must_match_a_judge_metaeval_can_build(project: Path) -> None:
    recorded = _ten_point_log(project)
    result = CliRunner().invoke(main, ["judge-audit", "--judge", "steady", "--items",
                                       "items.ndjson", "--recorded", str(recorded),
                                       "--scale", "1-10"])
    assert result.exit_code == 2
    assert "--scale: got 1-10; judge 'steady' answers on 1-5" in result.output


def test_pass_at_alone_keeps_the_configured_scale(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.metaeval.judge_audit]\nscale = "1-10"\n')
    result = _audit("--recorded", str(_ten_point_log(project)), "--pass-at", "9")
    point = json.loads(result.stdout)["agreement"]["pointwise"]
    assert (point["tp"], point["fn"]) == (0, 2)


def _binary_log(project: Path) -> Path:
    return _log(project, _pointwise("1", "0"))


def test_the_declared_scale_and_pass_mark_are_in_the_json_the_table_and_the_version(
        project: Path) -> None:
    recorded = str(_binary_log(project))
    everything = json.loads(_audit("--recorded", recorded, "--scale", "0-1",
                                   "--pass-at", "0").stdout)
    strict = json.loads(_audit("--recorded", recorded, "--scale", "0-1",
                               "--pass-at", "1").stdout)
    assert everything["judge"]["scale"] == {"low": 0, "high": 1, "pass_at": 0}
    assert strict["judge"]["scale"] == {"low": 0, "high": 1, "pass_at": 1}
    # Under pass-at 0 every verdict passes: another judge, so another version, and a
    # calibration of the one never applies to the other.
    assert everything["agreement"]["pointwise"]["fp"] == 2
    assert strict["agreement"]["pointwise"]["fp"] == 0
    assert everything["judge"]["version"] != strict["judge"]["version"]
    table = CliRunner().invoke(main, ["judge-audit", "--judge", "logged", "--items",
                                      "items.ndjson", "--recorded", recorded, "--scale", "0-1",
                                      "--pass-at", "0"]).output
    assert "judge: logged model=recorded scale=0-1,pass>=0 temperature unknown" in table
    assert "judge scale: 0-1, a pass at >= 0 (declared for the recorded scores" in table


def test_the_default_scale_keeps_a_recorded_judge_s_version(project: Path) -> None:
    recorded = str(_log(project, _pointwise("5", "1")))
    default = json.loads(_audit("--recorded", recorded).stdout)["judge"]
    declared = json.loads(_audit("--recorded", recorded, "--scale", "1-5").stdout)["judge"]
    assert default["scale"] == declared["scale"] == {"low": 1, "high": 5, "pass_at": 4}
    # The same scale said or not is the same judge, with the version it always had.
    assert default["version"] == declared["version"]
    assert default["version"] == JudgeIdentity("logged", model="recorded").version


def _ordinal(project: Path, labels: list[int]) -> list[str]:
    (project / "items.ndjson").write_text("".join(
        json.dumps({"id": f"s{n}", "prompt": "q", "response": "r", "label": label}) + "\n"
        for n, label in enumerate(labels)))
    log = _log(project, [json.dumps({"id": f"s{n}", "verdict": label})
                         for n, label in enumerate(labels)])
    return ["--recorded", str(log)]


def test_labels_that_never_reach_the_default_range_s_top_are_warned_about(
        project: Path) -> None:
    args = _ordinal(project, [1, 2, 3, 4, 2, 3, 4, 1])
    labels = json.loads(_audit(*args).stdout)["agreement"]["labels"]
    assert labels["warning"].startswith("no label reaches 5 (integer labels seen: 1-4; read "
                                        "on 1-5, the default)")
    assert "--label-scale 1-4" in labels["warning"]
    table = CliRunner().invoke(main, ["judge-audit", "--judge", "logged", "--items",
                                      "items.ndjson", *args]).output
    assert "\nwarning: no label reaches 5" in table
    # Declared, whatever the range, it is what the user said: no warning.
    assert json.loads(_audit(*args, "--label-scale", "1-4").stdout)["agreement"]["labels"][
        "warning"] is None
    assert json.loads(_audit(*args, "--label-scale", "1-5").stdout)["agreement"]["labels"][
        "warning"] is None


def test_labels_that_span_the_default_range_are_not_warned_about(project: Path) -> None:
    args = _ordinal(project, [1, 2, 3, 4, 5, 3])
    assert json.loads(_audit(*args).stdout)["agreement"]["labels"]["warning"] is None
    low = _ordinal(project, [2, 3, 4, 5])
    assert json.loads(_audit(*low).stdout)["agreement"]["labels"]["warning"].startswith(
        "none is as low as 1")


def test_a_pass_fail_judge_on_integer_labels_is_not_called_unscored(project: Path) -> None:
    labels = [1, 2, 3, 4, 5, 2, 4, 5]
    (project / "items.ndjson").write_text("".join(
        json.dumps({"id": f"s{n}", "prompt": "q", "response": "r", "label": label}) + "\n"
        for n, label in enumerate(labels)))
    log = _log(project, [json.dumps({"id": f"s{n}", "verdict": "pass" if label >= 4 else "fail"})
                         for n, label in enumerate(labels)])
    document = json.loads(_audit("--recorded", str(log)).stdout)["agreement"]
    assert document["unscored"] == 0
    ordinal = document["pointwise"]["ordinal"]
    # Every verdict was decided (pass/fail): none unscored, none with a score to weigh.
    assert (ordinal["n"], ordinal["unscored"], ordinal["pass_fail_only"]) == (8, 0, 8)
    assert ordinal["weighted_kappa_linear"] == {
        "value": None, "reason": "no cases: the judge answered pass/fail, with no score to "
                                 "weigh against the integer labels"}
    table = CliRunner().invoke(main, ["judge-audit", "--judge", "logged", "--items",
                                      "items.ndjson", "--recorded", str(log)]).output
    assert "ordinal 1-5 on 8 items (0 unscored; 8 judged pass/fail, with no score)" in table
    assert "nothing scored" not in table


def test_a_null_verdict_on_an_integer_label_is_still_unscored(project: Path) -> None:
    labels = [1, 5, 2, 4]
    (project / "items.ndjson").write_text("".join(
        json.dumps({"id": f"s{n}", "prompt": "q", "response": "r", "label": label}) + "\n"
        for n, label in enumerate(labels)))
    log = _log(project, ['{"id": "s0", "verdict": 1}', '{"id": "s1", "verdict": 5}',
                         '{"id": "s2", "verdict": null}', '{"id": "s3", "verdict": "pass"}'])
    ordinal = json.loads(_audit("--recorded", str(log)).stdout)["agreement"]["pointwise"][
        "ordinal"]
    assert (ordinal["n"], ordinal["unscored"], ordinal["pass_fail_only"]) == (4, 1, 1)
    assert ordinal["weighted_kappa_linear"]["value"] == 1.0  # the two scored agree
