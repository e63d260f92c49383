"""GPT-4 on LLMBar Natural, audited from its recorded verdicts; the numbers must be
what scikit-learn gives on vectors read straight from the source files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.metrics import accuracy_score, cohen_kappa_score

from metaeval.cli import main

# Beside the repository as ../shared; METAEVAL_LLMBAR points elsewhere (a worktree).
LLMBAR = Path(os.environ.get("METAEVAL_LLMBAR", "")
              or Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "llmbar")
pytestmark = pytest.mark.skipif(not (LLMBAR / "Natural.dataset.json").is_file(),
                                reason="../shared/data/llmbar is not beside the repository")


@pytest.mark.parametrize("strategy", ["Vanilla", "Swap"])
def test_llmbar_natural_audit_matches_scikit_learn(tmp_path: Path, strategy: str) -> None:
    dataset = LLMBAR / "Natural.dataset.json"
    result = LLMBAR / f"Natural.GPT-4.{strategy}.result.json"
    items, recorded = tmp_path / "items.ndjson", tmp_path / "recorded.jsonl"
    runner = CliRunner()
    converted = runner.invoke(main, ["judge-import-llmbar", str(dataset), "--result",
                                     str(result), "--items", str(items), "--recorded",
                                     str(recorded)])
    assert converted.exit_code == 0, converted.output
    audit = runner.invoke(main, ["judge-audit", "--judge", f"gpt-4-{strategy.lower()}",
                                 "--items", str(items), "--recorded", str(recorded),
                                 "--format", "json"])
    assert audit.exit_code in (0, 1), audit.output
    document = json.loads(audit.output)

    # The other side, straight from LLMBar's files: labels 1/2, winners "1"/"2".
    runs = json.loads(result.read_text())
    human = [run["label"] for run in runs]
    # The "Swap" strategy re-asks pairs its two orders split on: the last round decides.
    vanilla = [int(run["results"][-1]["swap = False"]["winner"]) for run in runs]
    swapped = [int(run["results"][-1]["swap = True"]["winner"]) for run in runs]
    pairwise = document["agreement"]["pairwise"]
    assert pairwise["n"] == len(human) == 100
    for order, judged in (("ab", vanilla), ("ba", swapped)):
        assert pairwise["orders"][order]["accuracy"] == pytest.approx(
            accuracy_score(human, judged), abs=1e-4)
        assert pairwise["orders"][order]["kappa"]["value"] == pytest.approx(
            cohen_kappa_score(human, judged), abs=1e-4)
    consistency = sum(a == b for a, b in zip(vanilla, swapped, strict=True)) / len(human)
    assert pairwise["consistency"] == pytest.approx(consistency, abs=1e-4)
    assert document["calls"] == {"made": 0, "cached": 0, "failed": 0}
    assert document["controls"]["ok"] is True
