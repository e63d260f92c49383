"""Several annotators' labels, a category and metadata on judge items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from metaeval.loaders.judge_items import load_judge_items


def _load(tmp_path: Path, rows: list[dict[str, Any]], labels: tuple[int, int] = (1, 5)
          ) -> Any:
    path = tmp_path / "items.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return load_judge_items([path], labels), path


def _pair(i: str, **extra: Any) -> dict[str, Any]:
    return {"id": i, "prompt": "q", "response_a": "x", "response_b": "y", **extra}


def _ann(*labels: Any) -> list[dict[str, Any]]:
    return [{"annotator": f"a{n}", "label": label} for n, label in enumerate(labels)]


def test_the_consensus_is_the_label_most_annotators_gave(tmp_path: Path) -> None:
    items, _ = _load(tmp_path, [_pair("p1", labels=_ann("a", "b", "a")),
                                _pair("p2", labels=_ann("a", "b")),
                                _pair("p3", label="b", labels=_ann("a", "a"))])
    assert not items.errors
    by_id = {p.id: p for p in items.pairwise}
    assert by_id["p1"].label == "a" and by_id["p1"].consensus
    assert not by_id["p2"].consensus  # a tie for the most: no label guessed
    assert by_id["p3"].label == "b"  # the item's own label wins over the annotators'
    assert [a.annotator for a in by_id["p1"].annotations] == ["a0", "a1", "a2"]


def test_a_pointwise_consensus_is_pass_fail_or_a_score(tmp_path: Path) -> None:
    base = {"prompt": "q", "response": "r"}
    items, _ = _load(tmp_path, [{"id": "s", **base, "labels": _ann(4, 4, 2)},
                                {"id": "v", **base, "labels": _ann("fail", "fail")},
                                {"id": "n", **base, "labels": _ann(1, 5)}])
    by_id = {p.id: p for p in items.pointwise}
    assert (by_id["s"].score, by_id["s"].verdict) == (4, None)
    assert (by_id["v"].score, by_id["v"].verdict) == (None, "fail")
    assert not by_id["n"].consensus


def test_bad_labels_are_named_by_field(tmp_path: Path) -> None:
    base = {"prompt": "q", "response": "r"}
    items, path = _load(tmp_path, [
        _pair("p1", labels=[{"annotator": "x", "label": "a"}, {"annotator": "x", "label": "b"}]),
        _pair("p2", labels=_ann("a", "maybe")),
        {"id": "s1", **base, "labels": _ann(4, "pass")},
        {"id": "s2", **base, "labels": _ann(9)},
        _pair("p3", labels=[]),
        _pair("p4", labels=[{"annotator": "x", "label": "a", "note": 1}]),
        _pair("p5", label="a", category=""),
        _pair("p6", label="a", metadata=[1]),
        _pair("ok", label="a", category="coding", metadata={"source": "x", "n": [1]}),
    ])
    assert [str(e).split(": ", 1)[1] for e in items.errors] == [
        "labels[1].annotator: got 'x' again (first at labels[0]); expected each annotator "
        "once per item",
        "labels[1].label: got 'maybe'; expected one of 'a', 'b', 'tie'",
        "labels[1].label: got 'pass' beside 4 at labels[0]; expected every annotator's label "
        "of one kind (all integers, or all strings)",
        "labels[0].label: got 9; expected 'pass', 'fail' or an integer 1-5 (the label scale; "
        "declare another with --label-scale LOW-HIGH)",
        "labels: got []; expected a non-empty list of {\"annotator\": ..., \"label\": ...} "
        "objects",
        "labels[0].note: unknown field; expected one of annotator, label",
        "category: got ''; expected a non-empty string (the item's scenario, for --by "
        "category)",
        "metadata: got [1]; expected a JSON object (kept as read, never interpreted)",
    ]
    (ok,) = items.pairwise
    assert ok.category == "coding" and ok.metadata == {"source": "x", "n": [1]}
    assert str(items.errors[0]).startswith(f"{path}:1: ")


def test_validate_reads_categorical_items_with_the_configured_classes(
        tmp_path: Path, monkeypatch: Any) -> None:
    from click.testing import CliRunner

    from metaeval.cli import main

    path = tmp_path / "items.ndjson"
    path.write_text(json.dumps({"id": "c1", "prompt": "q", "response": "r", "category": "x",
                                "labels": [{"annotator": "a", "label": "hate"},
                                           {"annotator": "b", "label": "none"}]}) + "\n")
    monkeypatch.chdir(tmp_path)
    refused = CliRunner().invoke(main, ["validate", str(path)])
    assert refused.exit_code == 2 and "labels[0].label: got 'hate'" in refused.output
    (tmp_path / "pyproject.toml").write_text(
        '[tool.metaeval.judge_audit]\nlabel_classes = ["hate", "none"]\n')
    assert CliRunner().invoke(main, ["validate", str(path)]).exit_code == 0
