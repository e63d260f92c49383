"""Fuzz ``metaeval validate`` end to end: a meta-set and a judge-item file, each
with one line broken (or not), in table or JSON output. The command exits 0 when
every line loads and 2 when one does not, naming it; never a traceback (exit 1
with an exception), whatever the lines hold."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from metaeval.cli import main
from metaeval.commands.validate import with_judge_items
from metaeval.loaders.meta_set import load_meta_sets
from tests.fuzz.records import item_schema, judge_items, run_schema, runs
from tests.fuzz.strategies import Raw, Schema, apply, breaks, dump, encode, raw_lines


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-validate")


@st.composite
def lines(draw: st.DrawFn, records: st.SearchStrategy[dict[str, object]],
          schema: Schema) -> bytes:
    """A valid record's line, the line of a record broken in one field, or bytes."""
    record = draw(records)
    how = draw(st.sampled_from(["valid", "broken", "broken", "bytes"]))
    if how == "bytes":
        return draw(raw_lines)
    if how == "broken":
        record = apply(record, draw(breaks(record, schema)))
    return encode(dump(record, ascii_only=draw(st.booleans())))


@given(lines(runs(run_id="run"), run_schema),
       lines(judge_items(item_id="item"), item_schema), st.sampled_from(["table", "json"]))
@example(encode(dump({"id": "x", "category": "\ud800", "task": {"id": "t", "checks": [
             {"grader": "os:system", "command": "echo PWNED > pwned.txt"}]},
             "trajectory": [], "label": {"verdict": "pass"}}, ascii_only=True)),
         encode(dump({"id": "i", "prompt": "\ud800", "response": "r", "label": 3})), "table")
@example(encode(dump({"id": "x", "task": {"id": "t"}, "label": {"verdict": 99},
                      "trajectory": Raw("[" * 1000 + "]" * 1000)})),
         encode(dump({"id": "i", "prompt": "p", "response": "r", "label": Raw("1e309")})),
         "json")
def test_validate_exits_0_or_2_naming_each_bad_line_never_a_traceback(
        folder: Path, run_line: bytes, item_line: bytes, fmt: str) -> None:
    meta_set, items = folder / "runs.jsonl", folder / "items.ndjson"
    meta_set.write_bytes(run_line + b"\n")
    items.write_bytes(item_line + b"\n")
    with contextlib.chdir(folder):  # no pyproject.toml here: the built-ins only
        result = CliRunner().invoke(main, ["validate", str(meta_set), str(items),
                                           "--format", fmt])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception)
    assert result.exit_code in (0, 2), result.output
    assert "Traceback" not in result.output
    assert not (folder / "pwned.txt").exists()
    # The command says what the loaders found: 2 exactly when a line is bad, each named.
    errors = with_judge_items([meta_set, items], load_meta_sets([meta_set])).errors
    assert result.exit_code == (2 if errors else 0)
    if fmt == "table":
        for error in errors:
            assert f"{error.path}:{error.line}" in result.output


def test_the_seeds_are_refused(folder: Path) -> None:
    """The examples above must be bad input: a test of exit codes that never saw a 2
    would prove nothing."""
    meta_set = folder / "seed.jsonl"
    meta_set.write_bytes(encode(dump({"id": "x", "task": {"id": "t"}, "label": {
        "verdict": "pass"}, "trajectory": [{"type": "tool_call", "id": "c", "tool": "t",
                                            "arg": {}}]})) + b"\n")
    with contextlib.chdir(folder):
        result = CliRunner().invoke(main, ["validate", str(meta_set)])
    assert result.exit_code == 2
    assert f"{meta_set}:1: trajectory[0].arg: unknown field" in result.output
    assert "did you mean 'args'?" in result.output
