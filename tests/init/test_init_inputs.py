"""init checks every file it will touch before it writes one: a pyproject.toml whose
``tool`` cannot take [tool.metaeval], a folder, fifo or device where it reads or
writes, a .gitignore that is not UTF-8, a requires-python of 5,000 digits. Each is
exit 2 naming the file, with nothing written and no traceback."""

from __future__ import annotations

import os
import threading
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from tests.scaffold_project import make_shop

SHOP = '[project]\nname = "shop"\n'


def invoke(root: Path) -> Result:
    """``metaeval init`` with a deadline: one that waits on a fifo fails the test."""
    out: list[Result] = []
    worker = threading.Thread(target=lambda: out.append(
        CliRunner().invoke(main, ["init", "--path", str(root)])), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "metaeval init did not return"
    return out[0]


def files(root: Path) -> dict[str, bytes | int]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else p.stat().st_mode)
            for p in sorted(root.rglob("*")) if not p.is_symlink()}


def refused(root: Path, words: str) -> Result:
    before = files(root)
    result = invoke(root)
    assert result.exit_code == 2, result.output
    assert words in result.output, result.output
    assert "Traceback" not in result.output
    assert files(root) == before  # nothing written
    return result


@pytest.mark.parametrize("tool", ["tool = 1\n", 'tool = { black = { line-length = 99 } }\n'])
def test_a_tool_key_that_cannot_take_a_metaeval_table_is_refused(
        tmp_path: Path, tool: str) -> None:
    make_shop(tmp_path)
    (tmp_path / "pyproject.toml").write_text(tool + SHOP, encoding="utf-8")
    refused(tmp_path, "pyproject.toml")


def test_the_appended_file_is_still_toml_where_tool_tables_are_ordinary(tmp_path: Path) -> None:
    # The "no": [tool.black] as a table of its own takes [tool.metaeval] after it.
    make_shop(tmp_path)
    (tmp_path / "pyproject.toml").write_text(SHOP + "[tool.black]\nline-length = 99\n",
                                             encoding="utf-8")
    result = invoke(tmp_path)
    assert result.exit_code == 0, result.output
    tool = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]
    assert tool["black"] == {"line-length": 99} and "metaeval" in tool


def test_a_gitignore_that_is_not_utf8_is_refused_before_any_file_is_written(
        tmp_path: Path) -> None:
    make_shop(tmp_path)
    (tmp_path / ".gitignore").write_bytes(b"build/\n\xff\xfe\n")
    refused(tmp_path, ".gitignore:2: not UTF-8")


def test_a_requires_python_of_5000_digits_is_no_traceback(tmp_path: Path) -> None:
    make_shop(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        SHOP + f'requires-python = ">=3.{"9" * 5000}"\n', encoding="utf-8")
    result = invoke(tmp_path)
    assert result.exit_code == 0, result.output
    assert 'python-version: "3.11"' in (tmp_path / ".github/workflows/metaeval.yml").read_text()


def test_a_requires_python_is_still_read() -> None:
    from metaeval.init.scaffolding import _Project

    project = _Project(Path("."), {"project": {"requires-python": ">=3.13"}}, None)
    assert project._python_minor() == 13


def test_a_pyproject_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    make_shop(tmp_path)
    (tmp_path / "pyproject.toml").unlink(missing_ok=True)
    (tmp_path / "pyproject.toml").mkdir()
    refused(tmp_path, "is a directory")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no fifos here")
@pytest.mark.parametrize("name", ["pyproject.toml", ".gitignore"])
def test_a_fifo_where_init_reads_is_refused_without_waiting(tmp_path: Path, name: str) -> None:
    make_shop(tmp_path)
    (tmp_path / name).unlink(missing_ok=True)
    os.mkfifo(tmp_path / name)
    refused(tmp_path, "is a fifo")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_dev_zero_linked_in_as_pyproject_is_refused_before_a_byte_is_read(
        tmp_path: Path) -> None:
    make_shop(tmp_path)
    (tmp_path / "pyproject.toml").unlink(missing_ok=True)
    (tmp_path / "pyproject.toml").symlink_to("/dev/zero")
    refused(tmp_path, "is a character device")
