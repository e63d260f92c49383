"""``--labels FORMAT:PATH``: the labels a run format carries (``RunFormat.labels``), read
and checked as a labels file's rows are, end to end through the command line, with a
tiny format planted in the registry by the test."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.contract import Message
from metaeval.importers.runs import FORMATS, RunFormat
from metaeval.importers.runs.common import BadRecord, ImportedRun
from metaeval.loaders.item_labels import read_item_labels
from metaeval.loaders.labels_files import read_labels
from metaeval.untrusted_json import LoadError
from tests.loaders.conftest import write_csv

CHECK = "says_refund"
PROJECT = f"""[project]
name = "team"

[tool.metaeval.meta_eval]
resamples = 20

[[tool.metaeval.meta_eval.suite]]
name = "{CHECK}"
grader = "answer_contains"
params = {{ text = "refund" }}
"""


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(path.read_text().splitlines(), 1):
        yield number, json.loads(line)


def _read(paths: Iterable[Path], errors: list[LoadError]) -> Iterator[ImportedRun]:
    for path in paths:
        for number, record in _records(path):
            yield ImportedRun(record["id"], f"{path}:{number}", "refund", (
                Message("user", "Refund my order."), Message("assistant", record["answer"])))


def _labels(path: Path) -> Iterator[tuple[str, dict[str, object]]]:
    for number, record in _records(path):
        if "broken" in record:
            raise BadRecord("verdicts", "got a record the planted format cannot read")
        for who, verdict in record["verdicts"].items():
            # A record named by its trace, not its line, as span exports name them.
            source = f"{path}:{number}" if number % 2 else f"trace {record['id']}"
            yield source, {"run_id": record["id"], "check": CHECK, "label": verdict,
                           "annotator": who, "rationale": ""}


PLANTED = RunFormat("planted", "a test's own runs, with people's verdicts", (".planted",),
                    lambda head, path: path.suffix == ".planted", "import/planted.md", _read,
                    labels=_labels)
BARE = RunFormat("bare", "a test's own runs, with no verdicts", (".planted",),
                 lambda head, path: False, "import/bare.md", _read)

# (id, answer, what two people said): the grader says pass on an answer with "refund".
RUNS = [("r1", "I issued a refund.", {"ann": "pass", "bob": "pass"}),
        ("r2", "I could not help.", {"ann": "fail", "bob": "fail"}),
        ("r3", "A refund is on its way.", {"ann": "fail", "bob": "fail"}),
        ("r4", "No.", {"ann": "pass", "bob": "pass"}),
        ("r5", "Your refund is done.", {"ann": "pass", "bob": "pass"})]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setitem(FORMATS, "planted", PLANTED)
    monkeypatch.setitem(FORMATS, "bare", BARE)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    (tmp_path / "logs").mkdir()
    _write(tmp_path / "logs" / "a.planted", RUNS[:3])
    _write(tmp_path / "logs" / "b.planted", RUNS[3:])
    return tmp_path


def _write(path: Path, runs: list[tuple[str, str, dict[str, str]]]) -> None:
    path.write_text("".join(json.dumps({"id": i, "answer": a, "verdicts": v}) + "\n"
                            for i, a, v in runs))


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _checks(result: Result) -> dict[str, Any]:
    document = json.loads(result.output)
    assert document["errors"] == [], document["errors"]
    row: dict[str, Any] = next(r for r in document["checks"] if r["name"] == CHECK)
    return {k: row[k] for k in ("n", "tp", "fn", "tn", "fp", "unscored", "kappa")}


def test_a_formats_labels_are_measured_as_a_labels_files_rows(project: Path) -> None:
    done = _cli("meta-eval", "--runs", "planted:logs", "--labels", "planted:logs",
                "--format", "json")
    assert done.exit_code in (0, 1), done.output
    figures = _checks(done)
    # Counted from RUNS by hand: r1 and r5 tp, r4 fn, r2 tn, r3 fp.
    assert (figures["n"], figures["tp"], figures["fn"], figures["tn"], figures["fp"]) == (
        5, 2, 1, 1, 1)
    # The same verdicts written as a labels CSV give the same figures.
    write_csv(project / "labels.csv", [
        {"run_id": i, "check": CHECK, "label": verdict, "annotator": who, "rationale": ""}
        for i, _, said in RUNS for who, verdict in said.items()])
    from_csv = _cli("meta-eval", "--runs", "planted:logs", "--labels", "labels.csv",
                    "--format", "json")
    assert _checks(from_csv) == figures


def test_a_bad_verdict_in_a_format_is_refused_as_a_bad_csv_row_is(project: Path) -> None:
    _write(project / "logs" / "b.planted", [("r4", "No.", {"ann": "maybe", "bob": "pass"}),
                                            ("r5", "Your refund is done.", {"ann": "pass"})])
    done = _cli("meta-eval", "--runs", "planted:logs", "--labels", "planted:logs")
    assert done.exit_code == 2, done.output
    assert f"{Path('logs') / 'b.planted'}:1: label: got 'maybe'; expected 'pass', " \
           "'fail' or 'unsure'" in done.output
    # The record named by its trace, not a line: the error names the file and the trace.
    _write(project / "logs" / "b.planted", [("r4", "No.", {"ann": "pass"}),
                                            ("r5", "Your refund is done.", {"ann": "nope"})])
    done = _cli("validate", "--runs", "planted:logs", "--labels", "planted:logs")
    assert done.exit_code == 2, done.output
    assert f"{Path('logs') / 'b.planted'}:trace r5: label: got 'nope'" in done.output


def test_validate_joins_a_formats_labels_with_the_runs(project: Path) -> None:
    good = _cli("validate", "--runs", "planted:logs", "--labels", "planted:logs")
    assert good.exit_code == 0, good.output
    assert "5 runs, 10 labels by 2 annotators" in good.output
    # A verdict for a run the logs do not hold is a join error naming its row.
    with (project / "logs" / "b.planted").open("a") as f:
        f.write(json.dumps({"id": "r9", "answer": "x", "verdicts": {"ann": "pass"}}) + "\n")
    _write(project / "runs.planted", RUNS)
    bad = _cli("validate", "--runs", "planted:runs.planted", "--labels", "planted:logs")
    assert bad.exit_code == 2, bad.output
    assert f"{Path('logs') / 'b.planted'}:3: run_id: got 'r9'; expected the id of a " \
           "loaded run" in bad.output


def test_a_format_that_carries_no_labels_is_refused_naming_those_that_do(
        project: Path) -> None:
    for command in (["meta-eval", "--runs", "planted:logs"], ["validate"]):
        done = _cli(*command, "--labels", "bare:logs")
        assert done.exit_code == 2, done.output
        assert "format 'bare' carries no labels" in done.output
        carriers = done.output.partition("FORMAT one of ")[2].strip().split(", ")
        assert "planted" in carriers and "bare" not in carriers
        assert "OK" not in done.output


def test_an_existing_file_whose_name_holds_a_colon_is_a_labels_file(project: Path) -> None:
    # 'planted:labels.csv' would name format 'planted' and path 'labels.csv'; the file
    # exists, so it is the labels file: a user's file is never misread as a format.
    write_csv(project / "planted:labels.csv", [
        {"run_id": i, "check": CHECK, "label": "pass", "annotator": "csv", "rationale": ""}
        for i, _, _ in RUNS])
    (project / "labels.csv").mkdir()  # what the format reading would have read: a folder
    annotations, errors = read_labels([Path("planted:labels.csv")])
    assert errors == []
    assert {a.annotator for a in annotations} == {"csv"}
    done = _cli("meta-eval", "--runs", "planted:logs", "--labels", "planted:labels.csv",
                "--format", "json")
    assert _checks(done)["tp"] == 3  # every run labelled pass; r1, r3, r5 graded pass


def test_what_a_format_cannot_read_is_one_error_naming_the_file(project: Path) -> None:
    (project / "logs" / "c.planted").write_text(json.dumps({"id": "x", "broken": 1}) + "\n")
    annotations, errors = read_labels([Path("planted:logs")])
    assert len(annotations) == 10
    assert errors == [LoadError(str(Path("logs") / "c.planted"), 0, "verdicts",
                                "got a record the planted format cannot read")]
    _, missing = read_labels([Path("planted:nowhere")])
    assert missing == [LoadError("nowhere", 0, "", "no such file or directory")]
    _, typo = read_labels([Path("plantd:logs")])
    said, _, carriers = typo[0].message.partition("FORMAT one of ")
    assert said == ("no such file; or, if 'plantd' was meant as a format, expected "
                    "FORMAT:PATH with ")
    assert "planted" in carriers.split("; ")[0].split(", ")
    assert carriers.endswith("; did you mean 'planted'?")
    # A misspelt format before a labels file's suffix is the same error, not the
    # suffix's reader failing to open a file named 'plantd:labels.jsonl'.
    _, suffixed = read_labels([Path("plantd:labels.jsonl")])
    assert suffixed[0].message == typo[0].message


def test_a_formats_file_given_as_a_labels_file_names_the_format_once(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A trace export given without FORMAT: is one error naming the format to give,
    # not 'unknown column' on every line; a format with no labels is named as such.
    sniffs = RunFormat("sniffs", "planted, told by its first bytes", (".jsonl",),
                       lambda head, path: b"verdicts" in head, "import/sniffs.md", _read,
                       labels=_labels)
    monkeypatch.setitem(FORMATS, "sniffs", sniffs)
    _write(project / "export.jsonl", RUNS)
    annotations, errors = read_labels([Path("export.jsonl")])
    assert annotations == []
    assert errors == [LoadError("export.jsonl", 0, "", (
        "got a file of format 'sniffs' (by its first bytes), not a labels file; expected "
        "--labels sniffs:PATH to read the verdicts that format carries "
        "(docs/import/sniffs.md)"))]
    validated = _cli("validate", "--labels", "export.jsonl")
    assert validated.output.count("export.jsonl") == 1, validated.output
    monkeypatch.setitem(FORMATS, "sniffs", RunFormat(
        "sniffs", "no verdicts", (".jsonl",), sniffs.sniff, "import/sniffs.md", _read))
    _, errors = read_labels([Path("export.jsonl")])
    assert errors[0].message.startswith("got runs of format 'sniffs' (by their first "
                                        "bytes), which carry no labels")
    # Must say no: a labels file the format's sniff would claim (its rationale holds
    # the key) is read as labels: its first row has an annotator.
    row = {"run_id": "r1", "check": CHECK, "label": "pass", "annotator": "ann",
           "rationale": '"verdicts" were clear'}
    (project / "labels.jsonl").write_text(json.dumps(row) + "\n")
    annotations, errors = read_labels([Path("labels.jsonl")])
    assert (len(annotations), errors) == (1, [])


def test_judge_audit_labels_refuse_a_formats_labels(project: Path) -> None:
    # A format's verdicts label runs; judge items' labels are another file.
    _, errors = read_item_labels([Path("planted:logs")])
    assert len(errors) == 1
    assert "label runs: give it to meta-eval --labels" in errors[0].message


def test_the_configs_labels_may_name_a_format_under_the_project(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "pyproject.toml").write_text(PROJECT.replace(
        "resamples = 20", 'resamples = 20\nlabels = ["planted:logs"]'))
    (project / "sub").mkdir()
    monkeypatch.chdir(project / "sub")  # the path is the project's, not the cwd's
    done = _cli("meta-eval", "--runs", f"planted:{project / 'logs'}", "--format", "json")
    figures = _checks(done)
    assert (figures["tp"], figures["fn"], figures["tn"], figures["fp"]) == (2, 1, 1, 1)
