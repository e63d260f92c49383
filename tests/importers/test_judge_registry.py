"""The judge-log formats are one registry: each is a ``judge-import`` command built
from it (one option stack for all) and documented in docs/judge-own.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from metaeval.cli.judge_import_commands import judge_import
from metaeval.importers import JUDGE_FORMATS, JudgeLogFormat
from metaeval.importers.common import Converted

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
                           lambda log, o: Converted((), ()), "")
    assert missing_from(ghost) == ["judge-import", "docs"]


def test_the_option_stack_is_the_same_for_every_log_command() -> None:
    stacks = {name: [p.name for p in judge_import.commands[name].params
                     if p.name != "seed"] for name in JUDGE_FORMATS}
    assert len({tuple(s) for s in stacks.values()}) == 1, stacks
    assert stacks["arena-hard"] == ["log", "items_out", "recorded_out", "prefix"]
