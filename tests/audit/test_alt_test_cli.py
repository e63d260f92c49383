"""The alternative annotator test in ``metaeval judge-audit``: its epsilon from the
flag, the config or the annotators' kind, and the config that requires it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from tests.audit.conftest import judge_audit_json

TRUTH = ("a", "b", "tie")


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, annotators: int,
             config: str = "") -> tuple[Path, Path]:
    """40 pairs labelled by ``annotators`` people (annotator k wrong on every (k+4)-th),
    and a judge's verdicts right on all of them."""
    items, recorded = [], []
    for i in range(40):
        truth = TRUTH[i % 3]
        labels = [{"annotator": f"h{k}", "label": TRUTH[(i + 1) % 3] if i % (k + 4) == k
                   else truth} for k in range(annotators)]
        items.append({"id": f"p{i}", "prompt": "q", "response_a": "x", "response_b": "y",
                      "labels": labels})
        recorded.append({"id": f"p{i}", "order": "ab", "verdict": truth})
    (tmp_path / "pyproject.toml").write_text(f"[tool.metaeval.judge_audit]\n{config}\n")
    monkeypatch.chdir(tmp_path)
    for name, rows in (("items.ndjson", items), ("rec.jsonl", recorded)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path / "items.ndjson", tmp_path / "rec.jsonl"


def _audit(items: Path, recorded: Path, *extra: str) -> dict[str, Any]:
    return judge_audit_json("--judge", "j", "--items", str(items), "--recorded", str(recorded),
                            *extra)


def test_epsilon_comes_from_the_flag_the_config_or_the_annotators_kind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items, recorded = _project(tmp_path, monkeypatch, 3, 'annotators = "experts"')
    alt = _audit(items, recorded)["annotators"][0]["alt_test"]
    assert (alt["epsilon"], alt["epsilon_from"]) == (0.2, "annotators = 'experts'")
    assert alt["passed"] is True
    flagged = _audit(items, recorded, "--alt-epsilon", "0.05")["annotators"][0]["alt_test"]
    assert (flagged["epsilon"], flagged["epsilon_from"]) == (0.05, "--alt-epsilon")


def test_the_default_epsilon_is_the_crowds(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    items, recorded = _project(tmp_path, monkeypatch, 3)
    alt = _audit(items, recorded)["annotators"][0]["alt_test"]
    assert alt["epsilon"] == 0.1 and alt["epsilon_from"].startswith("default")


def test_a_test_that_cannot_run_is_a_reason_only_when_required(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items, recorded = _project(tmp_path, monkeypatch, 2)
    document = _audit(items, recorded)
    assert document["annotators"][0]["alt_test"]["ran"] is False
    assert not any("alternative annotator" in r for r in document["reasons"])
    (tmp_path / "pyproject.toml").write_text(
        "[tool.metaeval.judge_audit]\nrequire_alt_test = true\n")
    required = _audit(items, recorded)
    # Short of items it is inconclusive, with the items a simulation says would decide it.
    assert required["verdict"] in ("inconclusive", "report only")
    assert any(r.startswith("alternative annotator test (pairwise) not run (2 annotator(s) "
                            "with >= 30 items") and "require_alt_test is set" in r
               and r.endswith("would likely decide it (simulated from the observed duels)")
               for r in required["reasons"]), required["reasons"]


def test_the_text_report_shows_the_human_ceiling(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    items, recorded = _project(tmp_path, monkeypatch, 3)
    result = CliRunner().invoke(main, ["judge-audit", "--judge", "j", "--items", str(items),
                                       "--recorded", str(recorded), "--alt-epsilon", "0.5"])
    assert "--alt-epsilon: got 0.5" not in result.output
    assert "human ceiling, annotators with each other: Krippendorff's alpha" in result.output
    assert "alternative annotator test (pairwise; accuracy; epsilon 0.5" in result.output
    bad = CliRunner().invoke(main, ["judge-audit", "--judge", "j", "--items", str(items),
                                    "--recorded", str(recorded), "--alt-epsilon", "1"])
    assert bad.exit_code == 2
    assert "--alt-epsilon: got 1.0; expected a number in [0, 1)" in bad.output
