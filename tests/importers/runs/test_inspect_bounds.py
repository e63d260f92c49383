"""inspect_ai logs that hold one bad sample, or a zip that is not what it declares:
the bad sample is one error named ``samples[N]``, every other sample is a run, and a
zip member is read only within the data-file bound. The logs are written here in the
layout inspect_ai writes (a ``.json`` document; a ``.eval`` zip of ``header.json``
and ``samples/ID_epoch_N.json``), so each can be broken in one place."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from metaeval.commands.import_runs import Imported, ImportRequest, import_runs
from metaeval.contract import JsonObject
from metaeval.importers.runs import inspect_files

pytest.importorskip("inspect_ai")

IDS = ["s1", "s2", "s3", "s4"]
HEADER: JsonObject = {"version": 2, "status": "success", "eval": {
    "task": "refunds", "model": "mockllm/model", "dataset": {"sample_ids": list(IDS)},
    "config": {"epochs": 1}}}


def sample(sid: str, answer: str = "done") -> JsonObject:
    return {"id": sid, "epoch": 1, "input": f"task {sid}", "target": "done",
            "messages": [{"role": "user", "content": f"task {sid}"},
                         {"role": "assistant", "content": answer}],
            "scores": {"includes": {"value": "C"}}}


def samples() -> list[bytes]:
    return [json.dumps(sample(sid)).encode() for sid in IDS]


def json_log(path: Path, parts: list[bytes]) -> Path:
    head = json.dumps(HEADER).encode()[:-1]
    path.write_bytes(head + b', "samples": [' + b", ".join(parts) + b"]}")
    return path


def eval_log(path: Path, parts: list[bytes], *, order: list[str] | None = None,
             extra: tuple[tuple[str, bytes], ...] = ()) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps(HEADER))
        named = dict(zip(IDS, parts, strict=True))
        for sid in order or IDS:
            z.writestr(f"samples/{sid}_epoch_1.json", named[sid])
        for name, data in extra:
            z.writestr(name, data)
    return path


def imported(path: Path) -> Imported:
    return import_runs(ImportRequest("inspect", (path,)))


def ids(result: Imported) -> list[object]:
    return [line["id"] for line in result.lines]


BREAKS = {
    "epoch": json.dumps({**sample("s2"), "epoch": "x"}).encode(),
    "deep": json.dumps({**sample("s2"), "metadata": {"x": "@"}}).encode().replace(
        b'"@"', b"[" * 100_000 + b"]" * 100_000),
    "score": json.dumps({**sample("s2"), "scores": {"includes": 3}}).encode(),
    "utf8": json.dumps(sample("s2", "d@ne")).encode().replace(b"d@ne", b"d\xffne"),
    "nan": json.dumps(sample("s2", "x")).encode().replace(b'"epoch": 1', b'"epoch": NaN'),
    "empty call id": json.dumps({**sample("s2"), "messages": [
        {"role": "user", "content": "task s2"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "", "function": "refund", "arguments": {}}]}]}).encode(),
}


@pytest.mark.parametrize("kind", ["json", "eval"])
@pytest.mark.parametrize("bad", sorted(BREAKS))
def test_one_bad_sample_is_one_error_and_every_other_sample_is_a_run(
        tmp_path: Path, kind: str, bad: str) -> None:
    parts = samples()
    parts[1] = BREAKS[bad]
    write = json_log if kind == "json" else eval_log
    result = imported(write(tmp_path / f"log.{kind}", parts))
    assert ids(result) == ["refunds:s1:1", "refunds:s3:1", "refunds:s4:1"]
    (error,) = result.errors
    assert (error.path, error.line) == (str(tmp_path / f"log.{kind}"), 0)
    assert error.field.startswith("samples[1]")


@pytest.mark.parametrize("kind", ["json", "eval"])
def test_a_good_log_is_every_sample_in_the_headers_order(tmp_path: Path, kind: str) -> None:
    path = (json_log(tmp_path / "log.json", samples()) if kind == "json" else
            eval_log(tmp_path / "log.eval", samples(), order=["s3", "s1", "s4", "s2"]))
    result = imported(path)
    assert result.errors == ()
    assert ids(result) == [f"refunds:{sid}:1" for sid in IDS]
    assert result.lines[0]["trajectory"] == [
        {"type": "message", "role": "user", "content": "task s1"},
        {"type": "message", "role": "assistant", "content": "done"}]


def test_two_zip_members_of_one_name_are_an_error_not_the_later_read(tmp_path: Path) -> None:
    other = json.dumps(sample("s2", "the other one")).encode()
    with pytest.warns(UserWarning, match="Duplicate name"):
        path = eval_log(tmp_path / "log.eval", samples(),
                        extra=(("samples/s2_epoch_1.json", other),))
    result = imported(path)
    assert result.lines == ()
    (error,) = result.errors
    assert "two members named 'samples/s2_epoch_1.json'" in error.message


def test_a_member_past_the_bound_is_refused_before_it_is_decompressed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inspect_files, "DATA_LIMIT", 100_000)
    parts = samples()
    parts[1] = json.dumps({**sample("s2"), "metadata": {"pad": " " * 200_000}}).encode()
    path = eval_log(tmp_path / "log.eval", parts)
    assert path.stat().st_size < 10_000  # compresses well: the zip itself is small
    (error,) = imported(path).errors
    assert "member 'samples/s2_epoch_1.json' decompresses to" in error.message
    assert "expected at most 100000" in error.message


def test_members_past_the_bound_together_are_refused(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inspect_files, "DATA_LIMIT", 60_000)
    parts = [json.dumps({**sample(sid), "metadata": {"pad": " " * 20_000}}).encode()
             for sid in IDS]
    (error,) = imported(eval_log(tmp_path / "log.eval", parts)).errors
    assert "its members decompress to" in error.message


def test_a_member_that_decompresses_past_its_declared_size_is_one_sample_error(
        tmp_path: Path) -> None:
    path = eval_log(tmp_path / "log.eval", samples())
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("samples/s2_epoch_1.json")
    # The declared size, in the central directory, made smaller than the data.
    central = data.rfind(b"PK\x01\x02", 0, data.find(b"samples/s2_epoch_1.json",
                                                     data.find(b"PK\x01\x02")) + 1)
    data[central + 24:central + 28] = (info.file_size // 2).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    result = imported(path)
    assert ids(result) == ["refunds:s1:1", "refunds:s3:1", "refunds:s4:1"]
    (error,) = result.errors
    assert error.field == "samples[1]"


def test_a_value_samples_before_the_samples_key_does_not_hide_them(tmp_path: Path) -> None:
    head = json.dumps({**HEADER, "status": "samples", "note": {"samples": [1]}}).encode()[:-1]
    path = tmp_path / "log.json"
    path.write_bytes(head + b', "samples": [' + b", ".join(samples()) + b"]}")
    result = imported(path)
    assert result.errors == ()
    assert ids(result) == [f"refunds:{sid}:1" for sid in IDS]
