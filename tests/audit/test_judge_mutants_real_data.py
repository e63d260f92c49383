"""Reply-rule and decision mutants on real published judge logs (the samples in
../shared/data/judge-logs; skipped without them): no call is made, and each mutant
is killed, survives or is equivalent for a reason these tests state, read off the
raw replies by code apart from metaeval's."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from metaeval.cli import main

_ROOT = Path(__file__).resolve().parents[2]
_CANDIDATES = [Path(os.environ.get("METAEVAL_JUDGE_LOGS", "") or "/nonexistent"),
               _ROOT / ".." / "shared" / "data" / "judge-logs",
               _ROOT / ".." / ".." / "shared" / "data" / "judge-logs"]
LOGS = next((p for p in _CANDIDATES if (p / "NOTES.md").is_file()), _CANDIDATES[1])
pytestmark = pytest.mark.skipif(not (LOGS / "NOTES.md").is_file(),
                                reason="../shared/data/judge-logs is not beside the repository")
MT = LOGS / "mt-bench-fastchat"


def _import(tmp_path: Path, fmt: str, log: Path) -> tuple[Path, Path]:
    items, recorded = tmp_path / "items.ndjson", tmp_path / "recorded.jsonl"
    done = CliRunner().invoke(main, ["judge-import", fmt, str(log), "--items", str(items),
                                     "--recorded", str(recorded)])
    assert done.exit_code == 0, done.output
    return items, recorded


def _mutate(tmp_path: Path, items: Path, recorded: Path, *flags: str,
            code: int) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["judge-mutants", "--judge", "gpt-4", "--items",
                                       str(items), "--recorded", str(recorded), "--reply",
                                       "mt-bench", *flags, "--format", "json"])
    assert result.exit_code == code, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    assert document["calls"]["made"] == 0  # re-read, never asked
    return document


def _by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in document["mutants"]}


@pytest.fixture(autouse=True)
def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n")
    monkeypatch.chdir(tmp_path)


def test_the_winner_map_swapped_in_one_order_is_killed_by_the_position_figures(
        tmp_path: Path) -> None:
    # lm-sys's own skycamp log: GPT-4 says the same in both orders on 7 of 10 pairs, so
    # its position probe is clean; read [[A]]/[[B]] swapped in one order, those 7 flip
    # and the 3 it flipped agree: 7 of 10 inconsistent, and the probe finds the bias.
    log = MT / "lm-sys-FastChat-skycamp" / "model_judgment" / "gpt-4_pair.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    consistent = sum(r["g1_winner"] == r["g2_winner"] for r in records)
    assert consistent == 7
    document = _mutate(tmp_path, *_import(tmp_path, "mt-bench-pair", log), code=0)
    assert document["judge"]["reasons"] and not any(
        "position" in r for r in document["judge"]["reasons"])
    for swapped, game in (("swap_winner.1", "g2_winner"), ("swap_winner.2", "g1_winner")):
        mutant = _by_id(document)[swapped]
        assert mutant["status"] == "Killed"
        assert mutant["killed_by"] == ["position bias FOUND"]
        # Every verdict of the swapped order moved, but a tie ([[C]]) has no side to swap.
        decided = sum(r[game] in ("model_1", "model_2") for r in records)
        assert len(mutant["disagree"]) == decided < 10
    assert document["counts"] == {"Killed": 2, "Survived": 0, "Equivalent": 0}


def test_the_swap_survives_where_the_judge_is_already_as_position_biased(
        tmp_path: Path) -> None:
    # The Stefanstud fork's 30 pairs: GPT-4 already prefers the first shown on 12 and is
    # inconsistent on 15 of 28; the swapped map is inconsistent on 13 of them: no worse
    # by the position figures, and no person labelled these pairs, so it survives, with
    # the pairs whose verdict moved as the ones to label next.
    log = MT / "stefanstud-FastChat" / "model_judgment" / "gpt-4_pair.jsonl"
    document = _mutate(tmp_path, *_import(tmp_path, "mt-bench-pair", log), code=1)
    assert "position bias FOUND" in document["judge"]["reasons"]
    mutant = _by_id(document)["swap_winner.1"]
    assert mutant["status"] == "Survived" and mutant["killed_by"] == []
    assert mutant["unlabelled"] == mutant["disagree"] and len(mutant["disagree"]) > 20


def _stray_digit(raw: str) -> bool:
    """Whether the reply's first number is not its [[N]] rating (independent of
    metaeval's reader): "rate it a 10. Rating: [[10]]" has no stray digit."""
    rating = re.search(r"\[\[(\d+)\]\]", raw)
    first = re.search(r"\d+(?:\.\d+)?", raw)
    assert rating is not None and first is not None
    return float(first.group(0)) != float(rating.group(1))


def test_a_lenient_first_number_rule_is_equivalent_where_no_reply_has_a_stray_digit(
        tmp_path: Path) -> None:
    log = MT / "stefanstud-FastChat" / "model_judgment" / "gpt-4_single.jsonl"
    lines = log.read_text().splitlines()
    clean = [line for line in lines if not _stray_digit(json.loads(line)["judgment"])]
    stray = len(lines) - len(clean)
    assert 0 < stray < len(lines)
    subset = tmp_path / "clean.jsonl"
    subset.write_text("\n".join(clean) + "\n")
    document = _mutate(tmp_path, *_import(tmp_path, "mt-bench-single", subset),
                       "--scale", "1-10", "--operators", "read_first_number", code=0)
    # Every reply's first number is its rating: the mutant reads what the judge reads.
    assert _by_id(document)["read_first_number"]["status"] == "Equivalent"

    whole = _mutate(tmp_path, *_import(tmp_path, "mt-bench-single", log), "--scale", "1-10",
                    "--operators", "read_first_number", code=1)
    mutant = _by_id(whole)["read_first_number"]
    # "1." of a list, "iPhone 12", "1600 Pennsylvania": read as ratings, and with no
    # person's label on these answers nothing kills it; those replies are the ones to label.
    assert mutant["status"] == "Survived"
    assert len(mutant["disagree"]) == stray


def test_decision_mutants_on_single_grades_move_verdicts_no_label_can_weigh(
        tmp_path: Path) -> None:
    log = MT / "stefanstud-FastChat" / "model_judgment" / "gpt-4_single.jsonl"
    scores = [json.loads(line)["score"] for line in log.read_text().splitlines()]
    document = _mutate(tmp_path, *_import(tmp_path, "mt-bench-single", log), "--scale", "1-10",
                       "--operators", "lower_pass_mark,one_sample,pass_unparsable", code=1)
    mutants = _by_id(document)
    # One sample a question: no sample to drop, so no one_sample mutant is made.
    assert set(mutants) == {"lower_pass_mark", "pass_unparsable"}
    # Pass at 8 -> 7 moves exactly the grades of 7, and no one labelled them.
    assert len(mutants["lower_pass_mark"]["disagree"]) == scores.count(7)
    assert mutants["lower_pass_mark"]["status"] == "Survived"
    # Every reply has its [[N]]: reading an unreadable one as a pass changes nothing.
    assert mutants["pass_unparsable"]["status"] == "Equivalent"


def test_gate_holds_the_survivors_to_a_bar(tmp_path: Path) -> None:
    log = MT / "lm-sys-FastChat-skycamp" / "model_judgment" / "gpt-4_pair.jsonl"
    killed = _mutate(tmp_path, *_import(tmp_path, "mt-bench-pair", log), code=0)
    single = MT / "stefanstud-FastChat" / "model_judgment" / "gpt-4_single.jsonl"
    survived = _mutate(tmp_path, *_import(tmp_path, "mt-bench-single", single),
                       "--scale", "1-10", code=1)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.metaeval.gate]\n"judge-mutants:counts.Survived" = {max = 0}\n')
    for document, code in ((killed, 0), (survived, 1)):
        (tmp_path / "result.json").write_text(json.dumps(document))
        gated = CliRunner().invoke(main, ["gate", "result.json"])
        assert gated.exit_code == code, gated.output
        assert "judge-mutants:counts.Survived" in gated.output


def test_a_survivor_is_a_finding_tracked_accepted_with_expiry_and_exported_as_sarif(
        tmp_path: Path) -> None:
    single = MT / "stefanstud-FastChat" / "model_judgment" / "gpt-4_single.jsonl"
    items, recorded = _import(tmp_path, "mt-bench-single", single)
    flags = ("--scale", "1-10", "--operators", "read_first_number", "--findings",
             "judge-findings.json")
    first = _mutate(tmp_path, items, recorded, *flags, "--update-baseline", code=1)
    fingerprint = _by_id(first)["read_first_number"]["fingerprint"]
    assert first["findings"]["new"] == [fingerprint]
    # Tracked and open: known, no longer new, but not fine either.
    again = _mutate(tmp_path, items, recorded, *flags, code=0)
    assert again["findings"]["known"] == [fingerprint] and again["findings"]["new"] == []

    accepted = CliRunner().invoke(main, ["findings", "accept", fingerprint[:8], "--reason",
                                         "no reply of ours has a stray digit", "--until",
                                         "2000-01-01", "--by", "tester", "--file",
                                         "judge-findings.json"])
    assert accepted.exit_code == 0, accepted.output
    expired = _mutate(tmp_path, items, recorded, *flags, code=1)  # accepted until 2000
    assert expired["findings"]["expired"] == [fingerprint]

    sarif = tmp_path / "judge.sarif"
    done = CliRunner().invoke(main, ["judge-mutants", "--judge", "gpt-4", "--items", str(items),
                                     "--recorded", str(recorded), "--reply", "mt-bench",
                                     *flags, "--sarif", str(sarif)])
    log = json.loads(sarif.read_text())
    results = log["runs"][0]["results"]
    assert done.exit_code == 1
    assert [r["partialFingerprints"]["metaevalFingerprint/v1"] for r in results] == [fingerprint]
    assert results[0]["ruleId"] == "read_first_number"
