"""judge-import refuses before it writes: two outputs on one file, an output that
cannot be written, a label map it cannot read; it reads a crafted MT-Bench single
log in linear time with the real error; and it writes only what judge-audit reads
(at most 1,000 annotators an item, one verdict per id, order and sample)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.errors import InputError
from metaeval.importers import codes, mt_bench
from metaeval.loaders.judge_labels import MAX_ANNOTATORS
from metaeval.loaders.recorded_verdicts import load_recorded


def _jsonl(path: Path, rows: Sequence[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _single(prompt: str, line: int = 1) -> dict[str, object]:
    return {"question_id": 80 + line, "model": "m", "judge": ["gpt-4", "single-v1"],
            "user_prompt": prompt, "judgment": "Rating: [[7]]", "score": 7, "turn": 1,
            "tstamp": 0.0}


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


GOOD = ("[Instruction]\nRate it.\n\n[Question]\nWhy?\n\n[The Start of Assistant's Answer]\n"
        "Because.\n[The End of Assistant's Answer]")


def test_one_file_for_items_and_recorded_is_refused_and_nothing_written(tmp_path: Path) -> None:
    log = _jsonl(tmp_path / "single.jsonl", [_single(GOOD)])
    out = tmp_path / "both.ndjson"
    result = _invoke("judge-import", "mt-bench-single", str(log), "--items", str(out),
                     "--recorded", str(out))
    assert result.exit_code == 2, result.output
    assert f"--recorded {out}: is also the output of --items" in result.output
    assert not out.exists()
    # The "no": two files of their own are written.
    result = _invoke("judge-import", "mt-bench-single", str(log), "--items",
                     str(tmp_path / "i.ndjson"), "--recorded", str(tmp_path / "r.jsonl"))
    assert result.exit_code == 0, result.output


def test_a_recorded_output_that_is_a_folder_leaves_the_items_unwritten(tmp_path: Path) -> None:
    log = _jsonl(tmp_path / "single.jsonl", [_single(GOOD)])
    (tmp_path / "recorded").mkdir()
    items = tmp_path / "items.ndjson"
    result = _invoke("judge-import", "mt-bench-single", str(log), "--items", str(items),
                     "--recorded", str(tmp_path / "recorded"))
    assert result.exit_code == 2, result.output
    assert "it is a directory" in result.output and "Traceback" not in result.output
    assert not items.exists()


@pytest.mark.parametrize("target", ["²", "٣", "1" * 10])
def test_a_map_to_a_number_that_is_not_ascii_digits_is_an_error(
        tmp_path: Path, target: str) -> None:
    labels = tmp_path / "people.json"
    labels.write_text(json.dumps({"ann": {"i1": "a"}, "bo": {"i1": "a"}}), encoding="utf-8")
    result = _invoke("judge-import", "annotations", str(labels), "--kind", "pointwise",
                     "--map", f"a={target}", "--items", str(tmp_path / "items.ndjson"))
    assert result.exit_code == 2, result.output
    assert f"--map: got 'a={target}'; expected TO to be pass, fail or an integer" in (
        result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_map_to_ascii_digits_is_read_as_an_integer(tmp_path: Path) -> None:
    labels = tmp_path / "people.json"
    labels.write_text(json.dumps({"ann": {"i1": "a"}}), encoding="utf-8")
    items = tmp_path / "items.ndjson"
    result = _invoke("judge-import", "annotations", str(labels), "--kind", "pointwise",
                     "--map", "a=-3", "--items", str(items))
    assert result.exit_code == 0, result.output
    assert json.loads(items.read_text())["labels"] == [{"annotator": "ann", "label": -3}]


def test_crafted_single_lines_are_read_in_linear_time_with_the_real_error(
        tmp_path: Path) -> None:
    # Each line made the old layout search take its 1 s time-out, and that error was
    # then replaced by "not a single-answer layout" from the second layout tried.
    crafted = "[Question]\n\n\n[The Start of Assistant's Answer]\n" * 3000
    log = _jsonl(tmp_path / "single.jsonl", [_single(crafted, n) for n in range(30)]
                 + [_single(GOOD, 31)])
    started = time.process_time()
    with pytest.raises(InputError) as caught:
        mt_bench.convert(log, single=True)
    assert time.process_time() - started < 3  # 30 s before
    message = str(caught.value)
    assert "30 record(s) could not be mapped" in message
    assert "single.jsonl:1: user_prompt: not a single-answer layout" in message
    assert "took more than" not in message


def test_the_single_layouts_are_read_by_their_markers() -> None:
    found = mt_bench._single_turn(
        "[Instruction]\nx\n\n[Question]\nQ\n\nmore\n\n[The Start of Reference Answer]\nR\n"
        "[The End of Reference Answer]\n\n[The Start of Assistant's Answer]\nA\n\nB\n"
        "[The End of Assistant's Answer]")
    assert found == ("Q\n\nmore", "R", "A\n\nB")
    multi = mt_bench._multi_turn(
        "<|The Start of Reference Answer|>\n\nR\n\n<|The End of Reference Answer|>\n\n\n"
        "<|The Start of Assistant A's Conversation with User|>\n\n### User:\nQ1\n\n"
        "### Assistant A:\nA1\n\n### User:\nQ2\n\n### Assistant A:\nA2\n\n"
        "<|The End of Assistant A's Conversation with User|>")
    assert multi == ("### User:\nQ1\n\n### Assistant A:\nA1\n\n### User:\nQ2", "R", "A2")
    assert mt_bench._single_turn(GOOD + "\n") is None  # the answer must end the text
    assert mt_bench._multi_turn(GOOD) is None


def test_annotations_with_more_annotators_than_an_item_holds_write_nothing(
        tmp_path: Path) -> None:
    people = {f"p{n}": {"i1": "a", "i2": "b"} for n in range(MAX_ANNOTATORS + 1)}
    labels = tmp_path / "people.json"
    labels.write_text(json.dumps(people), encoding="utf-8")
    items = tmp_path / "items.ndjson"
    result = _invoke("judge-import", "annotations", str(labels), "--items", str(items))
    assert result.exit_code == 2, result.output
    assert f"got {MAX_ANNOTATORS + 1} annotators' labels; expected at most" in result.output
    assert not items.exists()
    # The "no": at the bound, written, and the items load with every label.
    labels.write_text(json.dumps(dict(list(people.items())[:MAX_ANNOTATORS])),
                      encoding="utf-8")
    result = _invoke("judge-import", "annotations", str(labels), "--items", str(items))
    assert result.exit_code == 0, result.output
    result = _invoke("validate", str(items))
    assert result.exit_code == 0, result.output


def test_codes_with_a_repeated_id_are_refused_unless_samples_tell_them_apart(
        tmp_path: Path) -> None:
    log = _jsonl(tmp_path / "codes.jsonl", [{"id": "w", "verdict": 1, "s": 0},
                                           {"id": "w", "verdict": 0, "s": 1}])
    table = codes.parse_codes(("0=tie", "1=a"))
    with pytest.raises(InputError, match=r"codes.jsonl:2: id: got 'w' again \(first at "
                       r".*codes.jsonl:1\); expected one verdict per id, order and sample"):
        codes.convert(log, table)
    converted = codes.convert(log, table, sample_field="s")
    recorded = _jsonl(tmp_path / "recorded.jsonl", list(converted.recorded))
    loaded, errors = load_recorded(recorded)
    assert errors == () and len(loaded) == 2
