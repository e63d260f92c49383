"""Hostile JSON against every loader of a data file: a bad line is a file:line
error and the other lines load, a bad document is one InputError naming the file,
and nothing else is ever raised (no RecursionError, no UnicodeDecodeError)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from metaeval.audit.baseline import load_baseline
from metaeval.audit.calibration import calibrated_versions
from metaeval.contract import JsonObject
from metaeval.errors import InputError
from metaeval.gate_bars import Bar, BarStatus, Results, decide, load_results
from metaeval.loaders.judge_items import load_judge_items
from metaeval.loaders.llmbar import convert_llmbar
from metaeval.loaders.meta_set import LoadError, load_meta_sets
from metaeval.loaders.recorded_verdicts import load_recorded
from metaeval.mutation.findings_file import load as load_findings
from tests.builders import record

DEEP = "[" * 1000 + "]" * 1000


# --- JSON Lines loaders: a bad line is named, the other lines load ---------------------

Loader = Callable[[Path], tuple[int, tuple[LoadError, ...]]]


def _meta_set(path: Path) -> tuple[int, tuple[LoadError, ...]]:
    loaded = load_meta_sets([path])
    return len(loaded.runs), loaded.errors


def _judge_items(path: Path) -> tuple[int, tuple[LoadError, ...]]:
    loaded = load_judge_items([path])
    return loaded.count, loaded.errors


def _recorded(path: Path) -> tuple[int, tuple[LoadError, ...]]:
    found, errors = load_recorded(path)
    return len(found), errors


LINE_LOADERS: dict[str, tuple[Loader, str, JsonObject]] = {
    "meta-set": (_meta_set, "set.jsonl", record("good")),
    "judge items": (_judge_items, "items.ndjson",
                    {"id": "good", "prompt": "q", "response": "r", "label": "pass"}),
    "recorded verdicts": (_recorded, "recorded.jsonl", {"id": "good", "verdict": "pass"}),
}
HOSTILE_LINES = {
    "deep": ('{"id": "bad", "x": ' + DEEP + "}", "", "nested deeper than 64 levels"),
    "repeated key": ('{"id": "bad", "id": "worse"}', "id", "twice"),
    "lone surrogate": ('{"id": "\\ud800"}', "id", "lone surrogate '\\ud800'"),
    "NaN": ('{"id": "bad", "x": NaN}', "", "NaN is not a JSON number"),
}


@pytest.mark.parametrize("loader", list(LINE_LOADERS))
@pytest.mark.parametrize("hostile", list(HOSTILE_LINES))
def test_a_hostile_line_is_a_file_line_error_and_the_rest_loads(tmp_path: Path, loader: str,
                                                               hostile: str) -> None:
    load, name, good = LINE_LOADERS[loader]
    line, field, words = HOSTILE_LINES[hostile]
    path = tmp_path / name
    path.write_text(f"{line}\n{json.dumps(good)}\n", encoding="utf-8")
    count, errors = load(path)
    assert count == 1
    assert [(e.line, e.field) for e in errors] == [(1, field)]
    assert words in errors[0].message


@pytest.mark.parametrize("loader", list(LINE_LOADERS))
def test_a_byte_that_is_not_utf8_names_its_line_and_a_bom_is_skipped(tmp_path: Path,
                                                                     loader: str) -> None:
    load, name, good = LINE_LOADERS[loader]
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(good).encode() + b'\n{"id": "caf\xe9"}\n')
    count, errors = load(path)
    assert count == 1
    assert [(e.line, e.message) for e in errors] == [
        (2, "not UTF-8: byte 0xe9 at column 12; expected UTF-8 text")]


# --- whole-document loaders: one clear InputError ---------------------------------------

DOCUMENT_LOADERS: dict[str, Callable[[Path], object]] = {
    "findings": load_findings,
    "gate results": lambda path: load_results([path]),
    "meta-eval baseline": load_baseline,
    "calibration": calibrated_versions,
    "LLMBar dataset": convert_llmbar,
}
HOSTILE_DOCUMENTS = {
    "deep": ('{"version": 1, "findings": ' + DEEP + "}", "nested deeper than 64 levels"),
    "repeated key": ('{"version": 1, "version": 1, "findings": []}', "version: the key "
                     "appears twice"),
    "lone surrogate": ('{"checks": [], "evaluator": {"name": "\\udfff"}}', "lone surrogate"),
}


@pytest.mark.parametrize("loader", list(DOCUMENT_LOADERS))
@pytest.mark.parametrize("hostile", list(HOSTILE_DOCUMENTS))
def test_a_hostile_document_is_one_input_error(tmp_path: Path, loader: str,
                                               hostile: str) -> None:
    text, words = HOSTILE_DOCUMENTS[hostile]
    path = tmp_path / "document.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        DOCUMENT_LOADERS[loader](path)
    assert str(path) in str(caught.value) and words in str(caught.value)


@pytest.mark.parametrize("loader", list(DOCUMENT_LOADERS))
def test_a_document_that_is_not_utf8_names_its_line(tmp_path: Path, loader: str) -> None:
    path = tmp_path / "document.json"
    path.write_bytes(b'{\n  "version": 1,\n  "caf\xe9": []\n}\n')
    with pytest.raises(InputError, match="not UTF-8: byte 0xe9 at line 3 column 7"):
        DOCUMENT_LOADERS[loader](path)


def test_a_huge_unknown_key_is_echoed_bounded(tmp_path: Path) -> None:
    huge = "k" * 10_000_000
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({**record("r1"), huge: 1}) + "\n", encoding="utf-8")
    start = time.perf_counter()
    errors = load_meta_sets([path]).errors
    assert time.perf_counter() - start < 5
    assert len(errors) == 1 and len(str(errors[0])) < 400
    assert "(10000000 characters)" in errors[0].field and "unknown field" in errors[0].message


def test_a_huge_bad_value_in_a_check_spec_is_echoed_bounded(tmp_path: Path) -> None:
    # The grader's own message echoes the value; the loader bounds what it passes on.
    checks = [{"grader": "answer_contains", "pattern": ["x" * 1_000_000]}]
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(record("r1", task={"id": "t", "checks": checks})) + "\n",
                    encoding="utf-8")
    errors = load_meta_sets([path]).errors
    assert [e.field for e in errors] == ["task.checks[0].pattern"]
    assert len(errors[0].message) < 400 and errors[0].message.endswith("a non-empty string")


def test_json_inside_a_chat_string_is_bounded_too(tmp_path: Path) -> None:
    deep = "[" * 1000 + "]" * 1000
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": deep}}
    chat = record("chat", trajectory=[
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": deep},
        {"role": "assistant", "content": "done"}])
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(chat) + "\n", encoding="utf-8")
    errors = load_meta_sets([path]).errors
    assert [e.field for e in errors] == ["trajectory[1].tool_calls[0].function.arguments"]
    assert "nested deeper than 61 levels" in errors[0].message
    # The same text as a tool's content is not read as JSON: it stays the string it is.
    chat["trajectory"][1]["tool_calls"][0]["function"]["arguments"] = "{}"  # type: ignore
    path.write_text(json.dumps(chat) + "\n", encoding="utf-8")
    loaded = load_meta_sets([path])
    assert loaded.errors == ()
    assert loaded.runs[0].input.trajectory.events[2].content == deep  # type: ignore[union-attr]


def test_a_huge_value_in_a_result_file_is_echoed_bounded_by_the_gate() -> None:
    results = Results(None, {}, {"score": "x" * 1_000_000})
    [decided] = decide([Bar("mutate:score", min=0.5)], results, set())
    assert decided.status is BarStatus.MISSING and len(decided.detail) < 120


def test_a_huge_repeated_sample_is_echoed_bounded(tmp_path: Path) -> None:
    line = '{"id": "p", "verdict": "pass", "sample": ' + "9" * 4000 + "}\n"
    path = tmp_path / "recorded.jsonl"
    path.write_text(line * 2, encoding="utf-8")
    _, errors = load_recorded(path)
    assert [e.line for e in errors] == [2] and len(errors[0].message) < 200 + len(str(path))
