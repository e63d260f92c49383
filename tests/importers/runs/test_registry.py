"""The run-format registry: every format it holds is offered by the command line,
``--runs FORMAT:PATH``, ``validate`` and the docs' index, and ``import auto`` picks a
file's format by its first bytes and says which it picked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.commands.import_runs import picked_format, runs_spec
from metaeval.errors import InputError
from metaeval.importers.runs import FORMATS, RunFormat
from tests.importers.runs.conftest import REQUEST

DOCS = Path(__file__).resolve().parents[3] / "docs"


def _help(*args: str) -> str:
    return CliRunner().invoke(main, [*args, "--help"], terminal_width=200).output


def missing_from(unit: RunFormat) -> list[str]:
    """Where a registered format is not offered (empty when it is everywhere)."""
    index = (DOCS / "import" / "index.md").read_text(encoding="utf-8")
    page = Path(unit.docs).name
    where = []
    if not re.search(rf"^\| `{re.escape(unit.name)}` \|.*\]\({re.escape(page)}\)", index, re.M):
        where.append("docs index")
    if not (DOCS / unit.docs).is_file():
        where.append("docs page")
    if re.search(rf"\b{re.escape(unit.name)}\b", _help("import").split("Formats:")[-1]) is None:
        where.append("import")
    for command in ("meta-eval", "validate"):
        # The --runs option's help, up to the next option.
        text = " ".join(_help(command).split()).partition("--runs FORMAT:PATH")[2]
        helped = re.split(r" --[a-z]", text)[0]
        if re.search(rf"(?<![\w-]){re.escape(unit.name)}(?![\w-])", helped) is None:
            where.append(command)
    try:
        runs_spec(f"{unit.name}:x")
    except InputError:
        where.append("--runs FORMAT:PATH")
    return where


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_registered_format_is_offered_everywhere(name: str) -> None:
    assert missing_from(FORMATS[name]) == []


def test_a_format_missing_from_the_docs_and_the_cli_is_named() -> None:
    # The mirror: a registered format nobody wired would pass a check that cannot fail.
    ghost = RunFormat("ghost", "nothing", (".ghost",), lambda head, path: False,
                      "import/ghost.md", FORMATS["otel"].read)
    assert missing_from(ghost) == ["docs index", "docs page", "import", "meta-eval",
                                   "validate", "--runs FORMAT:PATH"]


def _otel_file(tmp_path: Path) -> Path:
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps({"resourceSpans": []}) + "\n")
    return path


def test_sniffing_tells_each_file_its_one_format(tmp_path: Path) -> None:
    messages = tmp_path / "calls.jsonl"
    messages.write_text(json.dumps(REQUEST) + "\n")
    inspect = tmp_path / "log.json"
    inspect.write_text(json.dumps({"version": 2, "status": "success", "eval": {}}))
    assert picked_format([messages]) == "anthropic"
    assert picked_format([_otel_file(tmp_path)]) == "otel"
    assert picked_format([inspect]) == "inspect"
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"question_id": 1}) + "\n")
    with pytest.raises(InputError, match="no format recognises"):
        picked_format([other])
    with pytest.raises(InputError, match="several formats"):
        picked_format([messages, _otel_file(tmp_path)])


def test_import_auto_says_which_format_it_picked(tmp_path: Path) -> None:
    messages = tmp_path / "calls.jsonl"
    messages.write_text(json.dumps(REQUEST) + "\n")
    out = tmp_path / "runs.jsonl"
    result = CliRunner().invoke(main, ["import", "auto", str(messages), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "format: anthropic (picked" in result.stderr
    assert json.loads(out.read_text().splitlines()[0])["id"] == "refund-7"
    bad = tmp_path / "x.jsonl"
    bad.write_text("{}\n")
    result = CliRunner().invoke(main, ["import", "auto", str(bad), "-o", str(out)])
    assert result.exit_code == 2
    assert "no format recognises its first bytes" in result.stderr
    assert runs_spec(f"auto:{messages}") == ("anthropic", messages)
