"""Defects that real judge data shows (issue 16): empty responses, bad lines among
good ones, logs with one order, integer labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from metaeval.cli import main


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["judge-audit", "--no-cache", *args])


def _pairs(n: int) -> list[dict[str, Any]]:
    return [{"id": f"p{i}", "prompt": f"Say {i}", "response_a": "" if i % 3 == 0 else f"{i}",
             "response_b": f"I will say {i}.", "label": "b" if i % 3 == 0 else "a"}
            for i in range(n)]


def test_an_empty_response_loads_and_is_judged(tmp_path: Path) -> None:
    items = _write(tmp_path / "pairs.ndjson", _pairs(6))
    result = _run("--judge", "steady", "--items", str(items), "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.output)
    assert document["agreement"]["pairwise"]["n"] == 6
    assert document["errors"] == []


def test_a_response_that_is_not_a_string_is_still_a_file_line_error(tmp_path: Path) -> None:
    rows = _pairs(6)
    rows[2]["response_a"] = True
    items = _write(tmp_path / "pairs.ndjson", rows)
    result = _run("--judge", "steady", "--items", str(items), "--format", "json")
    assert result.exit_code == 2
    error = f"{items}:3: response_a: got true; expected a string (empty allowed)"
    # Named, left out, and the other five audited.
    document = json.loads(result.stdout)
    assert document["errors"] == [error]
    assert document["agreement"]["pairwise"]["n"] == 5
    assert f"error: {error}" in result.stderr


def test_bad_lines_are_named_and_the_rest_audited_in_the_table_too(tmp_path: Path) -> None:
    rows = _pairs(6)
    rows[4]["label"] = "first"
    items = _write(tmp_path / "pairs.ndjson", rows)
    result = _run("--judge", "steady", "--items", str(items))
    assert result.exit_code == 2
    assert "bad input (left out, exit 2): 1 line(s)" in result.stdout
    assert f"{items}:5: label: got 'first'" in result.stdout
    assert "verdict:" in result.stdout


def test_a_file_with_no_good_line_is_still_refused(tmp_path: Path) -> None:
    items = _write(tmp_path / "pairs.ndjson", [{"id": "x", "prompt": "q", "response_a": 1,
                                                "response_b": "b", "label": "a"}])
    result = _run("--judge", "steady", "--items", str(items))
    assert result.exit_code == 2
    assert "verdict:" not in result.output
    assert "response_a: got 1" in result.output


def test_bad_recorded_lines_are_left_out_and_named(tmp_path: Path) -> None:
    items = _write(tmp_path / "pairs.ndjson", _pairs(6))
    recorded = _write(tmp_path / "log.jsonl",
                      [{"id": f"p{i}", "order": o, "verdict": "a"} for i in range(6)
                       for o in ("ab", "ba")] + [{"id": "nope", "verdict": "a"},
                                                 {"id": "p1", "verdict": "first"}])
    result = _run("--judge", "gpt", "--items", str(items), "--recorded", str(recorded),
                  "--format", "json")
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    assert document["agreement"]["pairwise"]["n"] == 6
    assert len(document["errors"]) == 2
    assert f"{recorded}:13: id: got 'nope'" in document["errors"][1]
    assert f"{recorded}:14: verdict: got 'first'" in document["errors"][0]


def _one_order_log(tmp_path: Path, n: int = 12) -> tuple[Path, Path, list[str], list[str]]:
    """``n`` pairs (every third with an empty response), recorded in order ab only;
    one verdict null. Returns the files and the human and judged labels."""
    rows = _pairs(n)
    items = _write(tmp_path / "pairs.ndjson", rows)
    judged: list[str | None] = [r["label"] if i % 4 else ("b" if r["label"] == "a" else "a")
                                for i, r in enumerate(rows)]
    judged[5] = None  # 1 of 12 (8%): under the 10% bar; over 24 slots it was 13 of 24
    recorded = _write(tmp_path / "log.jsonl", [{"id": r["id"], "order": "ab", "verdict": j}
                                               for r, j in zip(rows, judged, strict=True)])
    return items, recorded, [r["label"] for r in rows], ["unscored" if j is None else j
                                                         for j in judged]


def test_an_order_never_recorded_is_not_recorded_not_unscored(tmp_path: Path) -> None:
    from sklearn.metrics import cohen_kappa_score

    items, recorded, human, judged = _one_order_log(tmp_path)
    result = _run("--judge", "gpt", "--items", str(items), "--recorded", str(recorded),
                  "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.output)
    pair = document["agreement"]["pairwise"]
    assert list(pair["orders"]) == ["ab"]
    assert pair["not_recorded"] == ["ba"]
    assert pair["orders"]["ab"]["kappa"]["value"] == round(cohen_kappa_score(human, judged), 4)
    # Unscored over the 12 verdicts that exist, not the 24 slots of two orders.
    assert (document["agreement"]["unscored"], document["agreement"]["verdicts"]) == (1, 12)
    assert document["position"]["status"] == "not run"
    assert document["position"]["reason"].startswith("one order recorded (ab)")
    reasons = document["reasons"]
    assert not any(r.startswith("unscored") for r in reasons), reasons
    assert any(r.startswith("position probe not run: one order recorded (ab)")
               for r in reasons), reasons


def test_the_one_order_table_shows_no_empty_row(tmp_path: Path) -> None:
    items, recorded, _, _ = _one_order_log(tmp_path)
    result = _run("--judge", "gpt", "--items", str(items), "--recorded", str(recorded))
    rows = [line.split()[0] for line in result.output.splitlines() if line[:3] in ("ab ", "ba ")]
    assert rows == ["ab"]
    assert "order ba not recorded" in result.output
    assert "position bias: not run (one order recorded (ab)" in result.output


def test_both_orders_recorded_still_run_the_position_probe(tmp_path: Path) -> None:
    rows = _pairs(6)
    items = _write(tmp_path / "pairs.ndjson", rows)
    recorded = _write(tmp_path / "log.jsonl", [{"id": r["id"], "order": o, "verdict": None
                                                if (r["id"], o) == ("p1", "ba") else "a"}
                                               for r in rows for o in ("ab", "ba")])
    document = json.loads(_run("--judge", "gpt", "--items", str(items), "--recorded",
                               str(recorded), "--format", "json").output)
    assert list(document["agreement"]["pairwise"]["orders"]) == ["ab", "ba"]
    assert document["position"]["status"] != "not run"
    assert (document["agreement"]["unscored"], document["agreement"]["verdicts"]) == (1, 12)
