"""``metaeval import``: the file written, the bad records named, the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from metaeval.cli import main
from metaeval.importers.runs import FORMATS
from metaeval.loaders.meta_set import FORMAT_VERSION
from tests.importers.runs.conftest import NATIVE, REQUEST


def write(path: Path, *lines: object) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_import_writes_one_meta_set_line_a_run(tmp_path: Path) -> None:
    log = write(tmp_path / "log.jsonl", REQUEST, {**REQUEST, "id": "refund-8"})
    out = CliRunner().invoke(main, ["import", "anthropic", str(log), "-o",
                                    str(tmp_path / "runs.jsonl")])
    assert out.exit_code == 0, out.output
    lines = [json.loads(x) for x in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert [x["id"] for x in lines] == ["refund-7", "refund-8"]
    assert lines[0]["trajectory"] == NATIVE
    assert lines[0]["format_version"] == FORMAT_VERSION
    assert out.output.endswith(f"2 runs from 1 file, written to {tmp_path / 'runs.jsonl'}; "
                               "0 bad records\n")


def test_a_bad_record_is_named_the_good_ones_written_and_the_exit_is_2(tmp_path: Path) -> None:
    log = write(tmp_path / "log.jsonl", REQUEST, REQUEST, {"messages": "hi"})
    out = CliRunner().invoke(main, ["import", "anthropic", str(log), "-o",
                                    str(tmp_path / "runs.jsonl"), "--format", "json"])
    assert out.exit_code == 2
    report = json.loads(out.output)
    assert report["runs"] == 1
    assert [(e["line"], e["field"]) for e in report["errors"]] == [(2, "id"), (3, "messages")]
    assert "first at" in report["errors"][0]["message"]
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == 1


def test_nothing_read_writes_nothing_and_exits_2(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["import", "anthropic", str(tmp_path / "missing.jsonl"),
                                    "-o", str(tmp_path / "runs.jsonl")])
    assert out.exit_code == 2
    assert "no such file or directory" in out.output
    assert not (tmp_path / "runs.jsonl").exists()


def test_a_label_from_a_score_the_runs_lack_is_an_error_per_run(tmp_path: Path) -> None:
    log = write(tmp_path / "log.jsonl", REQUEST)
    out = CliRunner().invoke(main, ["import", "anthropic", str(log), "-o",
                                    str(tmp_path / "runs.jsonl"), "--label-from", "includes"])
    assert out.exit_code == 2
    assert "log.jsonl:1: scores.includes: the run has no score 'includes'" in out.output


def test_an_unknown_format_is_refused_by_name(tmp_path: Path) -> None:
    # A name no format will take (formats are added one module at a time), and the
    # choices the registry holds.
    out = CliRunner().invoke(main, ["import", "no-such", str(tmp_path), "-o", "x.jsonl"])
    assert out.exit_code == 2
    choices = ", ".join(repr(name) for name in (*sorted(FORMATS), "auto"))
    assert f"'no-such' is not one of {choices}" in out.output
    assert "'otel'" in choices
