"""Six judges side by side on the AltTest authors' MT-Bench data
(../shared/data/alttest/mtbench; set METAEVAL_ALTTEST to its folder elsewhere): one
``judge-audit`` over one log of all six gives each judge the figures its own audit
gives, and a panel of three the figures of its majority, computed here by hand."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from metaeval.cli import main

ALTTEST = Path(os.environ.get("METAEVAL_ALTTEST", "")
               or Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "alttest")
MTBENCH = ALTTEST / "mtbench"
pytestmark = pytest.mark.skipif(not (MTBENCH / "human_annotations.json").is_file(),
                                reason="../shared/data/alttest is not beside the repository")

JUDGES = ("gemini_flash", "gemini_pro", "gpt-4o", "gpt-4o-mini", "llama-31", "mistral-v03")
PANEL = ("gpt-4o", "gemini_pro", "llama-31")


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout


def _import(tmp_path: Path, judge: str | None) -> tuple[Path, Path]:
    """Items and the recorded log of one judge (``--judge``) or of all (none)."""
    stem = judge or "all"
    items, recorded = tmp_path / f"{stem}.ndjson", tmp_path / f"{stem}.jsonl"
    code, out = _run("judge-import", "annotations", str(MTBENCH / "human_annotations.json"),
                     "--judge-labels", str(MTBENCH / "llm_annotations.json"),
                     *(("--judge", judge) if judge else ()), "--items", str(items),
                     "--recorded", str(recorded))
    assert code == 0, out
    return items, recorded


def _single(tmp_path: Path, judge: str, items: Path, recorded: Path) -> dict[str, Any]:
    code, out = _run("judge-audit", "--judge", judge, "--items", str(items), "--recorded",
                     str(recorded), "--alt-epsilon", "0.2", "--format", "json")
    assert code == 1, out  # every one of them is report only (the authors': omega 0)
    document: dict[str, Any] = json.loads(out)
    return document


def _row_of(document: dict[str, Any]) -> dict[str, Any]:
    """The side-by-side figures read from a single audit's own document."""
    pair = document["agreement"]["pairwise"]
    ab = pair["orders"]["ab"]
    (panel,) = document["annotators"]
    alt = panel["alt_test"]
    people = panel["agreement"]["judge_with_annotators"]
    return {"verdict": document["verdict"], "n": ab["n"], "agreement": ab["accuracy"],
            "kappa": ab["kappa"]["value"],
            "judge_with_annotators": {
                "krippendorff_alpha_with_judge": people["krippendorff_alpha_with_judge"]["value"],
                "mean_kappa": people["mean_kappa"]["value"]},
            "alt_test": {"ran": alt["ran"], "passed": alt["passed"],
                         "winning_rate": alt["winning_rate"],
                         "advantage_probability": alt["advantage_probability"]},
            "position": document["position"]["status"],
            "length": document["pairwise_length"]["status"],
            "unscored_share": round(document["agreement"]["unscored"]
                                    / document["agreement"]["verdicts"], 4)}


def _picked(row: dict[str, Any]) -> dict[str, Any]:
    alt = row["alt_test"]
    return {**{k: row[k] for k in ("verdict", "n", "agreement", "kappa",
                                   "judge_with_annotators", "position", "length",
                                   "unscored_share")},
            "alt_test": {k: alt[k] for k in ("ran", "passed", "winning_rate",
                                             "advantage_probability")}}


@pytest.fixture(scope="module")
def combined(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    tmp = tmp_path_factory.mktemp("side")
    items, recorded = _import(tmp, None)
    code, out = _run("judge-audit", "--items", str(items), "--recorded", str(recorded),
                     "--alt-epsilon", "0.2", "--panel", ",".join(PANEL), "--format", "json")
    return code, json.loads(out), tmp


def test_one_run_over_one_log_gives_each_judge_its_own_audits_figures(
        combined: tuple[int, dict[str, Any], Path], tmp_path: Path) -> None:
    code, document, _ = combined
    assert code == 1  # the worst verdict: every judge is report only here
    rows = {row["judge"]: row for row in document["judges"]}
    assert [r["judge"] for r in document["judges"]][:6] == list(json.loads(
        (MTBENCH / "llm_annotations.json").read_text()))  # every judge the log names
    for judge in JUDGES:
        items, recorded = _import(tmp_path, judge)  # a one-judge log, imported on its own
        single = _single(tmp_path, judge, items, recorded)
        assert _picked(rows[judge]) == _row_of(single), judge
        assert document["audits"][judge] == single, judge  # the whole audit, too
        assert rows[judge]["cost"]["note"] == "no usage recorded"
        assert rows[judge]["cost"]["per_item"] is None  # unknown, never 0


def test_the_published_advantage_probabilities_hold_side_by_side(
        combined: tuple[int, dict[str, Any], Path]) -> None:
    _, document, _ = combined
    rho = {r["judge"]: r["alt_test"]["advantage_probability"] for r in document["judges"]}
    published = {"gemini_flash": 0.72, "gemini_pro": 0.76, "gpt-4o": 0.77, "llama-31": 0.69,
                 "gpt-4o-mini": 0.74, "mistral-v03": 0.68}
    assert {j: round(rho[j], 2) for j in published} == published


def test_the_panel_is_its_members_majority_audited_as_a_judge(
        combined: tuple[int, dict[str, Any], Path], tmp_path: Path) -> None:
    _, document, _ = combined
    llms = json.loads((MTBENCH / "llm_annotations.json").read_text())
    to_item = {"model_a": "a", "model_b": "b", "tie": "tie"}
    lines, ties = [], 0
    for item in llms[PANEL[0]]:
        votes = Counter(to_item[llms[j][item]] for j in PANEL).most_common()
        split = len(votes) > 1 and votes[0][1] == votes[1][1]
        ties += split
        lines.append(json.dumps({"id": item, "order": "ab",
                                 "verdict": None if split else votes[0][0]}))
    assert ties > 0  # a, b and tie from three members: a split the panel leaves unscored
    by_hand = tmp_path / "majority.jsonl"
    by_hand.write_text("\n".join(lines) + "\n")
    items, _ = _import(tmp_path, PANEL[0])
    single = _single(tmp_path, "majority", items, by_hand)
    (row,) = [r for r in document["judges"] if r["members"]]
    assert row["judge"] == f"panel({','.join(PANEL)})" and row["members"] == list(PANEL)
    assert _picked(row) == _row_of(single)
    assert row["unscored_share"] > 0


def test_the_table_says_where_cost_is_unknown_and_which_verdict_exits(
        combined: tuple[int, dict[str, Any], Path]) -> None:
    _, _, tmp = combined
    code, out = _run("judge-audit", "--items", str(tmp / "all.ndjson"), "--recorded",
                     str(tmp / "all.jsonl"), "--alt-epsilon", "0.2", "--panel",
                     ",".join(PANEL))
    assert code == 1
    assert "no usage recorded" in out
    assert "exit 1: by the worst verdict" in out
    # rho 0.72 gemini_flash, 0.76 gemini_pro, 0.77 gpt-4o, 0.74 gpt-4o-mini, 0.76 the panel
    assert out.count("FAILED 0.00 / 0.7") == 5
