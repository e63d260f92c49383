"""Every command that writes a file: one clear line and exit 2 when it cannot, never
an OSError traceback; what was already shown stays shown.

Tests run as root, which ignores permission bits: an unwritable path is one
whose parent is a file, or a rename made to fail as a read-only directory would.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.errors import ExitCode
from tests.builders import tracked

ROOT = Path(__file__).resolve().parents[2]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def blocked(root: Path) -> Path:
    """A directory path that cannot be created: its parent is a file."""
    (root / "not-a-dir").write_text("a file\n", encoding="utf-8")
    return root / "not-a-dir"


def read_only(*args: object) -> None:
    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))


def assert_one_error(result: Result, path: Path, reason: str) -> None:
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert isinstance(result.exception, SystemExit)
    assert result.stderr == f"error: {path}: cannot write: {reason}\n"


def test_accept_into_a_read_only_findings_file_changes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tracked(tmp_path)
    before = path.read_bytes()
    fingerprint = json.loads(before)["findings"][0]["fingerprint"]
    monkeypatch.setattr("metaeval.files.os.replace", read_only)
    result = invoke("findings", "accept", fingerprint[:8], "--reason", "equivalent", "--by",
                    "dana", "--file", str(path))
    assert_one_error(result, path, "Permission denied (EACCES)")
    assert result.stdout == ""  # not "accepted": it was not
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["findings.json"]


def test_accept_mirror_writes_the_file(tmp_path: Path) -> None:
    path = tracked(tmp_path)
    fingerprint = json.loads(path.read_text(encoding="utf-8"))["findings"][0]["fingerprint"]
    result = invoke("findings", "accept", fingerprint[:8], "--reason", "equivalent", "--by",
                    "dana", "--file", str(path))
    assert result.exit_code == 0, result.output
    assert "accepted" in json.loads(path.read_text(encoding="utf-8"))["findings"][0]["status"]


def test_export_to_an_unwritable_sarif_path_is_one_line(tmp_path: Path) -> None:
    path = tracked(tmp_path)
    sarif = blocked(tmp_path) / "findings.sarif"
    result = invoke("findings", "export", "--sarif", str(sarif), "--file", str(path))
    assert_one_error(result, sarif, f"{tmp_path / 'not-a-dir'} is not a directory (ENOTDIR)")


def test_llmbar_import_to_an_unwritable_items_path_is_one_line(tmp_path: Path) -> None:
    dataset = tmp_path / "Natural.dataset.json"
    dataset.write_text(json.dumps([{"input": "q", "output_1": "a", "output_2": "b",
                                    "label": 1}]), encoding="utf-8")
    items = blocked(tmp_path) / "items.ndjson"
    result = invoke("judge-import-llmbar", str(dataset), "--items", str(items))
    assert_one_error(result, items, f"{tmp_path / 'not-a-dir'} is not a directory (ENOTDIR)")
    good = invoke("judge-import-llmbar", str(dataset), "--items", str(tmp_path / "i.ndjson"))
    assert good.exit_code == 0, good.output
    assert json.loads((tmp_path / "i.ndjson").read_text(encoding="utf-8"))["label"] == "a"


def test_init_where_a_file_blocks_a_directory_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "mutants").write_text("a file where init wants a directory\n",
                                      encoding="utf-8")
    (tmp_path / "shop").mkdir()  # the package init scaffolds for
    (tmp_path / "shop" / "__init__.py").write_text("", encoding="utf-8")
    result = invoke("init", "--path", str(tmp_path))
    assert_one_error(result, tmp_path / "mutants" / "example.py",
                     f"{tmp_path / 'mutants'} is not a directory (ENOTDIR)")


def test_judge_audit_shows_the_audit_before_an_unwritable_calibration_file(
        tmp_path: Path) -> None:
    calibration = blocked(tmp_path) / "calibration.json"
    result = invoke("judge-audit", "--items", str(ROOT / "meta_sets" / "judge"), "--no-cache",
                    "--judge", "steady", "--write", "--calibration", str(calibration),
                    "--tpr-bar", "0.6", "--tnr-bar", "0.6")  # a margin, not the 0.8 bar
    assert "verdict: may gate" in result.stdout  # the finished audit is not lost
    assert_one_error(result, calibration,
                     f"{tmp_path / 'not-a-dir'} is not a directory (ENOTDIR)")


def test_judge_audit_never_writes_a_calibration_file_through_a_dangling_link(
        tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    calibration = tmp_path / "repo" / "calibration.json"
    calibration.parent.mkdir()
    calibration.symlink_to(outside / "made-by-metaeval.json")
    result = invoke("judge-audit", "--items", str(ROOT / "meta_sets" / "judge"), "--no-cache",
                    "--judge", "steady", "--write", "--calibration", str(calibration),
                    "--tpr-bar", "0.6", "--tnr-bar", "0.6")  # a margin, not the 0.8 bar
    assert "verdict: may gate" in result.stdout
    assert_one_error(result, calibration, f"{calibration} is a symbolic link; metaeval "
                     "writes no file of its own through one (ELOOP)")
    assert os.listdir(outside) == []


# --- an output that is one of the command's inputs -------------------------------------


def _judge_items(tmp_path: Path) -> Path:
    folder = tmp_path / "judge"
    folder.mkdir()
    for name in ("pointwise.ndjson", "position.ndjson"):
        (folder / name).write_bytes((ROOT / "meta_sets" / "judge" / name).read_bytes())
    return folder


def test_write_probes_over_the_items_is_refused_before_the_judge_is_asked(
        tmp_path: Path) -> None:
    items = _judge_items(tmp_path) / "pointwise.ndjson"
    before = items.read_bytes()
    result = invoke("judge-audit", "--items", str(items), "--no-cache", "--judge", "steady",
                    "--write-probes", str(items))
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert result.stderr == (f"error: --write-probes {items}: is also an input (--items); "
                             "refusing to overwrite it\n")
    assert result.stdout == ""  # no audit ran
    assert items.read_bytes() == before


def test_an_output_over_a_file_read_from_an_input_folder_or_by_a_link_is_refused(
        tmp_path: Path) -> None:
    folder = _judge_items(tmp_path)
    result = invoke("judge-audit", "--items", str(folder), "--no-cache", "--judge", "steady",
                    "--html", str(folder / "position.ndjson"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "is also an input (--items)" in result.stderr
    (tmp_path / "probes.ndjson").symlink_to(folder / "pointwise.ndjson")
    result = invoke("judge-audit", "--items", str(folder), "--no-cache", "--judge", "steady",
                    "--write-probes", str(tmp_path / "probes.ndjson"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "is also an input (--items)" in result.stderr


def test_write_probes_to_a_new_file_beside_the_items_is_written(tmp_path: Path) -> None:
    # The "no": a new file in the items' folder replaces nothing that was read.
    folder = _judge_items(tmp_path)
    probes = folder / "generated.ndjson"
    result = invoke("judge-audit", "--items", str(folder / "pointwise.ndjson"), "--no-cache",
                    "--judge", "steady", "--probes", "generated", "--write-probes", str(probes))
    assert "is also an input" not in result.stderr
    assert probes.is_file() and result.exit_code in (ExitCode.OK, ExitCode.FINDINGS)


def test_findings_export_over_its_own_findings_file_is_refused(tmp_path: Path) -> None:
    path = tracked(tmp_path)
    before = path.read_bytes()
    result = invoke("findings", "export", "--html", str(path), "--file", str(path))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stderr == (f"error: --html {path}: is also an input (--file); refusing to "
                             "overwrite it\n")
    assert path.read_bytes() == before


def test_meta_eval_html_over_a_meta_set_and_gate_summary_over_a_result_are_refused(
        tmp_path: Path) -> None:
    meta_set = tmp_path / "runs.jsonl"
    meta_set.write_bytes((ROOT / "meta_sets" / "support_near_misses.jsonl").read_bytes())
    result = invoke("meta-eval", str(tmp_path), "--summary", str(meta_set))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "--summary " + str(meta_set) + ": is also an input (META_SET)" in result.stderr
    results = tmp_path / "result.json"
    results.write_text("{}\n", encoding="utf-8")
    os.link(results, tmp_path / "hard.md")  # the same file by another name
    result = invoke("gate", str(results), "--summary", str(tmp_path / "hard.md"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "is also an input (RESULTS)" in result.stderr
    assert results.read_text(encoding="utf-8") == "{}\n"
