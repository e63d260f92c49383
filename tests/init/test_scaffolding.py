from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.loaders.meta_set import load_meta_sets
from tests.scaffold_project import make_shop

SCAFFOLD = ["mutants/example.py", "meta_sets/example.jsonl", "tests/test_metaeval_graders.py",
            ".github/workflows/metaeval.yml"]


def invoke(root: Path, *flags: str) -> Result:
    return CliRunner().invoke(main, ["init", "--path", str(root), *flags])


def init(root: Path, *flags: str) -> tuple[int, str]:
    out = invoke(root, *flags)
    return out.exit_code, out.output


def test_init_scaffolds_a_repository_around_its_package(tmp_path: Path) -> None:
    make_shop(tmp_path)
    out = invoke(tmp_path)
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines() == [f"created     {p}" for p in SCAFFOLD] + [
        "appended    pyproject.toml", "created     .gitignore"]
    assert "package: shop (shop)" in out.stderr
    assert (tmp_path / ".gitignore").read_text() == (
        ".metaeval/\nmetaeval-reports/\nmetaeval.sarif\n")
    config = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["metaeval"]
    assert config["meta_sets"] == ["meta_sets"]
    assert config["mutate"]["targets"] == ["shop"]
    # the project's own graders may be named by import path in its meta-sets
    assert config["allowed_modules"] == ["shop"]
    assert "metaeval mutate --since origin/main --baseline mutants/findings.json" in (
        tmp_path / ".github/workflows/metaeval.yml").read_text()
    example = (tmp_path / "mutants/example.py").read_text()
    assert 'target="shop.guards:refund_allowed"' in example
    assert "metaeval.state" not in example  # never metaeval's own code
    loaded = load_meta_sets([tmp_path / "meta_sets"])
    assert loaded.errors == () and len(loaded.runs) == 4


def test_without_a_package_init_asks_for_one_and_writes_nothing(tmp_path: Path) -> None:
    code, _ = init(tmp_path)
    out = invoke(tmp_path)
    assert out.exit_code == code == 2
    assert "no package found" in out.stderr
    assert "metaeval init --package NAME" in out.stderr
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/__init__.py").write_text("def check():\n    return True\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/__init__.py").write_text("")
    (tmp_path / "api").mkdir()
    (tmp_path / "api/__init__.py").write_text("")
    out = invoke(tmp_path)  # two candidates: it asks
    assert out.exit_code == 2 and "found several packages (api, lib)" in out.stderr
    out = invoke(tmp_path, "--package", "lib")
    assert out.exit_code == 0, out.output
    config = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["metaeval"]
    assert config["mutate"]["targets"] == ["lib"]
    assert 'target="lib:check"' in (tmp_path / "mutants/example.py").read_text()


def test_the_scaffolded_grader_test_passes_for_real(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop/__init__.py").write_text("")
    init(tmp_path, "--package", "shop")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout


def test_init_is_idempotent_and_never_overwrites_without_force(tmp_path: Path) -> None:
    make_shop(tmp_path)
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
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop/__init__.py").write_text("")
    (tmp_path / ".gitignore").write_text("build/")
    code, text = init(tmp_path)
    assert code == 0
    assert "appended    pyproject.toml" in text
    assert (tmp_path / ".gitignore").read_text() == (
        "build/\n.metaeval/\nmetaeval-reports/\nmetaeval.sarif\n")
    content = (tmp_path / "pyproject.toml").read_text()
    assert content.startswith(original + "\n")
    assert tomllib.loads(content)["project"]["name"] == "shop"


@pytest.mark.parametrize("content", [
    b"[project\n",
    # tomllib raised these past the TOMLDecodeError handler (found by tests/fuzz).
    b"[project]\nversion = " + b"1" * 5000 + b"\n",
    b"[project]\nx = " + b"[" * 1000 + b"]" * 1000 + b"\n",
    b'[project]\nname = "\xff"\n',
])
def test_a_broken_pyproject_is_bad_input(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "pyproject.toml").write_bytes(content)
    code, text = init(tmp_path)
    assert code == 2
    assert "not valid TOML" in text or "not UTF-8" in text
    assert "Traceback" not in text
    assert (tmp_path / "pyproject.toml").read_bytes() == content




@pytest.mark.parametrize(("before", "after"), [
    ("", ".metaeval/\nmetaeval-reports/\nmetaeval.sarif\n"),
    ("build/", "build/\n.metaeval/\nmetaeval-reports/\nmetaeval.sarif\n"),
    # Written another way (a leading or no trailing slash) is already ignored.
    ("/.metaeval\nmetaeval-reports\n", "/.metaeval\nmetaeval-reports\nmetaeval.sarif\n"),
])
def test_init_ignores_its_caches_reports_and_sarif_once(
        tmp_path: Path, before: str, after: str) -> None:
    make_shop(tmp_path)
    if before:
        (tmp_path / ".gitignore").write_text(before)
    code, text = init(tmp_path)
    assert code == 0, text
    assert (tmp_path / ".gitignore").read_text() == after
    code, text = init(tmp_path)
    assert "kept        .gitignore" in text
    assert (tmp_path / ".gitignore").read_text() == after


@pytest.mark.parametrize(("allowed", "warned"), [
    ("", True), ('allowed_modules = ["other"]\n', True),
    ('allowed_modules = ["shop"]\n', False), ('allowed_modules = ["other", "shop"]\n', False),
])
def test_a_kept_config_that_does_not_allow_the_package_is_named(
        tmp_path: Path, allowed: str, warned: bool) -> None:
    make_shop(tmp_path)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + f"\n[tool.metaeval]\n{allowed}")
    before = pyproject.read_bytes()
    out = invoke(tmp_path)
    assert out.exit_code == 0, out.output
    assert pyproject.read_bytes() == before  # the user's table is theirs
    said = [line for line in out.stderr.splitlines() if "allowed_modules" in line]
    if not warned:
        assert said == []
        return
    add = '["other", "shop"]' if allowed else '["shop"]'
    assert said == [
        "warning: pyproject.toml: [tool.metaeval] allowed_modules does not name 'shop': a "
        "check naming your own grader (\"package.module:factory\") is refused until it "
        f"does; kept as you wrote it: add {add}"]
