"""Fuzz the judge-item loader and the recorded-verdict loader: a valid record with
exactly one field broken, between two valid ones. The loaders return (never
raise), each error names the file and line 2 and can be printed, the valid
records load with the fields they were written with, and a break the format
forbids (an unknown key, a missing required one, a verdict off the scale,
NaN, 1e309, nesting a thousand deep, a lone surrogate) is an error."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from metaeval.loaders.judge_items import (
    InjectionCase,
    JudgeItems,
    LengthProbe,
    PairItem,
    PointItem,
    benign_suffix,
    load_judge_items,
)
from metaeval.loaders.recorded_verdicts import Recorded, load_recorded
from metaeval.untrusted_json import LoadError
from tests.fuzz.records import item_schema, judge_items, recorded_schema, recorded_verdicts
from tests.fuzz.strategies import (
    Break,
    Raw,
    apply,
    blank,
    breaks,
    corrupted,
    dump,
    encode,
    raw_lines,
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-judge")


def write(path: Path, records: list[bytes]) -> None:
    path.write_bytes(b"\n".join(records) + b"\n")


def assert_errors_on_line_2(path: Path, errors: tuple[LoadError, ...]) -> None:
    for error in errors:
        assert (error.path, error.line) == (str(path), 2), error
        assert str(error).startswith(f"{path}:2:")
        str(error).encode("utf-8")
        assert len(str(error)) < 2_000


# --- judge items ---------------------------------------------------------------------------


def all_items(loaded: JudgeItems) -> list[object]:
    return [*loaded.pointwise, *loaded.pairwise, *loaded.length, *loaded.injection]


def assert_same_item(item: object, record: dict[str, object]) -> None:
    reference = str(record["reference"]) if record.get("reference") else None
    if "response_a" in record:
        assert item == PairItem(record["id"], record["prompt"], record["response_a"],  # type: ignore[arg-type]
                                record["response_b"], reference, record["label"],  # type: ignore[arg-type]
                                getattr(item, "source", ""))
    elif "padded" in record:
        assert item == LengthProbe(record["id"], record["prompt"], record["response"],  # type: ignore[arg-type]
                                   record["padded"], reference, getattr(item, "source", ""))  # type: ignore[arg-type]
    elif "payload" in record:
        payload = str(record["payload"])
        assert item == InjectionCase(
            record["id"], record["prompt"], record["response"], payload,  # type: ignore[arg-type]
            str(record.get("control") or benign_suffix(len(payload))), reference,
            getattr(item, "source", ""))
    else:
        label = record.get("label")
        score = record.get("score", label if isinstance(label, int) else None)
        assert item == PointItem(record["id"], record["prompt"], record["response"],  # type: ignore[arg-type]
                                 reference, label if isinstance(label, str) else None,
                                 score, getattr(item, "source", ""))  # type: ignore[arg-type]


@given(judge_items(item_id="good-first"), judge_items(item_id="good-last"),
       judge_items(item_id="middle"), st.booleans())
def test_valid_judge_items_load_with_every_field(
        folder: Path, first: dict[str, object], last: dict[str, object],
        middle: dict[str, object], ascii_only: bool) -> None:
    path = folder / "items.ndjson"
    write(path, [encode(dump(r, ascii_only=ascii_only)) for r in (first, middle, last)])
    loaded = load_judge_items([path])
    assert loaded.errors == ()
    by_id = {getattr(i, "id", None): i for i in all_items(loaded)}
    for record in (first, middle, last):
        assert_same_item(by_id[record["id"]], record)


FIRST_ITEM: dict[str, object] = {"id": "good-first", "prompt": "p", "response": "r",
                                 "label": "pass"}
LAST_ITEM: dict[str, object] = {"id": "good-last", "prompt": "p", "response_a": "x",
                                "response_b": "y", "label": "tie"}
SEED_ITEM: dict[str, object] = {"id": "middle", "prompt": "p", "response": "r", "label": 3}


def check_items(path: Path, middle: bytes) -> JudgeItems:
    write(path, [encode(dump(FIRST_ITEM)), middle, encode(dump(LAST_ITEM))])
    loaded = load_judge_items([path])
    assert_errors_on_line_2(path, loaded.errors)
    ids = [getattr(i, "id", None) for i in all_items(loaded)]
    assert "good-first" in ids and "good-last" in ids
    assert len(ids) == (2 if blank(middle) or loaded.errors else 3)
    return loaded


@st.composite
def broken_items(draw: st.DrawFn) -> tuple[dict[str, object], Break]:
    item = draw(judge_items(item_id="middle"))
    return item, draw(breaks(item, item_schema))


@given(broken_items(), st.booleans())
@example((SEED_ITEM, Break("replace", ("prompt",), "\ud800", True)), True)
@example((SEED_ITEM, Break("replace", ("prompt",), "\ud800", True)), False)
@example((SEED_ITEM, Break("rename", ("prompt",), "promt", True)), True)
@example((SEED_ITEM, Break("replace", ("label",), 99, True)), True)
@example((SEED_ITEM, Break("replace", ("label",), Raw("1e309"), True)), True)
@example((SEED_ITEM, Break("replace", ("label",), Raw("[" * 1000 + "]" * 1000), True)), True)
def test_a_judge_item_with_one_field_broken_is_an_error_on_its_line_or_loads(
        folder: Path, case: tuple[dict[str, object], Break], ascii_only: bool) -> None:
    item, brk = case
    loaded = check_items(folder / "broken.ndjson",
                         encode(dump(apply(item, brk), ascii_only=ascii_only)))
    if brk.must_fail:
        assert loaded.errors, f"{brk} loaded"


@given(judge_items(item_id="middle").flatmap(lambda r: corrupted(encode(dump(r)))) | raw_lines)
def test_a_line_of_bytes_that_is_not_an_item_is_an_error_on_its_line(folder: Path,
                                                                      middle: bytes) -> None:
    check_items(folder / "bytes.ndjson", middle)


# --- recorded verdicts ---------------------------------------------------------------------


def assert_same_verdict(recorded: Recorded, record: dict[str, object]) -> None:
    verdict = record["verdict"]
    expected = (verdict == "pass" if verdict in ("pass", "fail")
                else float(verdict) if isinstance(verdict, int | float) else verdict)
    assert (recorded.id, recorded.order, recorded.sample, recorded.verdict, recorded.raw,
            recorded.variant) == (record["id"], record.get("order", "ab"),
                                  record.get("sample", 0), expected, record.get("raw", ""),
                                  record.get("variant", "original"))


@given(recorded_verdicts(item_id="good-first"), recorded_verdicts(item_id="good-last"),
       recorded_verdicts(item_id="middle"), st.booleans())
def test_valid_recorded_verdicts_load_with_every_field(
        folder: Path, first: dict[str, object], last: dict[str, object],
        middle: dict[str, object], ascii_only: bool) -> None:
    path = folder / "recorded.jsonl"
    write(path, [encode(dump(r, ascii_only=ascii_only)) for r in (first, middle, last)])
    found, errors = load_recorded(path)
    assert errors == ()
    assert [r.source for r in found] == [f"{path}:{n}" for n in (1, 2, 3)]
    for loaded, record in zip(found, (first, middle, last), strict=True):
        assert_same_verdict(loaded, record)
        assert not isinstance(loaded.verdict, float) or (
            math.isfinite(loaded.verdict) and 1 <= loaded.verdict <= 5)


SEED_VERDICT: dict[str, object] = {"id": "middle", "order": "ab", "sample": 0, "verdict": 4,
                                   "raw": "4"}


@st.composite
def broken_verdicts(draw: st.DrawFn) -> tuple[dict[str, object], Break]:
    record = draw(recorded_verdicts(item_id="middle", sample=0))
    return record, draw(breaks(record, recorded_schema))


@given(broken_verdicts(), st.booleans())
# Issue 13: 99 on a 1-5 scale counted as a pass; 0, -1 and 6 crashed the metrics;
# 1e309 and a 400-digit integer raised OverflowError.
@example((SEED_VERDICT, Break("replace", ("verdict",), 99, True)), True)
@example((SEED_VERDICT, Break("replace", ("verdict",), 0, True)), True)
@example((SEED_VERDICT, Break("replace", ("verdict",), -1, True)), True)
@example((SEED_VERDICT, Break("replace", ("verdict",), 6, True)), True)
@example((SEED_VERDICT, Break("replace", ("verdict",), Raw("1e309"), True)), True)
@example((SEED_VERDICT, Break("replace", ("verdict",), 10**400, True)), True)
@example((SEED_VERDICT, Break("replace", ("verdict",), Raw("NaN"), True)), True)
@example((SEED_VERDICT, Break("replace", ("sample",), 10**400, False)), True)
@example((SEED_VERDICT, Break("replace", ("raw",), "\ud800", True)), False)
def test_a_recorded_verdict_with_one_field_broken_is_an_error_on_its_line_or_loads(
        folder: Path, case: tuple[dict[str, object], Break], ascii_only: bool) -> None:
    record, brk = case
    path = folder / "broken-recorded.jsonl"
    first = SEED_VERDICT | {"id": "good-first"}
    last = SEED_VERDICT | {"id": "good-last", "verdict": "pass"}
    write(path, [encode(dump(first)), encode(dump(apply(record, brk), ascii_only=ascii_only)),
                 encode(dump(last))])
    found, errors = load_recorded(path)
    assert_errors_on_line_2(path, errors)
    assert [r.id for r in found if r.source != f"{path}:2"] == ["good-first", "good-last"]
    assert (len(found) == 3) != bool(errors)
    if brk.must_fail or (brk.path == ("verdict",) and isinstance(brk.new, int) and not (
            1 <= brk.new <= 5)):
        assert errors, f"{brk} loaded"
    for loaded in found:  # whatever loaded is on the scale
        assert not isinstance(loaded.verdict, float) or (
            math.isfinite(loaded.verdict) and 1 <= loaded.verdict <= 5)
