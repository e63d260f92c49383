"""``judge-audit --by category``: agreement, the position probe and the annotators'
figures per category, on pairwise and pointwise items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import Result

from tests.audit.conftest import judge_audit


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _pairs_and_log(tmp_path: Path) -> tuple[Path, Path]:
    """24 pairs in 'code' and 24 in 'chat' (label a), 6 with no category; the logged
    judge picks the first shown on every 'code' pair (position-driven) and is right
    in both orders on every 'chat' pair."""
    items, log = [], []
    for i in range(54):
        category = "code" if i < 24 else "chat" if i < 48 else None
        item = {"id": f"p{i}", "prompt": "q", "response_a": "x", "response_b": "y",
                "label": "a", **({"category": category} if category else {}),
                "metadata": {"row": i}}
        items.append(item)
        for order in ("ab", "ba"):
            first = "a" if order == "ab" else "b"
            verdict = first if category == "code" else "a"
            log.append({"id": f"p{i}", "order": order, "verdict": verdict})
    return _write(tmp_path / "items.ndjson", items), _write(tmp_path / "log.jsonl", log)


def _audit(*args: str) -> Result:
    return judge_audit("--judge", "j", *args)


def test_position_bias_is_found_in_one_category_and_not_the_other(tmp_path: Path) -> None:
    items, log = _pairs_and_log(tmp_path)
    result = _audit("--items", str(items), "--recorded", str(log), "--by", "category",
                    "--format", "json")
    assert result.exit_code == 1, result.output
    rows = json.loads(result.output)["by_category"]
    assert [r["category"] for r in rows] == ["chat", "code", None]
    chat, code, none = rows
    assert code["position"]["status"] == "FOUND" and code["position"]["flips"] == 24
    assert chat["position"]["status"] == "clean" and chat["position"]["flips"] == 0
    assert [r["pairwise"]["n"] for r in rows] == [24, 24, 6]
    assert chat["pairwise"]["orders"]["ba"]["correct"] == 24
    assert code["pairwise"]["orders"]["ba"]["correct"] == 0
    assert none["items"] == 6


def test_without_by_there_is_no_breakdown(tmp_path: Path) -> None:
    items, log = _pairs_and_log(tmp_path)
    result = _audit("--items", str(items), "--recorded", str(log), "--format", "json")
    assert json.loads(result.output)["by_category"] is None
    assert "by category" not in _audit("--items", str(items), "--recorded", str(log)).output


def test_pointwise_items_by_category_with_their_annotators(tmp_path: Path) -> None:
    items, log = [], []
    for i in range(40):
        category = "billing" if i % 2 else "shipping"
        truth = "pass" if i % 4 < 2 else "fail"
        labels = [{"annotator": f"h{k}", "label": truth if i % (k + 5) else
                   ("fail" if truth == "pass" else "pass")} for k in range(3)]
        items.append({"id": f"s{i}", "prompt": "q", "response": "r", "category": category,
                      "labels": labels})
        # The judge is right on billing and says pass on every shipping item.
        log.append({"id": f"s{i}", "verdict": 5 if category == "shipping" or truth == "pass"
                    else 1})
    path, recorded = (_write(tmp_path / "p.ndjson", items), _write(tmp_path / "p.jsonl", log))
    result = _audit("--items", str(path), "--recorded", str(recorded), "--by", "category",
                    "--format", "json")
    rows = {r["category"]: r for r in json.loads(result.output)["by_category"]}
    # Right against the truth; the consensus misses it where two annotators slip (i=35).
    assert rows["billing"]["pointwise"]["kappa"]["value"] > 0.8
    assert rows["shipping"]["pointwise"]["tnr"]["value"] == 0.0
    billing = rows["billing"]["annotators"][0]["agreement"]["judge_with_annotators"]
    shipping = rows["shipping"]["annotators"][0]["agreement"]["judge_with_annotators"]
    assert billing["same_label"] > shipping["same_label"]
    # 20 items a category: fewer than the test's 30 per annotator, and it says so.
    assert rows["billing"]["annotators"][0]["alt_test"]["reason"].startswith(
        "0 annotator(s) with >= 30 items")


def test_a_category_name_is_escaped_in_html_and_markdown(tmp_path: Path) -> None:
    items, log = _pairs_and_log(tmp_path)
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    for row in rows[:24]:
        row["category"] = "<script>x|y</script>"
    _write(items, rows)
    html, summary = tmp_path / "a.html", tmp_path / "s.md"
    result = _audit("--items", str(items), "--recorded", str(log), "--by", "category",
                    "--html", str(html), "--summary", str(summary))
    assert result.exit_code == 1, result.output
    page = html.read_text()
    assert "<script>x" not in page and "&lt;script&gt;x|y&lt;/script&gt;" in page
    assert "\\<script\\>x\\|y\\</script\\>" in summary.read_text()
