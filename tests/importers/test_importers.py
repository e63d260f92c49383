"""The judge-log importers on small hand-made logs: each mapping worked by hand, and
each record that cannot be mapped refused by file:line with nothing written."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.errors import InputError
from metaeval.importers import alpaca_eval, arena_hard, codes, mt_bench
from metaeval.judges.base import Mode
from metaeval.loaders.recorded_verdicts import load_recorded


def _jsonl(path: Path, rows: Sequence[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _mt_prompt(a: str, b: str) -> str:
    return (f"[User Question]\nWhy?\n\n[The Start of Assistant A's Answer]\n{a}\n"
            f"[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\n{b}\n"
            "[The End of Assistant B's Answer]")


def _mt_pair(g1: str, g2: str, *, swapped: bool = True) -> dict[str, object]:
    return {"question_id": 7, "model_1": "m1", "model_2": "m2", "g1_winner": g1,
            "g2_winner": g2, "judge": ["gpt-4", "pair-v2"], "turn": 1,
            "g1_user_prompt": _mt_prompt("one", "two"),
            "g2_user_prompt": _mt_prompt("two", "one") if swapped else _mt_prompt("one", "two"),
            "g1_judgment": "[[A]]", "g2_judgment": "[[A]]", "tstamp": 0.0}


def test_mt_bench_pair_positions_are_worked_out_from_the_games(tmp_path: Path) -> None:
    log = _jsonl(tmp_path / "pair.jsonl", [_mt_pair("model_1", "model_2"),
                                          _mt_pair("tie", "error")])
    converted = mt_bench.convert(log, single=False)
    assert converted.items[0] == {"id": "mt-bench-L1-q7-t1", "prompt": "Why?",
                                  "response_a": "one", "response_b": "two", "label": None}
    # Game 2 shows model_2 first: its winner model_2 is the response shown first.
    assert [(r["order"], r["position"]) for r in converted.recorded] == [
        ("ab", "first"), ("ba", "first"), ("ab", "tie"), ("ba", None)]


def test_mt_bench_pair_refuses_a_game_2_that_is_not_swapped(tmp_path: Path) -> None:
    log = _jsonl(tmp_path / "pair.jsonl", [_mt_pair("model_1", "model_1"),
                                          _mt_pair("model_1", "model_1", swapped=False),
                                          _mt_pair("model_3", "tie")])
    with pytest.raises(InputError) as raised:
        mt_bench.convert(log, single=False)
    message = str(raised.value)
    assert "2 record(s) could not be mapped; nothing written" in message
    assert f"{log}:2: g2_user_prompt: expected game 1's question with its answers swapped" \
        in message
    assert f"{log}:3: g1_winner: got 'model_3'" in message


def _arena_prompt(a: str, b: str) -> str:
    return (f"<|User Prompt|>\nWhy?\n\n<|The Start of Assistant A's Answer|>\n{a}\n"
            f"<|The End of Assistant A's Answer|>\n\n<|The Start of Assistant B's Answer|>\n{b}\n"
            "<|The End of Assistant B's Answer|>")


def _arena(qid: str, one: object, two: object) -> dict[str, object]:
    return {"question_id": qid, "model": "m", "judge": "j", "games": [
        {"user_prompt": _arena_prompt("base", "model"), "judgment": f"\n[[{one}]]",
         "score": one},
        {"user_prompt": _arena_prompt("model", "base"), "judgment": f"\n[[{two}]]",
         "score": two}]}


def test_arena_hard_scores_become_positions_with_their_strength(tmp_path: Path) -> None:
    log = _jsonl(tmp_path / "j.jsonl", [_arena("q1", "B>>A", "A>B"), _arena("q2", "A<B", None)])
    converted = arena_hard.convert(log)
    assert [(r["id"], r["order"], r["position"], r.get("strength"))
            for r in converted.recorded] == [
        ("arena-hard-q1", "ab", "second", "strong"), ("arena-hard-q1", "ba", "first", "slight"),
        ("arena-hard-q2", "ab", None, None), ("arena-hard-q2", "ba", None, None)]
    records, errors = load_recorded(_jsonl(tmp_path / "r.jsonl", list(converted.recorded)),
                                    kinds={"arena-hard-q1": Mode.PAIRWISE,
                                           "arena-hard-q2": Mode.PAIRWISE})
    # The model (b) won both games: shown second in game 1, first in game 2.
    assert errors == () and [r.verdict for r in records[:2]] == ["b", "b"]


def test_arena_hard_refuses_one_game_and_a_repeated_question(tmp_path: Path) -> None:
    one_game = _arena("q2", "A>B", "A>B")
    one_game["games"] = one_game["games"][:1]  # type: ignore[index]
    log = _jsonl(tmp_path / "j.jsonl", [_arena("q1", "A>B", "B>A"), one_game,
                                        _arena("q1", "A=B", "A=B")])
    with pytest.raises(InputError) as raised:
        arena_hard.convert(log)
    assert f"{log}:2: games: got" in str(raised.value)
    assert f"{log}:3: id: got 'arena-hard-q1'; expected an id not already used " \
           f"(first at {log}:1)" in str(raised.value)


def test_alpaca_eval_preferences_map_to_item_letters(tmp_path: Path) -> None:
    rows = [{"instruction": f"q{i}", "output_1": "x", "output_2": "y", "preference": p,
             "raw_completion": None} for i, p in enumerate([1.0, 1.2, 1.5, 1.93, 2, None])]
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(rows))
    converted = alpaca_eval.convert(path)
    assert [r["verdict"] for r in converted.recorded] == ["a", "a", "tie", "b", "b", None]
    rows[1]["preference"] = 2.5
    path.write_text(json.dumps(rows))
    with pytest.raises(InputError, match=r"\[1\]\.preference: got 2.5; expected a number"):
        alpaca_eval.convert(path)


def test_alpaca_eval_order_is_alpaca_evals_seeded_switch() -> None:
    # Worked from AlpacaEval's RandomSwitchTwoColumnsProcessor, seed column
    # "instruction" and annotator seed 0: these two instructions fall either way.
    import random

    for text in ("What is the capital of France?", "Write a haiku."):
        expected = random.Random("is_switched_outputs" + text + "0").choices(
            [False, True], k=1)[0]
        assert alpaca_eval.shown_swapped(text, 0) is expected
    assert {alpaca_eval.shown_swapped(f"q{i}", 0) for i in range(20)} == {True, False}


def test_integer_codes_are_mapped_as_declared_and_refused_when_not(tmp_path: Path) -> None:
    log = _jsonl(tmp_path / "codes.jsonl", [{"qid": "w", "v": 1, "o": "ba"},
                                           {"qid": "w", "v": 0, "o": "ab"}])
    table = codes.parse_codes(("0=tie", "1=first", "2=second", "9=unscored"))
    converted = codes.convert(log, table, id_field="qid", code_field="v", order_field="o")
    assert converted.recorded == ({"id": "w", "order": "ba", "position": "first"},
                                  {"id": "w", "order": "ab", "position": "tie"})
    bad = _jsonl(tmp_path / "bad.jsonl", [{"qid": "w", "v": 3, "o": "ba"}])
    with pytest.raises(InputError, match=r"bad.jsonl:1: v: got 3; expected one of the "
                       "declared codes 0, 1, 2, 9"):
        codes.convert(bad, table, id_field="qid", code_field="v", order_field="o")
    with pytest.raises(InputError, match="need the order shown"):
        codes.convert(log, table, id_field="qid", code_field="v")
    with pytest.raises(InputError, match="not both in one log"):
        codes.parse_codes(("1=first", "2=b"))
    with pytest.raises(InputError, match="expected CODE=MEANING"):
        codes.parse_codes(("1=left",))
    letters = codes.convert(log, codes.parse_codes(("0=tie", "1=a")), id_field="qid",
                            code_field="v", order_field="o")
    assert [r.get("verdict") for r in letters.recorded] == ["a", "tie"]


def test_the_cli_writes_nothing_when_a_record_cannot_be_mapped(tmp_path: Path) -> None:
    log = _jsonl(tmp_path / "pair.jsonl", [_mt_pair("model_1", "model_3")])
    items, recorded = tmp_path / "i.ndjson", tmp_path / "r.jsonl"
    result = CliRunner().invoke(main, ["judge-import", "mt-bench-pair", str(log), "--items",
                                       str(items), "--recorded", str(recorded)])
    assert result.exit_code == 2 and "g2_winner: got 'model_3'" in result.output
    assert not items.exists() and not recorded.exists()


def test_a_prompt_crafted_to_backtrack_is_an_error_in_bounded_time(tmp_path: Path) -> None:
    import time

    # Many end/start markers and no closing one: a plain regular expression walks
    # every split of them (quadratic: minutes at this size); the bound stops it.
    unit = "\n[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\n"
    hostile = "[User Question]\nq\n\n[The Start of Assistant A's Answer]\n" + unit * 6000
    row = _mt_pair("model_1", "model_1")
    row["g1_user_prompt"] = hostile
    log = _jsonl(tmp_path / "pair.jsonl", [row])
    started = time.monotonic()
    with pytest.raises(InputError, match=r"pair.jsonl:1: g1_user_prompt: (took more than 1 s"
                       r" to read|not the single-turn pair layout)"):
        mt_bench.convert(log, single=False)
    assert time.monotonic() - started < 12  # unbounded, it takes over 20 s here
