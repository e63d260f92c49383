"""Each annotator's own position bias on pairwise items, as ``judge-audit --labels``
reports it: labels written by hand with the order each pair was shown in, the
p-value checked against scipy's ``binomtest``, a steady annotator clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scipy.stats import binomtest

from metaeval.audit.annotator_position import annotator_position
from metaeval.audit.bias_probes import ProbeStatus
from metaeval.cli import main

PAIRS = 12


def _pick(first: bool, shown: str) -> str:
    """The label that names the response shown first (or second) in ``shown``."""
    return shown[0] if first else shown[1]


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """12 pairs whose ``response_a`` is the right one, a judge's verdicts on them, and
    a labels file by hand: ``lefty`` picks the side shown first on all but one pair,
    ``steady`` picks ``a`` (the content) whichever side it was shown on, ``mixed``
    picks first on 8 of 11 and ties one, ``unrecorded`` has no order recorded."""
    monkeypatch.chdir(tmp_path)
    items = [{"id": f"p{i}", "prompt": f"q{i}", "response_a": "right", "response_b": "wrong",
              "label": "a"} for i in range(PAIRS)]
    recorded = [{"id": f"p{i}", "order": "ab", "verdict": "a"} for i in range(PAIRS)]
    rows = []
    for i in range(PAIRS):
        shown = "ab" if i % 2 else "ba"
        rows.append({"item_id": f"p{i}", "annotator": "lefty", "shown": shown,
                     "label": _pick(i != 3, shown)})
        rows.append({"item_id": f"p{i}", "annotator": "steady", "shown": shown, "label": "a"})
        rows.append({"item_id": f"p{i}", "annotator": "mixed", "shown": shown,
                     "label": "tie" if i == 0 else _pick(i % 4 != 1, shown)})
        rows.append({"item_id": f"p{i}", "annotator": "unrecorded", "label": "a"})
    for name, lines in (("items.ndjson", items), ("rec.jsonl", recorded),
                        ("labels.jsonl", rows)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in lines))
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n")


def _audit(*extra: str) -> Any:
    return CliRunner().invoke(main, ["judge-audit", "--judge", "j", "--items", "items.ndjson",
                                     "--recorded", "rec.jsonl", "--labels", "labels.jsonl",
                                     *extra], catch_exceptions=False)


def test_judge_audit_flags_an_annotator_who_picks_the_first_side(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path, monkeypatch)
    result = _audit("--format", "json")
    assert result.exit_code in (0, 1), result.output
    got = {p["annotator"]: p for p in json.loads(result.output)["annotator_position"]}
    # "unrecorded" gave no order shown: nothing of it to test, so no entry.
    assert list(got) == ["lefty", "steady", "mixed"]
    lefty, steady, mixed = got["lefty"], got["steady"], got["mixed"]
    assert (lefty["first"], lefty["second"], lefty["ties"]) == (11, 1, 0)
    assert lefty["shown"] == {"ab": 6, "ba": 6}
    assert lefty["p_value"] == pytest.approx(binomtest(11, 12, 0.5).pvalue, rel=1e-9)
    assert lefty["status"] == "FOUND"
    # Must say no: the steady annotator chose by content, so half its picks were first.
    assert (steady["first"], steady["second"]) == (6, 6)
    assert steady["p_value"] == pytest.approx(binomtest(6, 12, 0.5).pvalue) == 1.0
    assert steady["status"] == "clean"
    # 8 of 11 first is a lean, not beyond chance at 0.05 (p = 0.227); the tie left out.
    assert (mixed["first"], mixed["second"], mixed["ties"]) == (8, 3, 1)
    assert mixed["p_value"] == pytest.approx(binomtest(8, 11, 0.5).pvalue, rel=1e-9)
    assert mixed["status"] == "clean"

    table = _audit("--format", "table").output
    assert "annotators' position bias" in table and "FOUND for lefty" in table
    assert "steady" in table.split("FOUND for")[1].split("\n", 2)[2]


def test_a_steady_panel_is_none_found(tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path, monkeypatch)
    rows = [json.loads(line) for line in Path("labels.jsonl").read_text().splitlines()]
    Path("labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows
                                            if r["annotator"] != "lefty"))
    table = _audit("--format", "table").output
    assert "annotators' position bias" in table and "none found" in table
    assert "FOUND for" not in table


def test_no_order_recorded_no_position_section(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path, monkeypatch)
    rows = [json.loads(line) for line in Path("labels.jsonl").read_text().splitlines()]
    Path("labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows
                                            if r["annotator"] == "unrecorded"))
    result = _audit("--format", "json")
    assert json.loads(result.output)["annotator_position"] == []
    assert "position bias (pairs as shown" not in _audit("--format", "table").output


@pytest.mark.parametrize(("picks", "reason"), [
    ([("a", "ab")] * 10, "every pair shown in one order (ab)"),
    ([("b", "ba")] * 3, "every pair shown in one order (ba)"),
    ([("tie", "ab"), ("tie", "ba")], "ties only"),
    ([], "no pair with the order shown recorded"),
])
def test_nothing_to_test_is_not_run_never_clean(picks: list[tuple[str, str]],
                                                reason: str) -> None:
    # Ten "a" shown "ab" is ten firsts, but also ten picks of response a: the order
    # was never drawn, so position cannot be told from content.
    got = annotator_position("x", picks)
    assert got.status is ProbeStatus.NOT_RUN and got.reason.startswith(reason)
    assert got.p_value == 1.0


@pytest.mark.parametrize(("first", "second"), [(10, 0), (0, 10), (15, 5), (30, 21), (1, 1)])
def test_the_p_value_is_scipys_two_sided_binomial(first: int, second: int) -> None:
    # Each way of picking the first (second) side, in turn: the sides drawn both ways.
    picks = ([(("a", "ab"), ("b", "ba"))[i % 2] for i in range(first)]
             + [(("a", "ba"), ("b", "ab"))[i % 2] for i in range(second)])
    got = annotator_position("x", picks, alpha=0.05)
    expected = binomtest(first, first + second, 0.5).pvalue
    assert got.p_value == pytest.approx(expected, rel=1e-9)
    assert got.status is (ProbeStatus.FOUND if expected < 0.05 else ProbeStatus.CLEAN)
    assert (got.first, got.second) == (first, second)


def test_a_label_the_loaders_refuse_is_a_bug_not_a_guess() -> None:
    with pytest.raises(ValueError, match="expected a label in"):
        annotator_position("x", [("left", "ab")])


HOSTILE = "ana\n::error title=pwned::x <script>alert(1)</script>"


def test_a_hostile_annotator_name_is_text_in_the_table_and_the_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path, monkeypatch)
    text = Path("labels.jsonl").read_text().replace('"lefty"', json.dumps(HOSTILE))
    Path("labels.jsonl").write_text(text)
    result = _audit("--format", "table", "--html", "audit.html")
    assert result.exit_code in (0, 1), result.output
    lines = result.output.split("\n")
    assert not [line for line in lines if line.lstrip().startswith("::")]
    assert "FOUND for ana\\n::error title=pwned::x <script>" in result.output
    page = Path("audit.html").read_text()
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page
    assert "Each annotator's own position bias" in page and "FOUND" in page
