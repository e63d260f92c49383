"""Issue 45 on judge-audit: every input given is used or refused (a second
``--recorded`` adds to the first; ``--alt-epsilon`` with no item to test is said),
and the counts agree with themselves (header, table, JSON, HTML, summary)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.audit.conftest import judge_audit

CLASSES = ("hate", "violence", "none")


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _pairs(tmp_path: Path, n: int, labelled: bool = True) -> Path:
    return _write(tmp_path / "pairs.ndjson", [
        {"id": f"p{i}", "prompt": f"Say {i}", "response_a": f"{i}",
         "response_b": f"I will say {i}.", "label": ("a" if i % 2 else "b") if labelled else None}
        for i in range(n)])


def _log(path: Path, n: int, orders: tuple[str, ...]) -> Path:
    # The judge picks a in both orders on odd pairs, b on even: position-steady.
    return _write(path, [{"id": f"p{i}", "order": o, "verdict": "a" if i % 2 else "b"}
                         for i in range(n) for o in orders])


def test_a_second_recorded_adds_to_the_first(tmp_path: Path) -> None:
    items = _pairs(tmp_path, 10)
    ab, ba = _log(tmp_path / "ab.jsonl", 10, ("ab",)), _log(tmp_path / "ba.jsonl", 10, ("ba",))
    result = judge_audit("--judge", "log", "--items", str(items), "--recorded", str(ab),
                         "--recorded", str(ba), "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.stdout)
    pairwise = document["agreement"]["pairwise"]
    assert pairwise["not_recorded"] == []
    assert sorted(pairwise["orders"]) == ["ab", "ba"]
    assert document["agreement"]["verdicts"] == 20
    assert document["position"]["status"] == "clean"
    # One file alone is one order: the position probe cannot run.
    alone = json.loads(judge_audit("--judge", "log", "--items", str(items), "--recorded",
                                   str(ab), "--format", "json").stdout)
    assert alone["agreement"]["pairwise"]["not_recorded"] == ["ba"]


def test_a_verdict_repeated_across_recorded_files_is_an_error(tmp_path: Path) -> None:
    items = _pairs(tmp_path, 4)
    first = _log(tmp_path / "one.jsonl", 4, ("ab", "ba"))
    second = _log(tmp_path / "two.jsonl", 1, ("ab",))
    result = judge_audit("--judge", "log", "--items", str(items), "--recorded", str(first),
                         "--recorded", str(second))
    assert result.exit_code == 2, result.output
    assert f"{second}:1: sample: got 0; this id, variant and order already has it" \
        in result.stderr


def test_alt_epsilon_with_no_item_of_several_annotators_is_refused(tmp_path: Path) -> None:
    items = _pairs(tmp_path, 6)
    log = _log(tmp_path / "log.jsonl", 6, ("ab", "ba"))
    result = judge_audit("--judge", "log", "--items", str(items), "--recorded", str(log),
                         "--alt-epsilon", "0.2")
    assert result.exit_code == 2, result.output
    assert "--alt-epsilon: got 0.2; the alternative annotator test needs items labelled " \
           "by several annotators" in result.output
    # The mirror: with several annotators' labels the epsilon is taken and used.
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    for row in rows:
        row["labels"] = [{"annotator": f"h{k}", "label": row["label"]} for k in range(3)]
        del row["label"]
    _write(items, rows)
    used = judge_audit("--judge", "log", "--items", str(items), "--recorded", str(log),
                       "--alt-epsilon", "0.2", "--format", "json")
    assert used.exit_code in (0, 1, 4), used.output  # measured (6 pairs may not decide)
    (panel,) = json.loads(used.stdout)["annotators"]
    assert panel["alt_test"]["epsilon"] == 0.2


def _categorical(tmp_path: Path) -> tuple[Path, Path]:
    items, log = [], []
    for i in range(40):
        truth = CLASSES[i % 3]
        items.append({"id": f"c{i}", "prompt": "q", "response": "r",
                      "labels": [{"annotator": f"h{k}", "label": truth} for k in range(3)]})
        log.append({"id": f"c{i}", "verdict": CLASSES[(i + 1) % 3] if i % 5 == 0 else truth})
    return _write(tmp_path / "c.ndjson", items), _write(tmp_path / "c.jsonl", log)


def test_categorical_items_are_counted_as_labelled(tmp_path: Path) -> None:
    items, log = _categorical(tmp_path)
    args = ("--judge", "j", "--items", str(items), "--recorded", str(log),
            "--label-classes", ",".join(CLASSES))
    text = judge_audit(*args)
    assert text.exit_code in (0, 1), text.output
    assert "items: 40 labelled, 0 probe(s)" in text.output
    assert "no human-labelled items" not in text.output
    assert "verdicts: 40 on labelled items" in text.output
    document = json.loads(judge_audit(*args, "--format", "json").stdout)
    agreement = document["agreement"]
    assert (agreement["labelled_items"], agreement["unlabelled_items"],
            agreement["probe_items"]) == (40, 0, 0)
    assert agreement["categorical"]["n"] == agreement["labelled_items"]
    assert not any("agreement not measured" in r for r in document["reasons"])


def test_an_unlabelled_pairwise_log_says_unlabelled_not_probes(tmp_path: Path) -> None:
    items = _pairs(tmp_path, 20, labelled=False)
    log = _log(tmp_path / "log.jsonl", 20, ("ab", "ba"))
    args = ("--judge", "log", "--items", str(items), "--recorded", str(log))
    text = judge_audit(*args)
    assert text.exit_code == 1, text.output
    assert "items: 0 labelled, 20 unlabelled, 0 probe(s)" in text.output
    assert "on labelled items" not in text.output
    assert "verdicts: 40 on items (20 of them unlabelled)" in text.output
    assert "no human-labelled items: agreement not measured" in text.output
    agreement = json.loads(judge_audit(*args, "--format", "json").stdout)["agreement"]
    assert (agreement["labelled_items"], agreement["unlabelled_items"],
            agreement["probe_items"], agreement["verdicts"]) == (0, 20, 0, 40)
    html = tmp_path / "a.html"
    summary = tmp_path / "s.md"
    assert judge_audit(*args, "--html", str(html), "--summary", str(summary)).exit_code == 1
    for page in (html.read_text(), summary.read_text()):
        assert "0 labelled items, 20 unlabelled, 0 probe(s)" in page
