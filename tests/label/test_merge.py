"""Two annotators' files merged; a conflict refused; the comparison view's alpha and
kappa equal the krippendorff package's and scikit-learn's on the same labels."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from metaeval.cli import main
from metaeval.label.agree import comparison

ANN = ["pass", "fail", "pass", "pass", "fail", "pass", "unsure", "pass"]
BO = ["pass", "fail", "fail", "pass", "fail", "pass", "pass", None]
ANN_PAIRS = ["a", "b", "a", "tie", "a"]
BO_PAIRS = ["a", "b", "b", "tie", "a"]


def rows(annotator: str, runs: Sequence[str | None], pairs: Sequence[str]
         ) -> list[dict[str, str]]:
    return ([{"run_id": f"r{n}", "check": "*", "label": label, "annotator": annotator}
             for n, label in enumerate(runs) if label is not None]
            + [{"item_id": f"p{n}", "label": label, "annotator": annotator, "shown": "ab"}
               for n, label in enumerate(pairs)])


def write(path: Path, lines: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def test_two_files_merge_and_the_comparison_equals_krippendorff(tmp_path: Path) -> None:
    a = write(tmp_path / "ann.jsonl", rows("ann", ANN, ANN_PAIRS))
    b = write(tmp_path / "bo.jsonl", rows("bo", BO, BO_PAIRS))
    out = tmp_path / "team.jsonl"
    result = CliRunner().invoke(main, ["label", "--merge", str(a), str(b), "-o", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("25 labels by 2 annotator(s) (ann, bo) -> ")
    merged = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(merged) == 25
    got: Any = comparison(merged, {f"p{n}": "pairwise" for n in range(5)})
    figures = {f["group"]: f for f in got["figures"]}
    # The reference, from the labels as the test holds them (unsure and absent: missing).
    code = {"pass": 0.0, "fail": 1.0}
    matrix = [[code.get(label or "", np.nan) for label in ANN],
              [code.get(label or "", np.nan) for label in BO]]
    expected = krippendorff.alpha(reliability_data=np.array(matrix),
                                  level_of_measurement="nominal")
    assert figures["*"]["alpha"] == pytest.approx(expected, abs=1e-4)
    assert figures["*"]["alpha"] != pytest.approx(1.0)
    both = [n for n in range(len(ANN)) if ANN[n] in code and BO[n] in code]
    assert figures["*"]["mean_kappa"] == pytest.approx(
        cohen_kappa_score([ANN[n] for n in both], [BO[n] for n in both]), abs=1e-4)
    pair_code = {"a": 0.0, "b": 1.0, "tie": 2.0}
    expected_pairs = krippendorff.alpha(
        reliability_data=np.array([[pair_code[x] for x in ANN_PAIRS],
                                   [pair_code[x] for x in BO_PAIRS]]),
        level_of_measurement="nominal")
    assert figures["pairwise"]["alpha"] == pytest.approx(expected_pairs, abs=1e-4)
    assert [(d["kind"], d["id"]) for d in got["disagreements"]] == [
        ("run", "r2"), ("item", "p2")]


def test_a_conflicting_label_is_refused_and_nothing_written(tmp_path: Path) -> None:
    a = write(tmp_path / "ann.jsonl", rows("ann", ["pass"], []))
    b = write(tmp_path / "ann-again.jsonl", rows("ann", ["fail"], []))
    same = write(tmp_path / "copy.jsonl", rows("ann", ["pass"], []))
    out = tmp_path / "team.jsonl"
    result = CliRunner().invoke(main, ["label", "--merge", str(a), str(b), "-o", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 2
    assert f"{b}:1: 'ann' labelled run 'r0' check '*' 'fail' here and 'pass' at {a}:1" in (
        result.output)
    assert not out.exists()
    result = CliRunner().invoke(main, ["label", "--merge", str(a), str(same), "-o", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0
    assert "1 repeated row(s) kept once" in result.output
    assert len(out.read_text().splitlines()) == 1


def test_merge_refuses_to_write_over_an_input(tmp_path: Path) -> None:
    a = write(tmp_path / "ann.jsonl", rows("ann", ["pass"], []))
    b = write(tmp_path / "bo.jsonl", rows("bo", ["pass"], []))
    before = a.read_text()
    result = CliRunner().invoke(main, ["label", "--merge", str(a), str(b), "-o", str(a)],
                                catch_exceptions=False)
    assert result.exit_code == 2
    assert a.read_text() == before
