"""The published importers keep the judge's name the tool logged (``judge`` on each
recorded verdict) and AlpacaEval's recorded price (``usage.cost``), on the real
samples in ../shared/data/judge-logs (skipped without them; METAEVAL_JUDGE_LOGS
names them elsewhere): the names and the cost per item equal what the raw logs say,
read here on their own."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from metaeval.cli import main

LOGS = Path(os.environ.get("METAEVAL_JUDGE_LOGS", "")
            or Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "judge-logs")
pytestmark = pytest.mark.skipif(not (LOGS / "NOTES.md").is_file(),
                                reason="../shared/data/judge-logs is not beside the repository")
ALPACA = (LOGS / "alpaca-eval" / "results" / "gpt-3.5-turbo-1106"
          / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json")


def _import(tmp_path: Path, fmt: str, log: Path) -> tuple[Path, list[dict[str, Any]]]:
    items, recorded = tmp_path / "items.ndjson", tmp_path / "recorded.jsonl"
    done = CliRunner().invoke(main, ["judge-import", fmt, str(log), "--items", str(items),
                                     "--recorded", str(recorded)])
    assert done.exit_code == 0, done.output
    return items, [json.loads(line) for line in recorded.read_text().splitlines()]


def _raw_lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(("fmt", "log", "name_of"), [
    ("arena-hard", LOGS / "arena-hard-auto" / "model_judgment" / "gpt-4o" / "gpt-4o-mini.jsonl",
     lambda raw: raw["judge"]),
    ("mt-bench-pair", LOGS / "mt-bench-fastchat" / "stefanstud-FastChat" / "model_judgment"
     / "gpt-4_pair.jsonl", lambda raw: raw["judge"][0]),
])
def test_the_judge_the_log_names_is_kept_on_every_verdict(
        tmp_path: Path, fmt: str, log: Path, name_of: Any) -> None:
    _, recorded = _import(tmp_path, fmt, log)
    expected = {name_of(raw) for raw in _raw_lines(log)}
    assert {r["judge"] for r in recorded} == expected
    assert len(expected) == 1 and all("judge" in r for r in recorded)


def test_alpaca_eval_s_recorded_price_is_its_cost_per_item_side_by_side(
        tmp_path: Path) -> None:
    raw = json.loads(ALPACA.read_text())
    prices = [r["price_per_example"] for r in raw
              if isinstance(r["price_per_example"], float)
              and math.isfinite(r["price_per_example"])]
    assert 0 < len(prices) < len(raw)  # one annotation's price is null: not known, not 0
    items, recorded = _import(tmp_path, "alpaca-eval", ALPACA)
    assert {r["judge"] for r in recorded} == {raw[0]["annotator"]}
    # no --judge: every judge the log names (one here), with its cost
    result = CliRunner().invoke(main, ["judge-audit", "--items", str(items), "--recorded",
                                       str(tmp_path / "recorded.jsonl"), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    (row,) = json.loads(result.stdout)["judges"]
    assert row["judge"] == "weighted_alpaca_eval_gpt4_turbo"
    assert row["cost"]["price_from"] == "the log"
    assert row["cost"]["per_item"] == pytest.approx(sum(prices) / len(prices))
    assert row["cost"]["verdicts_with_usage"] == len(prices)
    assert row["cost"]["note"] == f"usage on {len(prices)} of {len(raw)} verdicts"
    assert row["cost"]["input_tokens_per_item"] is None  # the log records no tokens
    assert row["cost_per_point"] is None  # no human label: no agreement to divide by
