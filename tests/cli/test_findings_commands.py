from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.commands import mutate_run as session
from metaeval.mutation.findings_file import LAST_RUN_FILE, Findings, load, save
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.mutation.run.runner import MutationRun
from tests.builders import mutant, tracked


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


# --- the last run's survivors, before --update-baseline ------------------------------------

GATE = ("def allowed(role, n):\n    if role == 'admin':\n        return n < 3\n"
        "    return n <= 1\n")


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project around the current directory: ``findings`` reads its config, its
    last run and (for the stale count) its targets, never this repository's."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[tool.metaeval]\nfindings = "mutants/findings.json"\n\n[tool.metaeval.mutate]\n'
        'targets = ["gate.py"]\noperators = ["flip_comparison"]\n', encoding="utf-8")
    (root / "gate.py").write_text(GATE, encoding="utf-8")
    (root / "mutants").mkdir()
    monkeypatch.chdir(root)

    def survived(mutants: list[Mutant], *args: object, **kwargs: object) -> MutationRun:
        warm = kwargs.get("warm")
        if warm is not None:
            warm.stop()  # type: ignore[attr-defined]
        return MutationRun(tuple(MutantResult(m, Status.SURVIVED) for m in mutants), 0.1, 1.0)

    monkeypatch.setattr(session, "run_mutants", survived)
    return root


def mutate(*flags: str) -> tuple[int, str]:
    return invoke("mutate", "--isolation", "subprocess", "--no-cache", *flags)


def test_a_first_run_is_listed_and_shown_before_any_baseline(project: Path) -> None:
    code, text = mutate("--show", "1")
    assert code == 1, text
    assert "1 of 3 undetected mutants shown" in text and "metaeval findings list" in text
    code, text = invoke("findings", "list")
    assert code == 1  # open, though no findings file exists yet
    assert text.count("open, new") == 3
    assert "3 new from the last run" in text and "not yet in mutants/findings.json" in text
    entry = load(project / LAST_RUN_FILE).entries[0]
    code, text = invoke("findings", "show", entry.fingerprint[:4])
    assert code == 0, text
    assert text.startswith(f"finding {entry.fingerprint}")
    assert "open, new: a survivor of the last run, not in mutants/findings.json" in text
    # Accepting one records it in the file; the others stay the last run's.
    code, text = invoke("findings", "accept", entry.fingerprint[:6], "--reason", "why not",
                        "--by", "dana")
    assert code == 0, text
    assert [e.fingerprint for e in load(project / "mutants/findings.json").entries] == [
        entry.fingerprint]
    # must say no: once the file holds every survivor, none is new
    mutate("--update-baseline")
    code, text = invoke("findings", "list")
    assert "open, new" not in text and "new from the last run" not in text


def test_a_pull_request_run_shows_its_new_survivor_first_and_findings_show_finds_it(
        project: Path) -> None:
    code, _ = mutate("--update-baseline")
    assert code == 0
    # The pull request adds a comparison: one new survivor among three known.
    (project / "gate.py").write_text(GATE + "\n\ndef limit(n):\n    return n > 9\n",
                                     encoding="utf-8")
    code, text = mutate("--baseline", "mutants/findings.json", "--show", "2")
    assert code == 1
    heads = [line for line in text.splitlines()
             if line.startswith(("Survived: ", "New survivors", "Known survivors"))]
    assert heads == ["New survivors (not in the baseline): 1",
                     "Survived: gate.py::limit::flip_comparison::0 (gate.py:8)",
                     "Known survivors (in the baseline): 3, 1 shown",
                     "Survived: gate.py::allowed::flip_comparison::0 (gate.py:2)"]
    new = text.split("new survivors (fail the run):\n  + ", 1)[1][:12]
    code, text = invoke("findings", "show", new[:4])
    assert code == 0, text
    assert "gate.py:8 in limit" in text and "-    return n > 9" in text


def test_prune_is_a_dry_run_unless_asked_to_write(project: Path) -> None:
    mutate("--update-baseline")
    path = project / "mutants" / "findings.json"
    code, text = invoke("findings", "prune")
    assert (code, text.strip()) == (0, "no stale finding in mutants/findings.json")
    code, text = invoke("findings", "list")
    assert "stale" not in text  # must say no: nothing changed
    # ``allowed`` renamed: its three entries can never match a run again.
    (project / "gate.py").write_text(GATE.replace("allowed", "permitted"), encoding="utf-8")
    code, text = invoke("findings", "list")
    assert "3 stale (file or function no longer targeted" in text
    before = path.read_bytes()
    code, text = invoke("findings", "prune")
    assert code == 1
    assert text.count("function not targeted") == 3
    assert "nothing written (dry run): metaeval findings prune --write removes them" in text
    assert path.read_bytes() == before
    code, text = invoke("findings", "prune", "--write")
    assert code == 0 and "removed 3 stale findings from mutants/findings.json" in text
    assert load(path).entries == ()
    # A target no longer configured: its file's entries are stale for that reason.
    mutate("--update-baseline")
    (project / "pyproject.toml").write_text(
        '[tool.metaeval]\nfindings = "mutants/findings.json"\n\n[tool.metaeval.mutate]\n'
        'targets = ["other.py"]\n', encoding="utf-8")
    (project / "other.py").write_text("def f(x):\n    return x < 1\n", encoding="utf-8")
    code, text = invoke("findings", "prune")
    assert code == 1 and text.count("file not targeted") == 3


def test_prune_refuses_when_nothing_is_targeted(project: Path) -> None:
    mutate("--update-baseline")
    (project / "pyproject.toml").write_text('[tool.metaeval]\nfindings = '
                                            '"mutants/findings.json"\n', encoding="utf-8")
    code, text = invoke("findings", "prune")
    assert code == 2
    assert "nothing is targeted, so every finding would look stale" in text
    code, text = invoke("findings", "list")
    assert code == 1 and "note: stale findings not counted: no [tool.metaeval.mutate]" in text
    assert " stale (file or function" not in text
    code, text = invoke("findings", "prune", "gate.py")  # the targets named instead
    assert (code, text.strip()) == (0, "no stale finding in mutants/findings.json")
