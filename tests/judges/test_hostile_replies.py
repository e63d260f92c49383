"""A judge's reply is not ours either: JSON nested a thousand deep, or a key said
twice, is an unreadable reply (unscored), never a crash and never a score."""

from __future__ import annotations

import pytest

from metaeval.judges.adapters import _read_chat
from metaeval.judges.base import Scale
from metaeval.judges.parse import parse_pairwise, parse_pointwise

DEEP = "[" * 1000 + "]" * 1000


@pytest.mark.parametrize("reply", [
    '{"explanation": "fine", "score": ' + DEEP + "}",
    '{"explanation": "fine", "score": 2, "score": 5}',  # which one? neither
])
def test_a_pointwise_reply_too_deep_or_with_a_repeated_key_is_unscored(reply: str) -> None:
    read = parse_pointwise(reply, Scale(1, 5, 4))
    assert read.value is None and read.raw == reply
    assert parse_pointwise('{"explanation": "fine", "score": 5}', Scale(1, 5, 4)).value == 5.0


@pytest.mark.parametrize("reply", [
    '{"explanation": "fine", "winner": ' + DEEP + "}",
    '{"explanation": "fine", "winner": "A", "winner": "B"}',
])
def test_a_pairwise_reply_too_deep_or_with_a_repeated_key_is_unscored(reply: str) -> None:
    assert parse_pairwise(reply).value is None


def test_a_chat_completion_body_nested_too_deep_is_a_failed_call() -> None:
    completion = _read_chat('{"choices": ' + DEEP + "}", 0.1, "")
    assert completion.call.failed and "not a chat completion" in completion.failure
