"""The alternative annotator test and the human ceiling on the AltTest authors'
MT-Bench data (../shared/data/alttest/mtbench: 3 expert annotators, 6 LLM judges):
imported with ``metaeval judge-import annotations``, audited from the judge's
labels, and checked against an independent implementation, the ``krippendorff``
package, scikit-learn, and the figures the authors published."""

from __future__ import annotations

import json
import os
from itertools import combinations
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from metaeval.cli import main
from tests.audit.hand_alt import alt_by_hand, nominal_alpha

MTBENCH = Path(os.environ.get("METAEVAL_ALTTEST", "")
               or Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "alttest"
               ) / "mtbench"
pytestmark = pytest.mark.skipif(not (MTBENCH / "human_annotations.json").is_file(),
                                reason="../shared/data/alttest is not beside the repository")

PUBLISHED_RHO = {"gemini_flash": 0.72, "gemini_pro": 0.76, "gpt-4o": 0.77, "llama-31": 0.69,
                 "gpt-4o-mini": 0.74, "mistral-v03": 0.68}
"""alt_test_example.ipynb of nitaytech/AltTest: every judge FAILED (winning rate 0.00)
at epsilon 0.2 on mtbench, with these advantage probabilities."""


def _source() -> tuple[dict[str, Any], dict[str, Any]]:
    humans = json.loads((MTBENCH / "human_annotations.json").read_text())
    llms = json.loads((MTBENCH / "llm_annotations.json").read_text())
    return humans, llms


def _audit(tmp_path: Path, judge: str, *extra: str) -> dict[str, Any]:
    items, recorded = tmp_path / f"{judge}.ndjson", tmp_path / f"{judge}.jsonl"
    runner = CliRunner()
    converted = runner.invoke(main, [
        "judge-import", "annotations", str(MTBENCH / "human_annotations.json"),
        "--judge-labels", str(MTBENCH / "llm_annotations.json"), "--judge", judge,
        "--items", str(items), "--recorded", str(recorded)])
    assert converted.exit_code == 0, converted.output
    result = runner.invoke(main, ["judge-audit", "--judge", judge, "--items", str(items),
                                  "--recorded", str(recorded), "--format", "json", *extra])
    assert result.exit_code == 1, result.output
    document: dict[str, Any] = json.loads(result.output)
    return document


@pytest.mark.parametrize("judge", sorted(PUBLISHED_RHO))
def test_the_alt_test_matches_an_independent_one_and_the_published_figures(
        tmp_path: Path, judge: str) -> None:
    humans, llms = _source()
    (panel,) = _audit(tmp_path, judge, "--alt-epsilon", "0.2")["annotators"]
    alt = panel["alt_test"]
    # The importer maps model_a/model_b to a/b; the hand version compares the source's.
    ps, rejected, rho = alt_by_hand(humans, llms[judge], 0.2)
    assert [a["annotator"] for a in alt["annotators"]] == list(humans)
    assert [a["p_value"] for a in alt["annotators"]] == pytest.approx(ps, abs=1e-12)
    assert [a["rejected"] for a in alt["annotators"]] == rejected
    assert alt["advantage_probability"] == pytest.approx(rho, abs=1e-4)
    assert round(alt["advantage_probability"], 2) == PUBLISHED_RHO[judge]
    assert alt["winning_rate"] == 0.0 and alt["passed"] is False
    assert alt["epsilon_from"] == "--alt-epsilon"


def test_the_human_ceiling_matches_krippendorff_and_scikit_learn(tmp_path: Path) -> None:
    humans, llms = _source()
    document = _audit(tmp_path, "gpt-4o")
    agreement = document["annotators"][0]["agreement"]
    items = sorted({i for labels in humans.values() for i in labels})
    codes = {"model_a": 0.0, "model_b": 1.0, "tie": 2.0}
    data = np.array([[codes[h[i]] if i in h else np.nan for i in items]
                     for h in humans.values()])
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    among = agreement["among_annotators"]
    assert among["krippendorff_alpha"]["value"] == pytest.approx(alpha, abs=1e-4)
    assert among["krippendorff_alpha"]["value"] == pytest.approx(
        nominal_alpha(list(humans.values())), abs=1e-4)
    kappas = [cohen_kappa_score([x[i] for i in x if i in y], [y[i] for i in x if i in y])
              for x, y in combinations(humans.values(), 2)]
    assert among["mean_pairwise_kappa"]["value"] == pytest.approx(
        sum(kappas) / len(kappas), abs=1e-4)
    judge = llms["gpt-4o"]
    judged = [cohen_kappa_score([h[i] for i in h], [judge[i] for i in h])
              for h in humans.values()]
    assert agreement["judge_with_annotators"]["mean_kappa"]["value"] == pytest.approx(
        sum(judged) / len(judged), abs=1e-4)
    with_judge = nominal_alpha([*humans.values(), judge])
    assert agreement["judge_with_annotators"]["krippendorff_alpha_with_judge"][
        "value"] == pytest.approx(with_judge, abs=1e-4)
    # The judge sits below the human ceiling on this data.
    assert agreement["judge_with_annotators"]["mean_kappa"]["value"] < among[
        "mean_pairwise_kappa"]["value"]
    assert [a["items"] for a in agreement["annotators"]] == [74, 84, 88]
    # 35 items whose two annotators disagree have no consensus: left out of the
    # single-label agreement, counted here, never given a guessed label.
    assert agreement["no_consensus"] == 35
    assert document["agreement"]["pairwise"]["n"] == 120 - 35


def test_a_failed_alt_test_is_a_reason_the_judge_may_not_gate(tmp_path: Path) -> None:
    document = _audit(tmp_path, "gpt-4o", "--alt-epsilon", "0.2")
    assert ("alternative annotator test failed (pairwise): winning rate 0.00 < 0.5 at "
            "epsilon 0.2") in document["reasons"]
