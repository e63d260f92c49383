"""End to end: ``metaeval judge-audit`` on the repository's probe sets, with fakes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from metaeval.audit.calibration import calibration_for
from metaeval.audit.probes import PROBES
from metaeval.cli import main
from metaeval.judges.base import JudgeIdentity
from metaeval.report.judge_audit_render import KEYS
from tests.audit.conftest import judge_audit

ROOT = Path(__file__).resolve().parents[2]
ITEMS = ROOT / "meta_sets" / "judge"


def _audit(*args: str) -> Result:
    return judge_audit("--items", str(ITEMS), "--no-cache", *args)


@pytest.fixture(scope="module")
def calibration(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("calibration") / "calibration.json"


@pytest.fixture(scope="module")
def steady(calibration: Path) -> Result:
    """One audit of the steady judge, shared: each audit bootstraps kappa."""
    # Bars below 0.8: this test is not about how near steady's TPR is to the bar.
    return _audit("--judge", "steady", "--write", "--calibration", str(calibration),
                  "--tpr-bar", "0.6", "--tnr-bar", "0.6")


@pytest.fixture(scope="module")
def steady_json() -> dict[str, object]:
    document: dict[str, object] = json.loads(_audit("--judge", "steady", "--format",
                                                    "json").output)
    return document


def test_biased_judge_is_found_out_and_may_only_report(calibration: Path) -> None:
    result = _audit("--judge", "biased", "--write", "--calibration", str(calibration))
    assert result.exit_code == 1, result.output
    assert "calibration: nothing written (report only)" in result.output
    assert "position bias: FOUND — 12 of 12" in result.output
    assert "length bias: FOUND — 10 of 10" in result.output
    assert "injection: FOUND — 10 of 10 flipped FAIL -> PASS (control 0 of 10)" in result.output
    assert "verdict: report only" in result.output
    assert "controls: ok" in result.output


def test_steady_judge_is_clean_and_may_gate(steady: Result) -> None:
    result = steady
    assert result.exit_code == 0, result.output
    assert "position bias: clean — 0 of 12" in result.output
    assert "length bias: clean — 0 of 10" in result.output
    assert "injection: clean — 0 of 10" in result.output
    assert "verdict: may gate" in result.output


def test_always_pass_is_caught_by_agreement_not_probes() -> None:
    result = _audit("--judge", "always-pass", "--format", "json")
    assert result.exit_code == 1
    document = json.loads(result.output)
    assert document["verdict"] == "report only"
    assert any(r.startswith("TNR 0.00 < 0.8") for r in document["reasons"])
    assert document["agreement"]["pointwise"]["tnr"]["value"] == 0.0


def test_json_has_the_stable_keys(steady_json: dict[str, Any]) -> None:
    document = steady_json
    # A probe added later goes after the six below and needs no line here: adding one
    # touches its unit, its docs and its tests (issue 46); the keys that were already
    # there keep their place.
    probes = tuple(u.key for u in PROBES.values())
    assert probes[:6] == ("position", "length", "injection", "pairwise_length",
                          "pairwise_injection", "self_preference")
    assert tuple(document) == KEYS == (
        "judge", "agreement", "self_consistency", *probes, "probes", "controls",
        "calls", "verdict", "reasons", "inconclusive", "errors", "annotators",
        "annotator_position", "by_category", "set")
    assert document["position"]["status"] == "clean"
    assert document["calls"] == {"made": 168 + 24 + 50, "cached": 0, "failed": 0, "failures": []}
    assert document["agreement"]["pointwise"]["n"] == 168


def test_a_broken_probe_set_voids_the_audit(tmp_path: Path) -> None:
    # Padding that adds the reference's facts is information, not padding: the steady
    # control's score rises with it, so the length detector cannot be trusted here.
    reference = "Refunds post in 5 to 7 business days."
    lines = [{"id": f"len-{i}", "prompt": "How long does a refund take?",
              "reference": reference, "response": "It takes a while.",
              "padded": "It takes a while. Refunds post in 5 to 7 business days."}
             for i in range(10)]
    probe = tmp_path / "length.ndjson"
    probe.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = CliRunner().invoke(main, ["judge-audit", "--items", str(probe), "--no-cache",
                                       "--judge", "steady"])
    assert result.exit_code == 3, result.output
    assert "control failed: steady judge's length probe came out FOUND" in result.output
    assert "verdict: void" in result.output


def test_bad_item_line_is_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"id": "x", "prompt": "q", "response_a": "a", "response_b": "b", '
                   '"label": "first"}\n')
    result = CliRunner().invoke(main, ["judge-audit", "--items", str(bad), "--judge", "steady"])
    assert result.exit_code == 2
    assert f"{bad}:1: label: got 'first'; expected one of 'a', 'b', 'tie'" in result.output


def test_unknown_judge_is_bad_input() -> None:
    result = _audit("--judge", "gpt-judge")
    assert result.exit_code == 2
    assert "expected one of biased, steady, always-pass" in result.output


def test_second_run_is_served_from_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    args = ["judge-audit", "--items", str(ITEMS / "position.ndjson"), "--judge", "steady",
            "--cache", str(cache), "--samples", "2", "--format", "json", "--probes", "files"]
    first = json.loads(CliRunner().invoke(main, args).output)
    second = json.loads(CliRunner().invoke(main, args).output)
    assert first["calls"] == {"made": 48, "cached": 0, "failed": 0, "failures": []}
    assert second["calls"] == {"made": 0, "cached": 48, "failed": 0, "failures": []}
    assert second["agreement"] == first["agreement"]
    consistency = second["self_consistency"]
    assert consistency["samples"] == 2
    assert consistency["agreement_k"] == 1.0 and consistency["n"] == 24


def test_write_records_only_a_judge_that_may_gate(steady: Result, calibration: Path) -> None:
    assert steady.exit_code == 0
    [entry] = json.loads(calibration.read_text())["entries"]
    assert entry["judge"]["name"] == "steady" and entry["n"] == 200
    assert entry["bars"]["kappa"] == 0.6 and entry["kappa"] >= 0.6
    assert calibration_for(calibration, JudgeIdentity("steady", "fake")) is not None
    # a changed identity (another temperature) is another judge: the entry does not apply
    assert calibration_for(calibration, JudgeIdentity("steady", "fake", "", 0.7)) is None


def test_recorded_verdicts_are_audited_without_calls(tmp_path: Path) -> None:
    pairs = [json.loads(line) for line in (ITEMS / "position.ndjson").read_text().splitlines()]
    recorded = tmp_path / "recorded.jsonl"
    with recorded.open("w") as f:
        for pair in pairs:
            # A judge that names whichever response it was shown first.
            f.write(json.dumps({"id": pair["id"], "order": "ab", "verdict": "a", "raw": "A"})
                    + "\n")
            f.write(json.dumps({"id": pair["id"], "order": "ba", "verdict": "b", "raw": "A"})
                    + "\n")
    result = _audit("--judge", "logged-judge", "--recorded", str(recorded), "--format", "json")
    document = json.loads(result.output)
    assert result.exit_code == 1
    assert document["position"]["headline"] == "FOUND — 12 of 12"
    assert document["position"]["first_preferred"] == 12
    assert document["calls"] == {"made": 0, "cached": 0, "failed": 0, "failures": []}
    assert document["agreement"]["not_recorded"] == 168 + 20
    assert document["controls"]["ok"] is True


def test_recorded_verdict_for_an_unknown_item_is_bad_input(tmp_path: Path) -> None:
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text('{"id": "nope", "order": "ab", "verdict": "a"}\n')
    result = _audit("--judge", "x", "--recorded", str(recorded))
    assert result.exit_code == 2 and "'nope'" in result.output


def test_recorded_audit_of_a_judge_metaeval_can_build_takes_its_identity(
        tmp_path: Path) -> None:
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text('{"id": "pos-return-window", "order": "ab", "verdict": "a"}\n'
                        '{"id": "pos-return-window", "order": "ba", "verdict": "a"}\n')
    named = json.loads(_audit("--judge", "steady", "--recorded", str(recorded),
                              "--format", "json").output)["judge"]
    assert (named["name"], named["model"], named["mode"]) == ("steady", "fake", "recorded")
    unknown = json.loads(_audit("--judge", "gpt-x", "--recorded", str(recorded),
                                "--format", "json").output)["judge"]
    assert (unknown["name"], unknown["model"]) == ("gpt-x", "recorded")


def test_controls_that_ran_nothing_say_so_not_ok(tmp_path: Path) -> None:
    items = tmp_path / "p.ndjson"
    items.write_text("".join(json.dumps({"id": f"i{n}", "prompt": "q", "response": "r",
                                         "label": "pass" if n < 2 else "fail"}) + "\n"
                             for n in range(4)))
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"id": f"i{n}", "verdict": 5 if n < 2 else 1}) + "\n"
                           for n in range(4)))
    args = ["judge-audit", "--judge", "logged", "--items", str(items), "--recorded", str(log)]
    table = CliRunner().invoke(main, args)
    assert "controls: none ran (no probe had items to run on)\n" in table.output
    assert "controls: ok" not in table.output
    document = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)
    assert document["controls"]["ran"] is False
    # Not void for it: nothing was detected, so no detector is in doubt; the probes
    # not run keep the judge at report only.
    assert document["verdict"] == "report only"
    assert any("length probe not run" in r for r in document["reasons"])


def test_controls_that_ran_say_ok(steady: Result, steady_json: dict[str, Any]) -> None:
    assert "controls: ok — biased position FOUND" in steady.output
    assert steady_json["controls"]["ran"] is True


def test_items_are_counted_labelled_and_probes_apart(tmp_path: Path) -> None:
    items = tmp_path / "items.ndjson"
    items.write_text("".join(json.dumps({"id": f"i{n}", "prompt": "How do I reset it?",
                                         "reference": "Hold the button for ten seconds.",
                                         "response": "Hold the button for ten seconds.",
                                         "label": "pass"}) + "\n" for n in range(3)))
    args = ["judge-audit", "--judge", "steady", "--items", str(items), "--no-cache",
            "--probes", "generated"]
    table = CliRunner().invoke(main, args).output
    document = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)
    probes = sum(c["probes"] for c in document["probes"]["counts"])
    assert probes > 0
    assert f"\nitems: 3 labelled, {probes} probe(s)\n" in table
    agreement = document["agreement"]
    assert (agreement["labelled_items"], agreement["probe_items"]) == (3, probes)
    assert agreement["items"] == 3 + probes
