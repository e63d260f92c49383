"""parse_json: a bounded depth, no repeated key, no lone surrogate, finite numbers."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metaeval.untrusted_json import (
    MAX_DEPTH,
    JsonInputError,
    LoadError,
    _check_depth,
    parse_json,
    read_json_file,
    read_jsonl,
)

DEEP = "[" * 1000 + "]" * 1000


def nested(levels: int) -> str:
    """``levels`` levels of JSON arrays around a number."""
    return "[" * levels + "1" + "]" * levels


# --- one JSON text ----------------------------------------------------------------------


def test_the_depth_bound_is_exact_and_a_string_of_brackets_is_no_nesting() -> None:
    assert parse_json(nested(MAX_DEPTH)) is not None
    with pytest.raises(JsonInputError, match=f"nested deeper than {MAX_DEPTH} levels"):
        parse_json(nested(MAX_DEPTH + 1))
    with pytest.raises(JsonInputError, match="nested deeper"):
        parse_json('{"a": ' + DEEP + "}")
    # Brackets inside strings (escaped quotes included) are text, not nesting.
    text = json.dumps({"a": "[{" * 1000 + '\\"[' * 100})
    assert parse_json(text) == json.loads(text)


def _deepest(text: str) -> int:
    """How deep the brackets outside strings go, token by token (the reference)."""
    depth = deepest = 0
    at = 0
    while at < len(text):
        char = text[at]
        if char == '"':  # to the closing quote, past escapes; or to the end
            at += 1
            while at < len(text) and text[at] != '"':
                at += 2 if text[at] == "\\" else 1
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
        at += 1
    return deepest


@given(st.text(alphabet='[]{}"\\a,', max_size=60), st.integers(min_value=0, max_value=6))
def test_the_depth_check_agrees_with_a_walk_token_by_token(text: str, bound: int) -> None:
    # Balanced or not, brackets in strings or not: too deep exactly when the walk says.
    try:
        _check_depth(text, bound)
        refused = False
    except json.JSONDecodeError:
        refused = True
    assert refused == (_deepest(text) > bound)


def test_a_repeated_key_is_named_where_it_is() -> None:
    with pytest.raises(JsonInputError) as caught:
        parse_json('{"label": {"verdict": "fail", "verdict": "pass"}}')
    assert caught.value.field == "label.verdict"
    assert "twice" in caught.value.message
    assert parse_json('{"a": {"verdict": 1}, "b": {"verdict": 2}}') == {
        "a": {"verdict": 1}, "b": {"verdict": 2}}  # the same key in two objects is fine


def test_a_lone_surrogate_is_named_and_shown_escaped_and_a_pair_is_text() -> None:
    with pytest.raises(JsonInputError) as caught:
        parse_json('{"task": {"checks": [{"name": "ok\\ud800"}]}}')
    assert caught.value.field == "task.checks[0].name"
    assert "'ok\\ud800'" in caught.value.message
    caught.value.message.encode("utf-8")  # printable as it is
    with pytest.raises(JsonInputError, match="lone surrogate"):
        parse_json('{"\\udc00": 1}')
    assert parse_json('["\\ud83d\\ude00"]') == ["\U0001f600"]  # a valid pair is one character


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "[1e999]"])
def test_numbers_that_are_not_finite_are_refused(text: str) -> None:
    with pytest.raises(JsonInputError):
        parse_json(text)
    assert parse_json("[1e308]") == [1e308]


def test_the_depth_scan_is_linear_on_an_unterminated_string_of_escaped_quotes() -> None:
    # Each escaped quote could start a string that runs to the end: rescanning
    # from each made the depth check quadratic (seconds for 20 kB).
    text = '"' + '\\"' * 20_000 + "[" * (MAX_DEPTH + 1)
    start = time.perf_counter()
    with pytest.raises(JsonInputError):
        parse_json(text)
    assert time.perf_counter() - start < 1


def test_a_data_file_that_is_a_device_or_a_fifo_is_never_read(tmp_path: Path) -> None:
    # A branch commits .metaeval/mutate-cache.json -> /dev/zero: read whole, it
    # would take the memory; a fifo would wait for a writer forever.
    (tmp_path / "cache.json").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "runs.jsonl")
    with pytest.raises(JsonInputError, match="'/dev/zero' is a character device; expected a "
                                             "regular file"):
        read_json_file(tmp_path / "cache.json")
    errors: list[LoadError] = []
    assert list(read_jsonl(tmp_path / "runs.jsonl", errors)) == []
    assert len(errors) == 1 and "is a fifo; expected a regular file" in str(errors[0])


def test_a_linked_data_file_is_read_through_its_link(tmp_path: Path) -> None:
    # The "no": a user's meta-set linked from elsewhere is theirs to link.
    (tmp_path / "real.json").write_text('{"a": 1}', encoding="utf-8")
    (tmp_path / "linked.json").symlink_to(tmp_path / "real.json")
    assert read_json_file(tmp_path / "linked.json") == {"a": 1}

