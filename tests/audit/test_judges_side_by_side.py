"""``judge-audit`` over several judges: the panel's rule, the cost from recorded
usage and a price table, the exit code (the worst verdict, or ``--gate``'s), and
what is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from metaeval.audit.judge_panel import panel_decision
from metaeval.cli import main
from metaeval.judges.base import Scale

ONE_TO_FIVE = Scale(1, 5, 4)


@pytest.mark.parametrize(("votes", "expected"), [
    (("a", "a", "b"), "a"),
    (("a", "b", "tie"), None),          # three labels once each: no majority
    (("a", "b"), None),                 # an even split
    (("a", None, None), None),          # half or more unscored
    (("a", "b", "b", None), "b"),       # one unscored of four, b the most
    ((4.0, 5.0, 2.0), 11 / 3),          # scores: their mean
    ((True, False, True), True),
    ((5.0, False, False), False),       # a score beside pass/fail: 5 passes, 2 of 3 fail
    ((4.0, True, False), True),         # 4 passes at pass_at 4
])
def test_a_panel_decides_by_majority_or_mean_and_a_split_is_unscored(
        votes: tuple[Any, ...], expected: object) -> None:
    decided = panel_decision(list(votes), ONE_TO_FIVE)
    if isinstance(expected, float):
        assert decided == pytest.approx(expected)
    else:
        assert decided == expected


def _project(tmp_path: Path, prices: str = "") -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n" + prices)
    items = tmp_path / "items.ndjson"
    items.write_text("".join(json.dumps({"id": f"p{i}", "prompt": "q", "response_a": "x",
                                         "response_b": "y", "label": "a"}) + "\n"
                             for i in range(1, 5)))
    return items


def _log(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _verdicts(judge: str, said: str, usage: dict[str, Any] | None) -> list[dict[str, Any]]:
    return [{"id": f"p{i}", "order": "ab", "verdict": v, "judge": judge,
             **({"usage": usage} if usage is not None else {})}
            for i, v in enumerate(said, start=1)]


PRICES = """[tool.metaeval.judge_prices]
cheap = { input = 1.0, output = 2.0 }
dear = { input = 10.0, output = 30.0 }
"""


def _audit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["judge-audit", *args])
    return result.exit_code, result.output


def _rows(out: str) -> dict[str, dict[str, Any]]:
    return {r["judge"]: r for r in json.loads(out)["judges"]}


def test_cost_per_item_is_the_recorded_tokens_times_the_price_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _project(tmp_path, PRICES)
    log = _log(tmp_path / "log.jsonl",
               _verdicts("cheap", "aaab", {"input_tokens": 1000, "output_tokens": 100})
               + _verdicts("dear", "aaaa", {"input_tokens": 2000, "output_tokens": 500})
               + _verdicts("unpriced", "aaaa", {"input_tokens": 10, "output_tokens": 1})
               + _verdicts("unlogged", "aaaa", None)
               + _verdicts("logged", "aaaa", {"input_tokens": 5, "output_tokens": 5,
                                              "cost": 0.25}))
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded", str(log),
                       "--panel", "cheap,dear", "--format", "json")
    assert code == 1, out
    rows = _rows(out)
    cheap, dear = rows["cheap"], rows["dear"]
    # 1,000 input tokens at 1.0 and 100 output at 2.0 per million, per item
    assert cheap["cost"]["per_item"] == pytest.approx(0.0012)
    assert cheap["cost"]["price_from"].endswith("tool.metaeval.judge_prices.cheap")
    assert cheap["agreement"] == 0.75
    assert cheap["cost_per_point"] == pytest.approx(0.0012 / 75)
    assert dear["cost"]["per_item"] == pytest.approx(0.035)
    assert dear["cost_per_point"] == pytest.approx(0.035 / 100)
    assert rows["panel(cheap,dear)"]["cost"]["per_item"] == pytest.approx(0.0362)
    assert rows["unpriced"]["cost"]["per_item"] is None
    assert rows["unpriced"]["cost"]["input_tokens_per_item"] == 10
    assert "no price for 'unpriced'" in rows["unpriced"]["cost"]["note"]
    assert rows["unlogged"]["cost"] == {
        "per_item": None, "input_tokens_per_item": None, "output_tokens_per_item": None,
        "price_from": "", "verdicts": 4, "verdicts_with_usage": 0, "items": 0,
        "note": "no usage recorded"}
    assert rows["logged"]["cost"]["per_item"] == 0.25
    assert rows["logged"]["cost"]["price_from"] == "the log"
    _, text = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded", str(log))
    (line,) = [x for x in text.splitlines() if x.startswith("cheap ")]
    # per 1,000 items in the table: 1.2, and 1.2 / 75 points of agreement
    assert line.split()[-5:] == ["1000", "+", "100", "1.2", "0.016"]
    assert "no usage recorded" in text


def test_a_bad_price_table_is_refused_naming_the_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _project(tmp_path, '[tool.metaeval.judge_prices]\ncheap = { input = -1, '
                               'output = 2 }\n')
    log = _log(tmp_path / "log.jsonl", _verdicts("cheap", "aaaa", None)
               + _verdicts("dear", "aaaa", None))
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded", str(log))
    assert code == 2
    assert "tool.metaeval.judge_prices.cheap.input: got -1; expected a finite number >= 0" in out


def test_the_exit_code_is_the_worst_verdict_unless_gate_names_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Path(__file__).resolve().parents[2]
    # Bars below 0.8: this part is about exit codes, not how near steady's TPR is to 0.8.
    both = ("--judge", "steady", "--judge", "biased", "--no-cache", "--tpr-bar", "0.6",
            "--tnr-bar", "0.6")
    monkeypatch.chdir(repo)
    run = CliRunner().invoke
    worst = run(main, ["judge-audit", *both, "--format", "json"])
    assert worst.exit_code == 1, worst.output
    document = json.loads(worst.stdout)
    assert {r["judge"]: r["verdict"] for r in document["judges"]} == {
        "steady": "may gate", "biased": "report only"}
    assert document["exit_by"] == "biased"
    assert run(main, ["judge-audit", *both, "--gate", "steady"]).exit_code == 0
    gated = run(main, ["judge-audit", *both, "--gate", "biased"])
    assert gated.exit_code == 1 and "exit 1: by --gate biased" in gated.output
    # A clear miss is worse than labels that cannot decide: report only (1) wins over
    # inconclusive (4) without --gate. 15 questions (30 items) cannot show TPR or TNR
    # >= 0.8 at 95% even for a judge that misses one.
    sets = repo / "meta_sets" / "judge"
    small = tmp_path / "small.ndjson"
    lines = (sets / "pointwise.ndjson").read_text().splitlines()
    small.write_text("".join(f"{line}\n" for line in lines[:30]))
    items = [a for name in ("position", "length", "injection")
             for a in ("--items", str(sets / f"{name}.ndjson"))]
    open_one = run(main, ["judge-audit", "--judge", "steady", "--judge", "biased",
                          "--no-cache", "--format", "json", "--items", str(small), *items])
    assert {r["judge"]: r["verdict"] for r in json.loads(open_one.stdout)["judges"]} == {
        "steady": "inconclusive", "biased": "report only"}
    assert open_one.exit_code == 1
    unknown = run(main, ["judge-audit", *both, "--gate", "nobody"])
    assert unknown.exit_code == 2
    assert "--gate: got 'nobody'; expected one of the judges audited: 'steady', 'biased'" in (
        unknown.output)


@pytest.mark.parametrize(("args", "said"), [
    (("--judge", "cheap", "--judge", "cheap"), "--judge: got 'cheap' twice"),
    (("--panel", "cheap"), "--panel: got 'cheap'; expected two or more judge names"),
    (("--panel", "cheap,cheap"), "expected two or more judge names, each once"),
    (("--judge", "cheap", "--judge", "dear", "--write"), "--write: applies to one judge's "
                                                         "audit"),
    (("--judge", "nobody", "--judge", "dear"), "--judge: got 'nobody'; the recorded log"),
    (("--judge", "nobody"), "holds the verdicts of 2 judge(s): 'cheap', 'dear'"),
])
def test_what_several_judges_cannot_do_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...],
        said: str) -> None:
    items = _project(tmp_path)
    log = _log(tmp_path / "log.jsonl", _verdicts("cheap", "aaaa", None)
               + _verdicts("dear", "aaab", None))
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded", str(log),
                       *args)
    assert code == 2
    assert said in out


def test_one_judge_of_a_log_of_several_is_audited_on_its_own_verdicts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _project(tmp_path)
    log = _log(tmp_path / "log.jsonl", _verdicts("cheap", "aaab", None)
               + _verdicts("dear", "aaaa", None))
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded", str(log),
                       "--judge", "cheap", "--format", "json")
    assert code == 1, out
    ab = json.loads(out)["agreement"]["pairwise"]["orders"]["ab"]
    assert (ab["n"], ab["correct"]) == (4, 3)  # cheap's, not dear's 4 of 4


def test_a_log_naming_some_judges_only_and_no_judge_at_all_are_errors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _project(tmp_path)
    mixed = _log(tmp_path / "mixed.jsonl", [*_verdicts("cheap", "aaaa", None),
                                            {"id": "p1", "order": "ab", "verdict": "a"}])
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded", str(mixed))
    assert code == 2
    assert f"{mixed}:5: judge: missing; this log names the judge of its other records" in out
    unnamed = _log(tmp_path / "one.jsonl", [{"id": "p1", "order": "ab", "verdict": "a"}])
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded",
                       str(unnamed))
    assert code == 2
    assert "--judge: missing; expected the judge to audit" in out


@pytest.mark.parametrize(("field", "value", "said"), [
    ("judge", "", "judge: got ''; expected the judge's name"),
    ("judge", 3, "judge: got 3; expected the judge's name"),
    ("usage", {"input_tokens": -1, "output_tokens": 2}, "usage.input_tokens: got -1"),
    ("usage", {"input_tokens": 1, "output_tokens": True}, "usage.output_tokens: got true"),
    ("usage", {"input_tokens": 1, "output_tokens": 2, "price": 1}, "usage.price: unknown"),
    ("usage", {"input_tokens": 1, "output_tokens": 2, "cost": -0.5}, "usage.cost: got -0.5"),
    ("usage", [1, 2], "usage: got [1, 2]; expected an object"),
])
def test_a_bad_judge_or_usage_field_names_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str, value: object,
        said: str) -> None:
    items = _project(tmp_path)
    log = _log(tmp_path / "log.jsonl", [
        {"id": "p1", "order": "ab", "verdict": "a", "judge": "cheap"},
        {"id": "p2", "order": "ab", "verdict": "a", "judge": "cheap", field: value}])
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded", str(log),
                       "--judge", "cheap")
    assert code == 2
    assert f"{log}:2: {said}" in out


def test_the_same_verdict_slot_of_two_judges_is_no_repeat(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _project(tmp_path)
    log = _log(tmp_path / "log.jsonl", _verdicts("cheap", "aaaa", None)
               + _verdicts("cheap", "aaaa", None)[:1])
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded", str(log),
                       "--judge", "cheap")
    assert code == 2 and "already has it" in out  # the same judge twice is a repeat
    log = _log(tmp_path / "log.jsonl", _verdicts("cheap", "aaaa", None)
               + _verdicts("dear", "aaaa", None))
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded", str(log),
                       "--format", "json")
    assert code == 1, out
    assert set(_rows(out)) == {"cheap", "dear"}


def test_a_log_of_one_named_judge_is_read_whole_alone_but_not_under_two_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _project(tmp_path)
    named = _log(tmp_path / "named.jsonl", _verdicts("gpt-4o", "aaab", None))
    # judge-import writes the name the tool logged; --judge may call it otherwise alone
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded", str(named),
                       "--judge", "gpt-4o-arena", "--format", "json")
    assert code == 1, out
    assert json.loads(out)["agreement"]["pairwise"]["orders"]["ab"]["correct"] == 3
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded", str(named),
                       "--judge", "gpt-4o", "--judge", "other")
    assert code == 2
    assert "--judge: got 'other'; the recorded log holds the verdicts of 1 judge(s)" in out
    unnamed = _log(tmp_path / "unnamed.jsonl", [{k: v for k, v in r.items() if k != "judge"}
                                                for r in _verdicts("x", "aaab", None)])
    code, out = _audit(tmp_path, monkeypatch, "--items", str(items), "--recorded",
                       str(unnamed), "--judge", "a", "--judge", "b")
    assert code == 2
    assert "several judges with a recorded log that names none of them" in out
