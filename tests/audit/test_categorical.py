"""Categorical labels: a declared set of classes, on items and recorded verdicts;
the confusion table, kappa and the alternative annotator test on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from sklearn.metrics import cohen_kappa_score

from metaeval.cli import main
from tests.audit.conftest import judge_audit
from tests.audit.hand_alt import alt_by_hand

CLASSES = ("hate", "violence", "none")


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _data(tmp_path: Path, judge_wrong_every: int) -> tuple[Path, Path, dict[str, Any],
                                                           dict[str, Any]]:
    humans: dict[str, dict[str, Any]] = {f"h{k}": {} for k in range(3)}
    judge: dict[str, Any] = {}
    items, log = [], []
    for i in range(40):
        truth = CLASSES[i % 3]
        labels = []
        for k in range(3):
            label = CLASSES[(i + 1) % 3] if i % (k + 4) == k else truth
            labels.append({"annotator": f"h{k}", "label": label})
            humans[f"h{k}"][f"c{i}"] = label
        verdict = CLASSES[(i + 2) % 3] if i % judge_wrong_every == 0 else truth
        judge[f"c{i}"] = verdict
        items.append({"id": f"c{i}", "prompt": "q", "response": "r", "labels": labels})
        log.append({"id": f"c{i}", "verdict": verdict})
    return (_write(tmp_path / "c.ndjson", items), _write(tmp_path / "c.jsonl", log), humans,
            judge)


def _audit(items: Path, log: Path, *extra: str) -> Result:
    return judge_audit("--judge", "j", "--items", str(items), "--recorded", str(log),
                       "--label-classes", ",".join(CLASSES), *extra)


def test_the_confusion_table_and_kappa_match_a_hand_count(tmp_path: Path) -> None:
    items, log, _, judge = _data(tmp_path, 5)
    result = _audit(items, log, "--format", "json")
    assert result.exit_code == 1, result.output
    c = json.loads(result.output)["agreement"]["categorical"]
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    consensus = []
    for row in rows:
        given = [a["label"] for a in row["labels"]]
        consensus.append(max(set(given), key=given.count))
    judged = [judge[r["id"]] for r in rows]
    pairs = list(zip(consensus, judged, strict=True))
    assert c["n"] == 40 and c["correct"] == sum(h == j for h, j in pairs)
    assert c["kappa"]["value"] == pytest.approx(cohen_kappa_score(consensus, judged), abs=1e-4)
    expected = [[sum(h == row and j == col for h, j in zip(consensus, judged, strict=True))
                 for col in CLASSES] + [0] for row in CLASSES]
    assert c["confusion"]["counts"] == expected


@pytest.mark.parametrize(("wrong_every", "passes"), [(1000, True), (2, False)])
def test_the_alternative_annotator_test_runs_on_classes(tmp_path: Path, wrong_every: int,
                                                        passes: bool) -> None:
    items, log, humans, judge = _data(tmp_path, wrong_every)
    document = json.loads(_audit(items, log, "--format", "json").output)
    (panel,) = document["annotators"]
    assert panel["kind"] == "categorical"
    alt = panel["alt_test"]
    ps, rejected, rho = alt_by_hand(humans, judge, 0.1)
    assert [a["p_value"] for a in alt["annotators"]] == pytest.approx(ps)
    assert [a["rejected"] for a in alt["annotators"]] == rejected
    assert alt["advantage_probability"] == pytest.approx(rho, abs=1e-4)
    assert alt["passed"] is passes


def test_a_verdict_or_label_outside_the_classes_is_named(tmp_path: Path) -> None:
    items = _write(tmp_path / "c.ndjson", [
        {"id": "c1", "prompt": "q", "response": "r", "label": "hate"},
        {"id": "c2", "prompt": "q", "response": "r", "label": "spam"},
        {"id": "c3", "prompt": "q", "response": "r", "label": "none"}])
    log = _write(tmp_path / "c.jsonl", [{"id": "c1", "verdict": "spam"},
                                        {"id": "c3", "verdict": "none"}])
    result = _audit(items, log)
    assert result.exit_code == 2
    assert (f"{items}:2: label: got 'spam'; expected 'pass', 'fail' or an integer 1-5 (the "
            "label scale; declare another with --label-scale LOW-HIGH), or a declared class "
            "('hate', 'violence', 'none')") in result.output
    assert f"{log}:1: verdict: got 'spam'; expected a number from 1 to 5" in result.output
    # Without the declaration the class itself is refused: nothing read as a guess.
    plain = CliRunner().invoke(main, ["judge-audit", "--judge", "j", "--items", str(items),
                                      "--recorded", str(log)])
    assert f"{items}:1: label: got 'hate'; expected 'pass', 'fail' or an integer" in (
        plain.output)


@pytest.mark.parametrize("text", ["hate", "hate,hate", "pass,hate", "1,2", "hate,,none"])
def test_bad_classes_are_refused(tmp_path: Path, text: str) -> None:
    items, log, _, _ = _data(tmp_path, 5)
    result = CliRunner().invoke(main, ["judge-audit", "--judge", "j", "--items", str(items),
                                       "--recorded", str(log), "--label-classes", text])
    assert result.exit_code == 2
    assert f"--label-classes: got {text!r}; expected at least two distinct class names" in (
        result.output)


def test_a_live_judge_is_not_asked_for_a_class(tmp_path: Path) -> None:
    items, _, _, _ = _data(tmp_path, 5)
    result = CliRunner().invoke(main, ["judge-audit", "--judge", "steady", "--no-cache",
                                       "--items", str(items), "--label-classes",
                                       ",".join(CLASSES)])
    assert result.exit_code == 2
    assert "categorical labels (--label-classes): audit them from recorded verdicts" in (
        result.output)
