from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from metaeval.cli import main
from metaeval.findings import Findings, load, save, survivors
from metaeval.mutation.model import MutantResult, Status
from tests.test_findings import SEEN_1, mutant


def tracked(tmp_path: Path) -> Path:
    path = tmp_path / "findings.json"
    results = [MutantResult(mutant(qualname=q), Status.SURVIVED) for q in ("a", "b")]
    save(Findings(tuple(survivors(results, {}, SEEN_1))), path)
    return path


def invoke(*args: str) -> tuple[int, str]:
    out = CliRunner().invoke(main, list(args))
    return out.exit_code, out.output


def test_list_exits_1_while_a_finding_is_open_and_0_once_accepted(tmp_path: Path) -> None:
    path = tracked(tmp_path)
    code, text = invoke("findings", "list", "--file", str(path))
    assert code == 1
    assert text.count("open") == 2
    for entry in load(path).entries:
        code, text = invoke("findings", "accept", entry.fingerprint[:8], "--reason",
                            "equivalent: the guard below repeats it", "--by", "dana",
                            "--file", str(path))
        assert code == 0, text
        assert text.startswith(f"accepted {entry.fingerprint[:12]}")
    code, _ = invoke("findings", "list", "--file", str(path))
    assert code == 0
    assert {e.accepted_by for e in load(path).entries} == {"dana"}


def test_show_by_mutant_id(tmp_path: Path) -> None:
    path = tracked(tmp_path)
    code, text = invoke("findings", "show", mutant(qualname="a").id, "--file", str(path))
    assert code == 0
    assert "shop/guards.py:10 in a" in text


def test_bad_input_is_exit_2_with_the_field(tmp_path: Path) -> None:
    path = tracked(tmp_path)
    code, text = invoke("findings", "accept", "a", "--reason", "x", "--until", "soon",
                        "--file", str(path))
    assert code == 2
    assert "--until: got 'soon'; expected a date YYYY-MM-DD" in text
    code, text = invoke("findings", "show", "zzz", "--file", str(path))
    assert code == 2
    assert "no finding 'zzz'" in text


def test_diff_and_export(tmp_path: Path) -> None:
    path = tracked(tmp_path)
    empty = tmp_path / "empty.json"
    save(Findings(), empty)
    code, text = invoke("findings", "diff", str(empty), str(path))
    assert code == 1
    assert text.strip().endswith("2 added, 0 removed, 0 changed")
    code, _ = invoke("findings", "diff", str(path), str(empty))
    assert code == 0
    out = tmp_path / "out" / "metaeval.sarif"
    code, _ = invoke("findings", "export", "--sarif", str(out), "--file", str(path))
    assert code == 0
    assert len(json.loads(out.read_text())["runs"][0]["results"]) == 2
