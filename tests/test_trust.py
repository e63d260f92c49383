"""A meta-set is data: naming code in it must never run that code.

Only modules the project allows in ``[tool.metaeval] allowed_modules`` may be
imported for a grader or a judge named by import path; the check is made on the
path's text, before anything is imported. Each attack below plants a module
that writes a marker file *when imported*, so a test sees not only that the
named function was not called but that its module was never even loaded.
"""

from __future__ import annotations

import json
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from tests.builders import config_project

NOT_ALLOWED = ("is not in an allowed module; add its package to [tool.metaeval] "
               "allowed_modules in pyproject.toml to run it")
ITEMS = Path(__file__).resolve().parent.parent / "meta_sets" / "judge" / "position.ndjson"

PLANTED = '''
from pathlib import Path

Path({marker!r}).write_text("imported")


def system(command="", **params):
    Path({called!r}).write_text(command)
    return 0


def judge(prompt):
    Path({called!r}).write_text(prompt)
    return "5"
'''

GRADERS = '''
from dataclasses import dataclass

from metaeval.contract import Finding, Kind, Outcome


@dataclass(frozen=True)
class Polite:
    word: str
    name: str = "polite"
    version: str = "polite/1"
    kind: Kind = Kind.GATE
    cost_rank: int = 40

    def grade(self, x):
        ok = self.word in (x.trajectory.answer() or "")
        return Finding(self.name, self.version, self.kind,
                       Outcome.PASS if ok else Outcome.FAIL)


def polite(word="thanks"):
    return Polite(word)


def steady_reply(prompt):
    return "5"
'''


@dataclass(frozen=True)
class Project:
    """A project in a temporary directory (the current directory of the test)."""

    root: Path
    tag: str
    """Makes every module name unique to its test: ``sys.modules`` outlives a test."""

    @property
    def pwned(self) -> Path:
        return self.root / "pwned.txt"

    def plant(self, module: str) -> tuple[Path, Path]:
        """A module at ``module`` (dotted: packages are made) that marks its import
        and its call; returns (import marker, call marker)."""
        marker = self.root / f"imported-{module}"
        called = self.root / f"called-{module}"
        *packages, leaf = module.split(".")
        directory = self.root
        for package in packages:
            directory = directory / package
            directory.mkdir(exist_ok=True)
            init = directory / "__init__.py"
            if not init.exists():
                init.write_text("")
        (directory / f"{leaf}.py").write_text(
            PLANTED.format(marker=str(marker), called=str(called)))
        return marker, called

    def config(self, text: str) -> None:
        config_project(self.root, text)

    def meta_set(self, *checks: dict[str, object]) -> Path:
        run = {"id": "r1", "task": {"id": "t", "checks": list(checks)},
               "trajectory": [{"type": "message", "role": "user", "content": "hi"},
                              {"type": "message", "role": "assistant", "content": "thanks"}],
               "label": {"verdict": "pass"}}
        path = self.root / "meta.jsonl"
        path.write_text(json.dumps({"id": "r0", "task": {"id": "t", "checks": []},
                                    "trajectory": [], "label": {"verdict": "fail"}}) + "\n"
                        + json.dumps(run) + "\n")
        return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    config_project(tmp_path)
    yield Project(tmp_path, "m" + uuid.uuid4().hex[:10])


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


# --- a meta-set names code that is not allowed: nothing runs ----------------------------


def _attacks(project: Project) -> dict[str, tuple[dict[str, object], Path, Path]]:
    """Each attack: the check spec, and two files that must never appear."""
    grader_marker, grader_called = project.plant(f"{project.tag}_grader")
    judge_marker, judge_called = project.plant(f"{project.tag}_judge")
    command = f"echo PWNED > {project.pwned}"
    return {
        "os as grader": ({"grader": "os:system", "command": command},
                         project.pwned, project.pwned),
        "os as judge": ({"grader": "judge", "judge": "os:system", "criterion": command},
                        project.pwned, project.pwned),
        "planted grader": ({"grader": f"{project.tag}_grader:system", "command": command},
                           grader_marker, grader_called),
        "planted judge": ({"grader": "judge", "judge": f"{project.tag}_judge:judge",
                           "criterion": "x"}, judge_marker, judge_called),
    }


ATTACKS = ("os as grader", "os as judge", "planted grader", "planted judge")


@pytest.mark.parametrize("command", ["validate", "meta-eval"])
@pytest.mark.parametrize("attack", ATTACKS)
def test_a_meta_set_naming_code_outside_the_allowed_modules_runs_nothing(
        project: Project, command: str, attack: str) -> None:
    spec, imported, called = _attacks(project)[attack]
    path = project.meta_set(spec)
    result = cli(command, str(path))
    assert result.exit_code == 2, result.output
    field = "grader" if spec["grader"] != "judge" else "judge"
    named = spec["judge"] if field == "judge" else spec["grader"]
    assert f"{path}:2: task.checks[0].{field}: {named!r} {NOT_ALLOWED}" in result.output
    assert not imported.exists() and not called.exists()
    assert not project.pwned.exists()


def test_judge_audit_refuses_a_judge_outside_the_allowed_modules(project: Project) -> None:
    marker, called = project.plant(f"{project.tag}_judge")
    for spec in ("os:system", f"{project.tag}_judge:judge"):
        result = cli("judge-audit", "--judge", spec, "--items", str(ITEMS), "--no-cache")
        assert result.exit_code == 2, result.output
        assert f"error: --judge: {spec!r} {NOT_ALLOWED}" in result.output
    assert not marker.exists() and not called.exists()


def test_a_python_judge_table_is_held_to_the_same_list(project: Project) -> None:
    marker, called = project.plant(f"{project.tag}_judge")
    project.config(f'[tool.metaeval.judges.house]\ntype = "python"\n'
                   f'target = "{project.tag}_judge:judge"\n')
    result = cli("judge-audit", "--judge", "house", "--items", str(ITEMS), "--no-cache")
    assert result.exit_code == 2, result.output
    assert (f"tool.metaeval.judges.house.target: '{project.tag}_judge:judge' {NOT_ALLOWED}"
            in result.output)
    assert not marker.exists() and not called.exists()


def test_a_meta_set_cannot_declare_a_judge_table_of_its_own(project: Project) -> None:
    # A command or HTTP judge declared inside the data would run any program, or send
    # any environment variable to any host: judge tables belong to the project's config.
    command = {"type": "command", "command": ["sh", "-c", f"echo PWNED > {project.pwned}"]}
    path = project.meta_set({"grader": "judge", "judge": command, "criterion": "polite"})
    for name in ("validate", "meta-eval"):
        result = cli(name, str(path))
        assert result.exit_code == 2, result.output
        assert f"{path}:2: task.checks[0].judge: got a table;" in result.output
        assert "[tool.metaeval.judges]" in result.output
    assert not project.pwned.exists()


# --- what the list allows -----------------------------------------------------------------


def test_an_allowed_module_runs(project: Project) -> None:
    package = project.root / project.tag
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "graders.py").write_text(textwrap.dedent(GRADERS))
    project.config(f'[tool.metaeval]\nallowed_modules = ["{project.tag}"]\n')
    path = project.meta_set({"grader": f"{project.tag}.graders:polite", "name": "polite"},
                            {"grader": "judge", "judge": f"{project.tag}.graders:steady_reply",
                             "criterion": "polite"})
    validated = cli("validate", str(path))
    assert validated.exit_code == 0, validated.output
    measured = cli("meta-eval", str(path), "--resamples", "10", "--format", "json")
    assert measured.exit_code in (0, 1), measured.output
    checks = {c["name"]: c for c in json.loads(measured.output)["checks"]}
    assert checks["polite"]["passed"] == 1 and checks["judge"]["passed"] == 1


@pytest.mark.parametrize("suffix", ["evil", "_x"])
def test_a_package_name_allows_its_submodules_not_lookalikes(project: Project,
                                                            suffix: str) -> None:
    marker, called = project.plant(f"{project.tag}{suffix}")
    project.config(f'[tool.metaeval]\nallowed_modules = ["{project.tag}"]\n')
    path = project.meta_set({"grader": f"{project.tag}{suffix}:system"})
    result = cli("validate", str(path))
    assert result.exit_code == 2
    assert f"'{project.tag}{suffix}:system' {NOT_ALLOWED}" in result.output
    assert not marker.exists() and not called.exists()


def test_an_allowed_subpackage_does_not_allow_its_parent(project: Project) -> None:
    # Importing "pkg.other" would run pkg/__init__.py: the check comes before any import.
    marker, _ = project.plant(f"{project.tag}.other")
    parent_marker = project.root / "imported-parent"
    (project.root / project.tag / "__init__.py").write_text(
        f"from pathlib import Path\nPath({str(parent_marker)!r}).write_text('x')\n")
    project.config(f'[tool.metaeval]\nallowed_modules = ["{project.tag}.graders"]\n')
    result = cli("validate", str(project.meta_set({"grader": f"{project.tag}.other:system"})))
    assert result.exit_code == 2
    assert NOT_ALLOWED in result.output
    assert not marker.exists() and not parent_marker.exists()


def test_an_allowed_module_does_not_lend_what_it_imported(project: Project) -> None:
    # "pkg:os.system" or a name pkg imported from os would reach os through an allowed
    # module: the object must come from an allowed module too.
    package = project.root / project.tag
    package.mkdir()
    (package / "__init__.py").write_text("import os\nfrom os import system\n")
    project.config(f'[tool.metaeval]\nallowed_modules = ["{project.tag}"]\n')
    for reference in (f"{project.tag}:os.system", f"{project.tag}:system"):
        path = project.meta_set({"grader": reference, "command": f"echo > {project.pwned}"})
        result = cli("validate", str(path))
        assert result.exit_code == 2, result.output
        assert f"task.checks[0].grader: {reference!r}" in result.output
        assert "not in an allowed module" in result.output
        assert not project.pwned.exists()
