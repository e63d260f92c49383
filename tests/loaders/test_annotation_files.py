"""``metaeval judge-import annotations``: {annotator: {item_id: label}} files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from metaeval.cli import main


def _json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["judge-import", "annotations", *args])


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_pairs_and_a_judge_are_mapped_to_items_and_verdicts(tmp_path: Path) -> None:
    humans = _json(tmp_path / "h.json", {"ann1": {"i1": "model_a", "i2": "tie"},
                                         "ann2": {"i1": "model_b"}})
    judges = _json(tmp_path / "j.json", {"gpt": {"i1": "model_b", "i2": None, "i9": "tie"},
                                         "other": {"i1": "tie"}})
    items, recorded = tmp_path / "items.ndjson", tmp_path / "rec.jsonl"
    result = _run(str(humans), "--judge-labels", str(judges), "--judge", "gpt",
                  "--items", str(items), "--recorded", str(recorded))
    assert result.exit_code == 0, result.output
    assert "1 on items no annotator labelled, left out" in result.output
    first, second = _lines(items)
    assert first["labels"] == [{"annotator": "ann1", "label": "a"},
                               {"annotator": "ann2", "label": "b"}]
    assert second["labels"] == [{"annotator": "ann1", "label": "tie"}]
    assert _lines(recorded) == [{"id": "i1", "order": "ab", "verdict": "b"},
                                {"id": "i2", "order": "ab", "verdict": None}]


def test_a_label_with_no_mapping_is_an_error_and_map_adds_one(tmp_path: Path) -> None:
    humans = _json(tmp_path / "h.json", {"ann1": {"i1": 0, "i2": 2}})
    items = tmp_path / "items.ndjson"
    refused = _run(str(humans), "--items", str(items))
    assert refused.exit_code == 2
    assert (f"{humans}: ann1: i1: got 0; expected one of 'a', 'b', 'tie', 'model_a', "
            "'model_b' (add a mapping with --map FROM=TO)") in refused.output
    assert not items.exists()
    mapped = _run(str(humans), "--items", str(items), "--map", "0=tie", "--map", "2=b")
    assert mapped.exit_code == 0, mapped.output
    assert [r["labels"][0]["label"] for r in _lines(items)] == ["tie", "b"]
    bad_map = _run(str(humans), "--items", str(items), "--map", "0=first")
    assert "--map: got '0=first'; expected TO to be a, b or tie" in bad_map.output


def test_several_judges_are_all_written_each_named_unless_one_is_picked(tmp_path: Path
                                                                        ) -> None:
    humans = _json(tmp_path / "h.json", {"ann1": {"i1": "pass"}})
    judges = _json(tmp_path / "j.json", {"x": {"i1": "fail"}, "y": {"i1": "pass"}})
    out = ["--items", str(tmp_path / "i.ndjson"), "--recorded", str(tmp_path / "r.jsonl")]
    result = _run(str(humans), "--kind", "pointwise", "--judge-labels", str(judges), *out)
    assert result.exit_code == 0, result.output
    assert "2 recorded verdicts of 2 judges ->" in result.output
    assert _lines(tmp_path / "r.jsonl") == [
        {"id": "i1", "order": "ab", "verdict": "fail", "judge": "x"},
        {"id": "i1", "order": "ab", "verdict": "pass", "judge": "y"}]
    # one picked: a one-judge log, as before (no judge field to select by)
    picked = _run(str(humans), "--kind", "pointwise", "--judge-labels", str(judges),
                  "--judge", "y", *out)
    assert picked.exit_code == 0, picked.output
    assert _lines(tmp_path / "r.jsonl") == [{"id": "i1", "order": "ab", "verdict": "pass"}]
    flat = _json(tmp_path / "flat.json", {"i1": 4})
    done = _run(str(humans), "--kind", "pointwise", "--judge-labels", str(flat), *out)
    assert done.exit_code == 0, done.output
    assert _lines(tmp_path / "r.jsonl") == [{"id": "i1", "order": "ab", "verdict": 4}]
