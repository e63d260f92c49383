from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from click.testing import CliRunner

from metaeval.cli import main
from metaeval.meta_set import load_meta_sets

SCAFFOLD = ["mutants/example.py", "meta_sets/example.jsonl", "tests/test_metaeval_graders.py",
            ".github/workflows/metaeval.yml"]


def init(root: Path, *flags: str) -> tuple[int, str]:
    out = CliRunner().invoke(main, ["init", "--path", str(root), *flags])
    return out.exit_code, out.output


def test_init_scaffolds_an_empty_repository(tmp_path: Path) -> None:
    code, text = init(tmp_path)
    assert code == 0, text
    assert text.splitlines() == [f"created     {p}" for p in [*SCAFFOLD, "pyproject.toml",
                                                             ".gitignore"]]
    assert (tmp_path / ".gitignore").read_text() == ".metaeval/\n"
    config = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["metaeval"]
    assert config["meta_sets"] == ["meta_sets"]
    assert "metaeval mutate --since origin/main --baseline mutants/findings.json" in (
        tmp_path / ".github/workflows/metaeval.yml").read_text()
    loaded = load_meta_sets([tmp_path / "meta_sets"])
    assert loaded.errors == () and len(loaded.runs) == 4


def test_the_scaffolded_grader_test_passes_for_real(tmp_path: Path) -> None:
    init(tmp_path)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout


def test_init_is_idempotent_and_never_overwrites_without_force(tmp_path: Path) -> None:
    init(tmp_path)
    mine = tmp_path / "mutants/example.py"
    mine.write_text("# my own mutants\n")
    before = {p: (tmp_path / p).read_bytes() for p in [*SCAFFOLD, "pyproject.toml"]}
    code, text = init(tmp_path)
    assert code == 0
    assert all(line.startswith("kept") for line in text.splitlines())
    assert {p: (tmp_path / p).read_bytes() for p in before} == before
    code, text = init(tmp_path, "--force")
    assert "overwritten mutants/example.py" in text
    assert "kept        pyproject.toml" in text  # a user's config is never rewritten
    assert mine.read_text() != "# my own mutants\n"


def test_init_appends_to_an_existing_pyproject(tmp_path: Path) -> None:
    original = '[project]\nname = "shop"\nversion = "1"'
    (tmp_path / "pyproject.toml").write_text(original)
    (tmp_path / ".gitignore").write_text("build/")
    code, text = init(tmp_path)
    assert code == 0
    assert "appended    pyproject.toml" in text
    assert (tmp_path / ".gitignore").read_text() == "build/\n.metaeval/\n"
    content = (tmp_path / "pyproject.toml").read_text()
    assert content.startswith(original + "\n")
    assert tomllib.loads(content)["project"]["name"] == "shop"


def test_a_broken_pyproject_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project\n")
    code, text = init(tmp_path)
    assert code == 2
    assert "not valid TOML" in text
    assert (tmp_path / "pyproject.toml").read_text() == "[project\n"
