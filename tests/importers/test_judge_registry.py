"""The judge-log formats are one registry: each is a ``judge-import`` command built
from it (one option stack for all) and documented in docs/judge-own.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.cli.judge_import_commands import judge_import
from metaeval.errors import InputError
from metaeval.importers import JUDGE_FORMATS, JudgeLogFormat, picked_judge_format
from metaeval.importers.common import Converted, first_keys
from tests.importers.runs.conftest import REQUEST

DOCS = Path(__file__).resolve().parents[2] / "docs" / "judge-own.md"


def missing_from(unit: JudgeLogFormat) -> list[str]:
    where = []
    command = judge_import.commands.get(unit.name)
    if command is None:
        where.append("judge-import")
    else:
        options = {o for p in command.params for o in p.opts}
        wanted = {"--items", "--recorded", "--prefix", *(("--seed",) if unit.seeded else ())}
        if options - {"log"} != wanted:
            where.append("option stack")
    if f"`metaeval judge-import {unit.name}`" not in DOCS.read_text(encoding="utf-8"):
        where.append("docs")
    return where


@pytest.mark.parametrize("name", sorted(JUDGE_FORMATS))
def test_every_judge_log_format_is_a_command_and_documented(name: str) -> None:
    assert missing_from(JUDGE_FORMATS[name]) == []


def test_a_format_nobody_wired_is_named() -> None:
    ghost = JudgeLogFormat("ghost-log", "nothing", "ghost",
                           lambda log, o: Converted((), ()), "", lambda head, path: False)
    assert missing_from(ghost) == ["judge-import", "docs"]


def test_the_option_stack_is_the_same_for_every_log_command() -> None:
    stacks = {name: [p.name for p in judge_import.commands[name].params
                     if p.name != "seed"] for name in JUDGE_FORMATS}
    assert len({tuple(s) for s in stacks.values()}) == 1, stacks
    assert stacks["arena-hard"] == ["log", "items_out", "recorded_out", "prefix"]


# The first record of each format, cut to the keys its tool writes (the real logs'
# records are tested in test_judge_logs_real.py).
FIRST = {
    "mt-bench-pair": {"question_id": 81, "model_1": "a", "model_2": "b", "g1_winner": "tie",
                      "g2_winner": "tie", "judge": ["gpt-4", "pair-v2"],
                      "g1_user_prompt": "p", "g1_judgment": "j", "g2_user_prompt": "p",
                      "g2_judgment": "j", "turn": 1, "tstamp": 1.0},
    "mt-bench-single": {"question_id": 81, "model": "a", "judge": ["gpt-4", "single-v1"],
                        "user_prompt": "p", "judgment": "j", "score": 7, "turn": 1,
                        "tstamp": 1.0},
    "arena-hard": {"question_id": "q", "model": "a", "judge": "gpt-4o",
                   "games": [{"user_prompt": "p", "judgment": "j", "score": "A>B"}]},
    "alpaca-eval": [{"instruction": "i", "output_1": "a", "output_2": "b", "preference": 1.0,
                     "annotator": "x"}],
}


def _log(tmp_path: Path, name: str, value: object) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(value, indent=1) if isinstance(value, list) else
                    json.dumps(value) + "\n" + json.dumps(value) + "\n")
    return path


@pytest.mark.parametrize("name", sorted(FIRST))
def test_each_format_alone_claims_its_first_record(tmp_path: Path, name: str) -> None:
    assert picked_judge_format(_log(tmp_path, name, FIRST[name])).name == name


def test_a_log_no_format_claims_is_refused_naming_the_formats(tmp_path: Path) -> None:
    # A run log, a record cut by the head, and an array where a format reads lines.
    for value in (REQUEST, [FIRST["arena-hard"]]):
        with pytest.raises(InputError, match="no judge-log format recognises its first "
                           "record; expected a log of one of alpaca-eval, arena-hard"):
            picked_judge_format(_log(tmp_path, "other", value))
    line = json.dumps(FIRST["arena-hard"]).encode()
    assert first_keys(line + b"\n", array=False) >= {"games", "model"}
    assert first_keys(line[:-1], array=False) == frozenset()
    assert first_keys(b"[" * 100_000, array=True) == frozenset()  # too deep: no claim


def test_a_log_two_formats_claim_is_refused_naming_both(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    greedy = JudgeLogFormat("greedy", "everything", "g", lambda log, o: Converted((), ()), "",
                            lambda head, path: True)
    monkeypatch.setitem(JUDGE_FORMATS, "greedy", greedy)
    with pytest.raises(InputError, match="arena-hard and greedy all read it"):
        picked_judge_format(_log(tmp_path, "arena-hard", FIRST["arena-hard"]))


def test_judge_import_auto_says_which_it_picked_and_refuses_a_seed_it_cannot_use(
        tmp_path: Path) -> None:
    log = _log(tmp_path, "alpaca", FIRST["alpaca-eval"])
    items, recorded = tmp_path / "items.ndjson", tmp_path / "recorded.jsonl"
    done = CliRunner().invoke(main, ["judge-import", "auto", str(log), "--items", str(items),
                                     "--recorded", str(recorded), "--seed", "3"])
    assert done.exit_code == 0, done.output
    assert "format: alpaca-eval (picked by reading the log's first record)" in done.stderr
    assert json.loads(items.read_text())["id"] == "alpaca-eval-000"  # the format's prefix
    # The seed is used: the named command with the same seed writes the same verdicts.
    named = tmp_path / "named.jsonl"
    assert CliRunner().invoke(main, ["judge-import", "alpaca-eval", str(log), "--items",
                                     str(tmp_path / "n.ndjson"), "--recorded", str(named),
                                     "--seed", "3"]).exit_code == 0
    assert named.read_text() == recorded.read_text()
    log = _log(tmp_path, "arena", FIRST["arena-hard"])
    done = CliRunner().invoke(main, ["judge-import", "auto", str(log), "--items", str(items),
                                     "--recorded", str(recorded), "--seed", "3"])
    assert done.exit_code == 2
    assert "--seed: got 3, but the log is arena-hard" in done.output
