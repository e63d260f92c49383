"""Each importer on the real published samples in ../shared/data/judge-logs (skipped
without them): its output loads in ``judge-audit --recorded``, and the figures equal
what a few lines of independent code count from the raw log."""

from __future__ import annotations

import json
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
ARENA = ["gpt-4o/gpt-4o-mini.jsonl", "DeepSeek-R1-Distill-Llama-70B/bagel-8b-v1.0.jsonl"]
MT_PAIR = ["stefanstud-FastChat/model_judgment/gpt-4_pair.jsonl",
           "lm-sys-FastChat-skycamp/model_judgment/gpt-4_pair.jsonl"]


def _run(tmp_path: Path, fmt: str, log: Path, *audit: str,
         codes: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
    items, recorded = tmp_path / "items.ndjson", tmp_path / "recorded.jsonl"
    runner = CliRunner()
    imported = runner.invoke(main, ["judge-import", fmt, str(log), "--items", str(items),
                                    "--recorded", str(recorded)])
    assert imported.exit_code == 0, imported.output
    result = runner.invoke(main, ["judge-audit", "--judge", "logged", "--items", str(items),
                                  "--recorded", str(recorded), "--format", "json", *audit])
    assert result.exit_code in codes, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    assert out["errors"] == []
    return out


def _flips(pairs: list[tuple[str | None, str | None]]) -> dict[str, int]:
    """Position counts from each pair's winner in game 1 and game 2, both already
    named as the pair's own side (x/y/tie, None unscored), game 1 showing x first."""
    counts = {"consistent": 0, "first_preferred": 0, "second_preferred": 0, "unscored": 0}
    lean = {"x": 1, "tie": 0, "y": -1}
    for one, two in pairs:
        if one is None or two is None:
            counts["unscored"] += 1
        elif one == two:
            counts["consistent"] += 1
        # game 1 shows x first, game 2 shows y first: lean towards the first shown
        elif lean[one] - lean[two] > 0:
            counts["first_preferred"] += 1
        else:
            counts["second_preferred"] += 1
    return counts


@pytest.mark.parametrize("name", ARENA)
def test_arena_hard_both_games_give_the_position_counts_of_the_raw_log(
        tmp_path: Path, name: str) -> None:
    log = LOGS / "arena-hard-auto" / "model_judgment" / name
    side = {"A>>B": "x", "A>B": "x", "A=B": "tie", "B>A": "y", "B>>A": "y"}
    swap = {"x": "y", "y": "x", "tie": "tie"}
    pairs = []
    for line in log.read_text(encoding="utf-8").splitlines():
        games = json.loads(line)["games"]
        one = side.get(games[0]["score"])
        two = side.get(games[1]["score"])  # game 2 shows the model (y) as A
        pairs.append((one, swap[two] if two is not None else None))
    out = _run(tmp_path, "arena-hard", log)
    expected = _flips(pairs)
    assert {k: out["position"][k] for k in expected} == expected
    # Strength, counted from the score strings: ">>" strong, ">" slight, per game.
    scores = [[g["score"] for g in json.loads(line)["games"]]
              for line in log.read_text(encoding="utf-8").splitlines()]
    per_game = [{"strong": sum(s[g] in ("A>>B", "B>>A") for s in scores),
                 "slight": sum(s[g] in ("A>B", "B>A") for s in scores), "unstated": 0}
                for g in (0, 1)]
    strength = out["position"]["strength"]
    assert strength["orders"] == {"ab": per_game[0], "ba": per_game[1]}
    flipped = [s for s, (one, two) in zip(scores, pairs, strict=True)
               if one is not None and two is not None and one != two]
    strong = sum(any(x in ("A>>B", "B>>A") for x in s) for s in flipped)
    assert strength["flips"] == {"strong": strong, "slight": len(flipped) - strong,
                                 "unstated": 0}
    assert out["agreement"]["verdicts"] == 2 * len(pairs)
    assert out["agreement"]["pairwise"] is None  # no human label in the log
    assert "no human-labelled items: agreement not measured" in out["reasons"]


def test_the_deepseek_sample_keeps_its_null_score_unscored(tmp_path: Path) -> None:
    out = _run(tmp_path, "arena-hard", LOGS / "arena-hard-auto" / "model_judgment" / ARENA[1])
    assert (out["agreement"]["unscored"], out["position"]["unscored"]) == (1, 1)


@pytest.mark.parametrize("name", MT_PAIR)
def test_mt_bench_pair_gives_the_position_counts_of_the_raw_log(
        tmp_path: Path, name: str) -> None:
    log = LOGS / "mt-bench-fastchat" / name
    side = {"model_1": "x", "model_2": "y", "tie": "tie", "error": None}
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    pairs = [(side[r["g1_winner"]], side[r["g2_winner"]]) for r in rows]
    out = _run(tmp_path, "mt-bench-pair", log)
    expected = _flips(pairs)
    assert {k: out["position"][k] for k in expected} == expected
    errors = sum(r[g] == "error" for r in rows for g in ("g1_winner", "g2_winner"))
    assert out["agreement"]["unscored"] == errors


def test_mt_bench_pair_replies_re_read_with_mt_bench_give_the_same_counts(
        tmp_path: Path) -> None:
    log = LOGS / "mt-bench-fastchat" / MT_PAIR[0]
    plain = _run(tmp_path, "mt-bench-pair", log)
    reread = _run(tmp_path, "mt-bench-pair", log, "--reply", "mt-bench")
    assert reread["position"] == plain["position"]


def test_mt_bench_single_scores_are_carried_on_a_1_to_10_scale(tmp_path: Path) -> None:
    log = (LOGS / "mt-bench-fastchat" / "stefanstud-FastChat" / "model_judgment"
           / "gpt-4_single.jsonl")
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    items, recorded = tmp_path / "items.ndjson", tmp_path / "recorded.jsonl"
    out = _run(tmp_path, "mt-bench-single", log, "--scale", "1-10", "--pass-at", "8")
    assert out["agreement"]["verdicts"] == len(rows)
    assert out["agreement"]["unscored"] == sum(r["score"] == -1 for r in rows)
    written = [json.loads(line) for line in recorded.read_text().splitlines()]
    assert [w["verdict"] for w in written] == [r["score"] for r in rows]
    for item, row in zip((json.loads(x) for x in items.read_text().splitlines()), rows,
                         strict=True):
        # The answer graded is the last one in the judge's prompt, whole.
        assert row["user_prompt"].rstrip().endswith(
            item["response"] + ("\n[The End of Assistant's Answer]" if row["turn"] == 1 else
                                "\n\n<|The End of Assistant A's Conversation with User|>"))


def test_alpaca_eval_order_rule_agrees_with_the_judges_own_token(tmp_path: Path) -> None:
    log = (LOGS / "alpaca-eval" / "results" / "gpt-3.5-turbo-1106"
           / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json")
    rows = json.loads(log.read_text(encoding="utf-8"))
    out = _run(tmp_path, "alpaca-eval", log)
    assert out["controls"]["ok"] is True  # pairs of very unequal length (see test_generate)
    assert out["agreement"]["verdicts"] == len(rows)
    assert out["position"]["status"] == "not run"  # one order per instruction
    written = [json.loads(line) for line in (tmp_path / "recorded.jsonl").read_text().splitlines()]
    checked = 0
    for row, rec in zip(rows, written, strict=True):
        want = "a" if row["preference"] < 1.5 else "b" if row["preference"] > 1.5 else "tie"
        assert rec["verdict"] == want
        completion = row["raw_completion"]
        if completion is None:
            continue
        top = {t["token"]: t["logprob"]
               for t in completion["logprobs"]["content"][0]["top_logprobs"]}
        token = completion["message"]["content"]
        if token not in ("m", "M") or top.get(token) != max(top.get("m", -1e9),
                                                            top.get("M", -1e9)):
            continue  # a sampled token that is not the judge's more probable one
        # m names the output shown first: with the order metaeval worked out, that
        # must be the output AlpacaEval's own preference names.
        shown_first = "a" if rec["order"] == "ab" else "b"
        assert (shown_first if token == "m" else {"a": "b", "b": "a"}[shown_first]) == want
        checked += 1
    assert checked >= 30


REAL = [("arena-hard", f"arena-hard-auto/model_judgment/{name}") for name in ARENA] + [
    ("mt-bench-pair", f"mt-bench-fastchat/{name}") for name in MT_PAIR] + [
    ("mt-bench-single", "mt-bench-fastchat/stefanstud-FastChat/model_judgment/gpt-4_single.jsonl"),
    ("alpaca-eval", "alpaca-eval/results/gpt-3.5-turbo-1106/weighted_alpaca_eval_gpt4_turbo/"
                    "annotations.json")]


@pytest.mark.parametrize(("fmt", "name"), REAL, ids=[n for _, n in REAL])
def test_judge_import_auto_picks_each_real_log_and_writes_what_its_command_does(
        tmp_path: Path, fmt: str, name: str) -> None:
    runner = CliRunner()
    written = {}
    for how in ("auto", fmt):
        items, recorded = tmp_path / f"{how}.ndjson", tmp_path / f"{how}.jsonl"
        done = runner.invoke(main, ["judge-import", how, str(LOGS / name), "--items",
                                    str(items), "--recorded", str(recorded)])
        assert done.exit_code == 0, done.output
        written[how] = (items.read_bytes(), recorded.read_bytes())
        if how == "auto":
            assert f"format: {fmt} (picked by reading the log's first record)" in done.stderr
    assert written["auto"] == written[fmt]


def test_judge_import_auto_refuses_a_real_file_that_is_no_judge_log(tmp_path: Path) -> None:
    # FastChat's judge prompts sit beside its judgments: JSON Lines, but no log.
    done = CliRunner().invoke(main, ["judge-import", "auto",
                                     str(LOGS / "mt-bench-fastchat" / "judge_prompts.jsonl"),
                                     "--items", str(tmp_path / "i.ndjson"),
                                     "--recorded", str(tmp_path / "r.jsonl")])
    assert done.exit_code == 2
    assert "no judge-log format recognises its first record" in done.output
    assert not (tmp_path / "i.ndjson").exists()
