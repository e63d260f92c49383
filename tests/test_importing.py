"""Import paths that are not paths, and allowed modules that fail to import, are one
clear line naming what is wrong (exit 2 from the commands), never a traceback."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.errors import InputError
from metaeval.importing import AllowedModules, resolve

EVERYTHING = AllowedModules(("a", "x", "os"))
ITEMS = Path(__file__).resolve().parent.parent / "meta_sets" / "judge" / "position.ndjson"


@pytest.mark.parametrize("reference", ["..:x", ".a:b", ":x", "x:", "a..b:c", "a.:c", "x",
                                       "a:b..c", "a:b:c", " os:system", "a-b:c", "a:1b"])
def test_what_is_not_an_import_path_is_named_as_such(reference: str) -> None:
    with pytest.raises(InputError) as caught:
        resolve(reference, EVERYTHING)
    assert str(caught.value) == (f"{reference!r} is not an import path; expected "
                                 "'package.module:attr'")


@pytest.mark.parametrize("reference", ["..:x", ":x", "x:", "a..b:c"])
def test_a_bad_path_in_a_meta_set_or_for_judge_audit_is_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.metaeval]\nallowed_modules = ["a", "x"]\n')
    run = {"id": "r", "task": {"id": "t", "checks": [{"grader": reference}]},
           "trajectory": [], "label": {"verdict": "pass"}}
    (tmp_path / "m.jsonl").write_text(json.dumps(run) + "\n")
    validated = CliRunner().invoke(main, ["validate", "m.jsonl"])
    assert validated.exit_code == 2, validated.output
    assert (f"m.jsonl:1: task.checks[0].grader: {reference!r} is not an import path"
            in validated.output)
    audited = CliRunner().invoke(main, ["judge-audit", "--judge", reference, "--items",
                                        str(ITEMS), "--no-cache"])
    assert audited.exit_code == 2, audited.output
    assert f"error: --judge: {reference!r} is not an import path" in audited.output


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """An empty package with a name of its own (``sys.modules`` outlives a test)."""
    name = "pkg" + uuid.uuid4().hex[:10]
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path / name, name


@pytest.mark.parametrize(("source", "exception"), [
    ("def broken(:\n    pass\n", "SyntaxError: "),
    ("raise RuntimeError('no config\\nfor you')\n", "RuntimeError: no config for you"),
    ("import sys\nsys.exit(4)\n", "SystemExit: 4"),
    ("import no_such_module_anywhere_xyz\n",
     "ModuleNotFoundError: No module named 'no_such_module_anywhere_xyz'"),
])
def test_a_module_that_fails_at_import_is_named_with_its_exception_on_one_line(
        package: tuple[Path, str], source: str, exception: str) -> None:
    directory, name = package
    (directory / "graders.py").write_text(source)
    with pytest.raises(InputError) as caught:
        resolve(f"{name}.graders:factory", AllowedModules((name,)))
    message = str(caught.value)
    assert message.startswith(f"cannot import '{name}.graders' (from '{name}.graders:factory'"
                              f"): {exception}")
    assert "\n" not in message


def test_a_module_that_fails_at_import_under_validate_and_judge_audit_is_exit_2(
        package: tuple[Path, str]) -> None:
    directory, name = package
    (directory / "broken.py").write_text("def broken(:\n")
    (directory.parent / "pyproject.toml").write_text(
        f'[tool.metaeval]\nallowed_modules = ["{name}"]\n')
    run = {"id": "r", "task": {"id": "t", "checks": [{"grader": f"{name}.broken:f"}]},
           "trajectory": [], "label": {"verdict": "pass"}}
    (directory.parent / "m.jsonl").write_text(json.dumps(run) + "\n")
    validated = CliRunner().invoke(main, ["validate", "m.jsonl"])
    assert validated.exit_code == 2, validated.output
    assert (f"m.jsonl:1: task.checks[0].grader: cannot import '{name}.broken' "
            f"(from '{name}.broken:f'): SyntaxError: ") in validated.output
    audited = CliRunner().invoke(main, ["judge-audit", "--judge", f"{name}.broken:f",
                                        "--items", str(ITEMS), "--no-cache"])
    assert audited.exit_code == 2, audited.output
    assert f"error: --judge: cannot import '{name}.broken'" in audited.output


def test_an_attribute_that_raises_or_a_judge_class_that_raises_is_named(
        package: tuple[Path, str]) -> None:
    directory, name = package
    (directory / "judges.py").write_text(
        "def __getattr__(name):\n    raise KeyError(name)\n\n"
        "class Picky:\n    def __init__(self):\n        raise ValueError('needs a key')\n")
    (directory.parent / "pyproject.toml").write_text(
        f'[tool.metaeval]\nallowed_modules = ["{name}"]\n')
    missing = CliRunner().invoke(main, ["judge-audit", "--judge", f"{name}.judges:nope",
                                        "--items", str(ITEMS), "--no-cache"])
    assert missing.exit_code == 2, missing.output
    assert f"'{name}.judges:nope': reading 'nope' raised KeyError: 'nope'" in missing.output
    picky = CliRunner().invoke(main, ["judge-audit", "--judge", f"{name}.judges:Picky",
                                      "--items", str(ITEMS), "--no-cache"])
    assert picky.exit_code == 2, picky.output
    assert (f"error: --judge: '{name}.judges:Picky' raised ValueError: needs a key"
            in picky.output)


GRADERS = '''
import collections
import functools
import os
import types


class Grader:
    name = "g"
    version = "1"

    def grade(self, x):
        return None


def factory():
    return Grader()


GRADER = Grader()
RUN_SHELL = functools.partial(os.system, "echo pwned")
COUNTER = collections.Counter
BOUND = "echo pwned".format
FOREIGN_CALLABLE = collections.OrderedDict().get
SPOOFED = types.FunctionType(collections.namedtuple.__code__, {})
SPOOFED.__module__ = __name__
SETTINGS = {"level": 3}
'''


@pytest.mark.parametrize(("attr", "why"), [
    ("RUN_SHELL", "a callable functools.partial object"),
    ("COUNTER", "'collections' code"),
    ("BOUND", "(a builtin)"),
    ("FOREIGN_CALLABLE", "(a builtin)"),
    ("SPOOFED", "code from "),
])
def test_a_callable_an_allowed_module_only_holds_is_refused(
        package: tuple[Path, str], attr: str, why: str) -> None:
    directory, name = package
    (directory / "graders.py").write_text(GRADERS)
    with pytest.raises(InputError) as caught:
        resolve(f"{name}.graders:{attr}", AllowedModules((name,)))
    assert why in str(caught.value) and "not in an allowed module" in str(caught.value)


@pytest.mark.parametrize("attr", ["factory", "Grader", "GRADER", "GRADER.grade", "SETTINGS"])
def test_code_the_allowed_module_defines_and_its_objects_resolve(
        package: tuple[Path, str], attr: str) -> None:
    directory, name = package
    (directory / "graders.py").write_text(GRADERS)
    assert resolve(f"{name}.graders:{attr}", AllowedModules((name,))) is not None
