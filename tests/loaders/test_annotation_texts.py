"""``judge-import annotations --texts``: items imported from annotation files carry
the prompt and responses annotators judged, joined by id, so they can be labelled
and probed; a conversation written as a Python literal is read as data, never run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.errors import InputError
from metaeval.loaders.annotation_texts import read_texts, text_fields

CONVERSATION = [{"role": "user", "content": "Name a prime."},
                {"role": "assistant", "content": "7."},
                {"role": "user", "content": "Another?"},
                {"role": "assistant", "content": "11."}]


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value))
    return path


def test_conversations_as_json_or_python_literals_become_prompt_and_responses(
        tmp_path: Path) -> None:
    other = [{**m, "content": "9." if m["content"] == "7." else m["content"]}
             for m in CONVERSATION]
    texts = write(tmp_path / "prompts.json", {
        "q1": {"conversation_a": CONVERSATION, "conversation_b": repr(other)},
        "q2": {"prompt": "p", "response_a": "x", "response_b": "y"}})
    got = read_texts(texts, text_fields(()), pointwise=False)
    assert got["q1"].prompt == "(turn 1) Name a prime.\n\n(turn 2) Another?"
    assert got["q1"].response_a == "(turn 1) 7.\n\n(turn 2) 11."
    assert got["q1"].response_b == "(turn 1) 9.\n\n(turn 2) 11."
    assert (got["q2"].prompt, got["q2"].response_a, got["q2"].response_b) == ("p", "x", "y")


def test_a_literal_that_is_code_is_refused_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    texts = write(tmp_path / "prompts.json", {"q1": {
        "conversation_a": f"__import__('pathlib').Path({str(marker)!r}).touch()",
        "conversation_b": repr(CONVERSATION)}})
    with pytest.raises(InputError, match=r"q1: conversation_a: got .*expected a list of"):
        read_texts(texts, text_fields(()), pointwise=False)
    assert not marker.exists()


def test_a_missing_text_names_the_item_and_field_and_fields_can_be_renamed(
        tmp_path: Path) -> None:
    texts = write(tmp_path / "t.json", [{"id": "i1", "question": "Is 7 prime?",
                                         "answer": "Yes."}])
    with pytest.raises(InputError, match=r"t\.json: i1: no 'prompt'; expected the item's prompt"):
        read_texts(texts, text_fields(()), pointwise=True)
    got = read_texts(texts, text_fields(("prompt=question", "response=answer")),
                     pointwise=True)
    assert (got["i1"].prompt, got["i1"].response) == ("Is 7 prime?", "Yes.")
    with pytest.raises(InputError, match="--text-field: got 'answer'"):
        text_fields(("answer",))


def test_the_import_writes_items_with_their_texts(tmp_path: Path) -> None:
    humans = write(tmp_path / "h.json", {"ann": {"q1": "model_a", "q9": "tie"},
                                         "bo": {"q1": "model_b"}})
    texts = write(tmp_path / "p.json", {"q1": {"conversation_a": CONVERSATION,
                                               "conversation_b": CONVERSATION}})
    out = tmp_path / "items.ndjson"
    result = CliRunner().invoke(main, ["judge-import", "annotations", str(humans), "--items",
                                       str(out), "--texts", str(texts)])
    assert result.exit_code == 0, result.output
    assert result.output == f"2 items -> {out} (1 with no text in --texts)\n"
    items = {i["id"]: i for i in map(json.loads, out.read_text().splitlines())}
    assert items["q1"]["response_a"] == "(turn 1) 7.\n\n(turn 2) 11."
    assert items["q9"]["prompt"].startswith("(no text")
    # A text field without the file is refused, not ignored.
    refused = CliRunner().invoke(main, ["judge-import", "annotations", str(humans), "--items",
                                        str(out), "--text-field", "prompt=question"])
    assert refused.exit_code == 2 and "--text-field: needs --texts" in refused.output
