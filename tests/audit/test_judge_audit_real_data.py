"""Defects that real judge data shows (issue 16): empty responses, bad lines among
good ones, logs with one order, integer labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from metaeval.cli import main
from tests.audit.conftest import judge_audit


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(*args: str) -> Result:
    return judge_audit("--no-cache", *args)


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


SCORES = [(5, 5), (4, 3), (2, 4), (1, 1), (3, 3), (4, 4), (5, 2), (2, 2), (3, 5), (1, 4),
          (4, 5), (2, 1), (5, 4), (3, 2), (1, 2), (4, 1)]
"""(human label, recorded judge score) per item, both 1-5."""


def _scored(tmp_path: Path, pairs: list[tuple[int, int]], label: str = "label"
            ) -> tuple[Path, Path]:
    items = _write(tmp_path / "points.ndjson",
                   [{"id": f"s{i}", "prompt": "q", "response": "r", label: h}
                    for i, (h, _) in enumerate(pairs)])
    recorded = _write(tmp_path / "log.jsonl",
                      [{"id": f"s{i}", "verdict": g} for i, (_, g) in enumerate(pairs)])
    return items, recorded


def test_integer_labels_reach_pass_fail_as_scikit_learn_counts_them(tmp_path: Path) -> None:
    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    items, recorded = _scored(tmp_path, SCORES)
    result = _run("--judge", "gpt", "--items", str(items), "--recorded", str(recorded),
                  "--format", "json")
    assert result.exit_code in (0, 1), result.output
    point = json.loads(result.output)["agreement"]["pointwise"]
    human = [h >= 4 for h, _ in SCORES]
    judged = [g >= 4 for _, g in SCORES]
    tn, fp, fn, tp = confusion_matrix(human, judged, labels=[False, True]).ravel()
    assert (point["tp"], point["fn"], point["tn"], point["fp"]) == (tp, fn, tn, fp)
    assert point["kappa"]["value"] == round(cohen_kappa_score(human, judged), 4)


def test_a_declared_label_scale_and_pass_mark_are_used(tmp_path: Path) -> None:
    from sklearn.metrics import confusion_matrix

    # People labelled 0-4; the judge scores 1-5. Pass: label >= 3.
    pairs = [(h - 1, g) for h, g in SCORES]
    items, recorded = _scored(tmp_path, pairs)
    refused = _run("--judge", "gpt", "--items", str(items), "--recorded", str(recorded))
    assert refused.exit_code == 2
    assert "label: got 0; expected an integer 1-5 (the label scale" \
        in refused.output
    result = _run("--judge", "gpt", "--items", str(items), "--recorded", str(recorded),
                  "--label-scale", "0-4", "--label-pass-at", "3", "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.output)
    assert document["agreement"]["labels"] == {"low": 0, "high": 4, "pass_at": 3,
                                               "warning": None}
    point = document["agreement"]["pointwise"]
    tn, fp, fn, tp = confusion_matrix([h >= 3 for h, _ in pairs], [g >= 4 for _, g in pairs],
                                      labels=[False, True]).ravel()
    assert (point["tp"], point["fn"], point["tn"], point["fp"]) == (tp, fn, tn, fp)


def test_label_scale_and_bars_come_from_the_config(tmp_path: Path,
                                                   monkeypatch: Any) -> None:
    pairs = [(h - 1, g) for h, g in SCORES]
    items, recorded = _scored(tmp_path, pairs)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.metaeval.judge_audit]\nlabel_scale = "0-4"\nlabel_pass_at = 2\n'
        "kappa_bar = 0.1\ntpr_bar = 0.25\ntnr_bar = 0.3\nunscored_bar = 0.5\nalpha = 0.01\n")
    monkeypatch.chdir(tmp_path)
    document = json.loads(_run("--judge", "gpt", "--items", str(items), "--recorded",
                               str(recorded), "--format", "json").output)
    assert document["agreement"]["labels"]["pass_at"] == 2
    assert document["agreement"]["bars"] == {"kappa": 0.1, "tpr": 0.25, "tnr": 0.3,
                                             "unscored": 0.5, "alpha": 0.01}
    flag = json.loads(_run("--judge", "gpt", "--items", str(items), "--recorded",
                           str(recorded), "--kappa-bar", "0.7", "--format", "json").output)
    assert flag["agreement"]["bars"]["kappa"] == 0.7


def test_a_bad_label_pass_mark_in_the_config_is_bad_input(tmp_path: Path,
                                                          monkeypatch: Any) -> None:
    items, recorded = _scored(tmp_path, SCORES)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.metaeval.judge_audit]\nlabel_pass_at = 9\n')
    monkeypatch.chdir(tmp_path)
    result = _run("--judge", "gpt", "--items", str(items), "--recorded", str(recorded))
    assert result.exit_code == 2
    assert "tool.metaeval.judge_audit.label_pass_at: got 9; expected an integer in 1..5" \
        in result.output


def test_a_figure_that_cannot_be_computed_is_never_compared_as_zero(tmp_path: Path) -> None:
    # Every human label passes: TNR has no case to be computed on.
    items, recorded = _scored(tmp_path, [(5, 5), (4, 4), (5, 4), (4, 5)])
    result = _run("--judge", "gpt", "--items", str(items), "--recorded", str(recorded),
                  "--format", "json")
    document = json.loads(result.output)
    point = document["agreement"]["pointwise"]
    assert point["tnr"] == {"value": None, "reason": "no human-fail case"}
    assert point["tpr"]["value"] == 1.0
    reasons = document["reasons"]
    assert "TNR not computed (no human-fail case): the bar 0.8 cannot be checked" in reasons
    assert not any(r.startswith("TNR 0.00") for r in reasons)
    assert document["verdict"] == "report only"
    text = _run("--judge", "gpt", "--items", str(items), "--recorded", str(recorded)).output
    assert "not computed (no human-fail case)" in text


def test_one_sample_per_item_leaves_agreement_k_undefined(tmp_path: Path) -> None:
    items, recorded = _scored(tmp_path, SCORES)
    document = json.loads(_run("--judge", "gpt", "--items", str(items), "--recorded",
                               str(recorded), "--format", "json").output)
    consistency = document["self_consistency"]
    assert consistency["agreement_k"] is None
    assert consistency["reason"].startswith("one sample per item: Agreement^K is undefined")
    assert consistency["source"] == "the recorded samples"


def test_unscored_samples_are_counted_beside_verdicts_with_none_scored(tmp_path: Path) -> None:
    items = _write(tmp_path / "points.ndjson",
                   [{"id": f"s{i}", "prompt": "q", "response": "r", "label": 4}
                    for i in range(3)])
    # s0: 3 of 3 scored; s1: 1 of 3 unscored (still decided); s2: none scored.
    verdicts: dict[str, list[int | None]] = {"s0": [4, 4, 5], "s1": [4, None, 4],
                                             "s2": [None, None, None]}
    recorded = _write(tmp_path / "log.jsonl", [{"id": i, "sample": k, "verdict": v}
                                               for i, vs in verdicts.items()
                                               for k, v in enumerate(vs)])
    result = _run("--judge", "gpt", "--items", str(items), "--recorded", str(recorded),
                  "--format", "json")
    agreement = json.loads(result.output)["agreement"]
    assert (agreement["unscored"], agreement["verdicts"]) == (1, 3)
    assert (agreement["samples"], agreement["unscored_samples"],
            agreement["verdicts_with_no_scored_sample"]) == (9, 4, 1)


def test_samples_is_refused_with_recorded(tmp_path: Path) -> None:
    items, recorded = _scored(tmp_path, SCORES)
    result = _run("--judge", "gpt", "--items", str(items), "--recorded", str(recorded),
                  "--samples", "3")
    assert result.exit_code == 2
    assert "--samples: applies to a live judge only" in result.output


def test_a_recorded_judge_has_no_known_temperature(tmp_path: Path) -> None:
    items, recorded = _scored(tmp_path, SCORES)
    args = ("--judge", "gpt", "--items", str(items), "--recorded", str(recorded))
    document = json.loads(_run(*args, "--format", "json").output)
    assert document["judge"]["temperature"] is None
    text = _run(*args).output
    assert "temperature unknown" in text and "temperature=0" not in text
    # A judge metaeval can build lends its identity, temperature included.
    built = json.loads(_run("--judge", "steady", "--items", str(items), "--recorded",
                            str(recorded), "--format", "json").output)
    assert built["judge"]["temperature"] == 0.0


def test_validate_reads_integer_labels_on_the_declared_label_scale(tmp_path: Path,
                                                                   monkeypatch: Any) -> None:
    items = _write(tmp_path / "points.ndjson", [{"id": "z", "prompt": "q", "response": "r",
                                                 "label": 0}])
    monkeypatch.chdir(tmp_path)
    refused = CliRunner().invoke(main, ["validate", str(items)])
    assert refused.exit_code == 2 and "label: got 0" in refused.output
    (tmp_path / "pyproject.toml").write_text('[tool.metaeval.judge_audit]\nlabel_scale = "0-4"\n')
    assert CliRunner().invoke(main, ["validate", str(items)]).exit_code == 0


def test_pairs_recorded_in_one_order_are_left_out_of_the_position_probe(tmp_path: Path) -> None:
    rows = _pairs(6)
    items = _write(tmp_path / "pairs.ndjson", rows)
    recorded = _write(tmp_path / "log.jsonl", [{"id": r["id"], "order": o, "verdict": "a"}
                                               for r in rows for o in ("ab", "ba")
                                               if (r["id"], o) != ("p2", "ba")])
    args = ("--judge", "gpt", "--items", str(items), "--recorded", str(recorded))
    document = json.loads(_run(*args, "--format", "json").output)
    assert (document["position"]["pairs"], document["position"]["one_order"]) == (5, 1)
    pair = document["agreement"]["pairwise"]
    assert (pair["orders"]["ab"]["n"], pair["orders"]["ba"]["n"], pair["both_orders"]) == \
        (6, 5, 5)
    assert "1 pair(s) recorded in one order only, left out" in _run(*args).output
