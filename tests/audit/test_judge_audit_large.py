"""judge-audit on recorded pairwise logs the size public ones come in: 1,030 pairs
(where the binomial tail used to overflow), 1,392 (a published log) and, marked
slow, 100,000. The p-values are checked against scipy, computed here from the
counts the generator planted, not from the report."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from scipy.stats import binomtest

from tests.audit.conftest import judge_audit_json

CHANCE_FLIP = 0.1  # the documented chance rate of a flip (docs/judge-audit.md)


def _write_log(directory: Path, pairs: int, *, flips: int, orders: tuple[str, ...] = ("ab", "ba")
               ) -> tuple[Path, Path]:
    """Items and recorded verdicts: the judge agrees with the label in both orders,
    except on the first ``flips`` pairs, where it names the response shown first."""
    rng = random.Random(pairs)
    items, recorded = directory / "items.jsonl", directory / "recorded.jsonl"
    with items.open("w") as f, recorded.open("w") as g:
        for i in range(pairs):
            label = rng.choice("ab")
            f.write(json.dumps({"id": f"p{i}", "prompt": "Which is better?", "response_a": "x",
                                "response_b": "y", "label": label}) + "\n")
            for order in orders:
                verdict = order[0] if i < flips else label
                g.write(json.dumps({"id": f"p{i}", "order": order, "verdict": verdict}) + "\n")
    return items, recorded


def _audit(items: Path, recorded: Path) -> dict[str, object]:
    return judge_audit_json("--judge", "logged", "--items", str(items), "--recorded",
                            str(recorded))


@pytest.mark.parametrize(("pairs", "flips"), [(1_030, 122), (1_392, 122), (1_030, 90)])
def test_a_recorded_log_over_a_thousand_pairs_is_audited(tmp_path: Path, pairs: int,
                                                         flips: int) -> None:
    position = _audit(*_write_log(tmp_path, pairs, flips=flips))["position"]
    assert isinstance(position, dict)
    assert (position["pairs"], position["flips"]) == (pairs, flips)
    expected = binomtest(flips, pairs, CHANCE_FLIP, alternative="greater").pvalue
    assert position["p_value"] == pytest.approx(expected, rel=1e-3, abs=1e-12)
    # 122 of 1,030 is above the 10% chance rate; 90 of 1,030 is below it and clean
    assert position["status"] == ("FOUND" if expected < 0.05 else "clean")


def test_one_order_of_a_large_log_runs_the_controls_over_every_pair(tmp_path: Path) -> None:
    document = _audit(*_write_log(tmp_path, 1_030, flips=0, orders=("ab",)))
    controls = document["controls"]
    assert isinstance(controls, dict) and controls["ok"] is True
    position = document["position"]
    assert isinstance(position, dict) and position["status"] == "not run"


@pytest.mark.slow
def test_a_hundred_thousand_pairs(tmp_path: Path) -> None:
    position = _audit(*_write_log(tmp_path, 100_000, flips=10_300))["position"]
    assert isinstance(position, dict)
    assert position["flips"] == 10_300
    expected = binomtest(10_300, 100_000, CHANCE_FLIP, alternative="greater").pvalue
    assert position["p_value"] == pytest.approx(expected, rel=1e-3)
