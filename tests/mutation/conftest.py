"""Builders for mutation tests, each kind of fixture project written once: a throwaway
git copy of the fixture shop, a small project of given files, the calculator with one
patch mutant; and the stand-ins for the runner that the session's and the reports'
tests share (``FakeRunner``, ``rendered_run``)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from metaeval.commands.mutate import plan_and_run
from metaeval.commands.mutate_values import MutateRequest
from metaeval.mutation.fork.parent import WarmStart
from metaeval.mutation.isolation.options import Isolation, RunOptions
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.mutation.run.runner import Cache, Execute, MutationRun, Progress
from metaeval.report.mutate_outcome import MutateOutcome, finish
from tests.builders import git as git

METAEVAL = str(Path(sys.executable).parent / "metaeval")
SUBPROCESS_SLOW = pytest.param(Isolation.SUBPROCESS, marks=pytest.mark.slow,
                               id="Isolation.SUBPROCESS")
"""The subprocess-isolation case of a test run in both isolations: a pytest process
per mutant, the slow half; CI runs it (``pytest -m slow``), the default run keeps
the fork case."""
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "mutate_project"


def copy_shop(destination: Path) -> Path:
    """The fixture project as a committed git repository of its own."""
    project = destination / "shop_project"
    shutil.copytree(FIXTURE, project, ignore=shutil.ignore_patterns("__pycache__"))
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "fixture")
    return project


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under ``root`` (the .git directory aside) and its sha256."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_shop(tmp_path_factory.mktemp("shop"))


def small_project(root: Path, files: dict[str, str], operators: list[str]) -> Path:
    """A project of ``files`` (name to source, dedented) at ``root``, with a
    pyproject.toml that puts it on the path and mutates every non-test module in it
    with ``operators``."""
    targets = [name for name in files if not name.startswith("test_")]
    (root / "pyproject.toml").write_text(dedent(f"""\
        [tool.pytest.ini_options]
        pythonpath = ['.']

        [tool.metaeval.mutate]
        targets = {json.dumps(targets)}
        operators = {json.dumps(operators)}
        """), encoding="utf-8")
    for name, source in files.items():
        (root / name).write_text(dedent(source), encoding="utf-8")
    return root


def mutate_json(root: Path, *args: str, timeout: float = 60, cache: bool = False
                ) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    """``metaeval mutate --format json`` in ``root`` (report in root/r.json), with
    ``--no-cache`` unless ``cache``: its JSON output, and the finished process."""
    done = subprocess.run([METAEVAL, "mutate", "--format", "json",
                           *(() if cache else ("--no-cache",)),
                           "--report", str(root / "r.json"), *args],
                          cwd=root, capture_output=True, text=True, timeout=timeout)
    try:
        return json.loads(done.stdout), done
    except json.JSONDecodeError:
        pytest.fail(f"no JSON from metaeval mutate (exit {done.returncode}):\n"
                    f"{done.stdout}\n{done.stderr}")


def calc_project(tmp_path: Path, test_body: str) -> Path:
    """A calculator module (``double`` tested by ``test_body``, ``unused`` by no test)
    at ``tmp_path``, on the path, with one patch mutant of ``unused``."""
    (tmp_path / "pyproject.toml").write_text(
        "[tool.pytest.ini_options]\npythonpath = ['.']\n", encoding="utf-8")
    (tmp_path / "calc.py").write_text("def double(x):\n    return x * 2\n\n\n"
                                      "def unused(x):\n    return x\n", encoding="utf-8")
    (tmp_path / "test_calc.py").write_text(dedent(test_body), encoding="utf-8")
    (tmp_path / "mutants").mkdir()
    (tmp_path / "mutants" / "calc_mutants.py").write_text(dedent("""\
        from metaeval.mutation.patches import PatchMutant

        MUTANTS = [PatchMutant(id="unused-identity", target="calc:unused",
                               replacement="lambda x: 0", breaks="Nothing tested.")]
        """), encoding="utf-8")
    return tmp_path


PRICING = "shop/pricing.py"
SURVIVOR = f"{PRICING}::clamp_quantity::flip_comparison::0"


@pytest.fixture
def shop_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture shop as a git repository, and the current directory."""
    root = copy_shop(tmp_path)
    (root / "no_patches").mkdir()
    monkeypatch.chdir(root)
    return root


class FakeRunner:
    """Stands in for ``run_mutants``: every mutant killed but ``survivors``."""

    def __init__(self, survivors: Sequence[str] = ()) -> None:
        self.survivors = set(survivors)
        self.calls: list[tuple[Mutant, ...]] = []

    def __call__(self, mutants: Sequence[Mutant], options: RunOptions,
                 progress: Progress | None = None, cache: Cache | None = None,
                 warm: WarmStart | None = None, execute: Execute | None = None
                 ) -> MutationRun:
        assert execute is None  # no --executor ray here
        if warm is not None:  # as run_mutants does: a warm runner it is given ends here
            warm.stop()
        self.calls.append(tuple(mutants))
        results = tuple(MutantResult(m, Status.SURVIVED if m.id in self.survivors
                                     else Status.KILLED, duration=0.1) for m in mutants)
        for done, result in enumerate(results, 1):
            if progress is not None:
                progress(done, len(results), result)
        return MutationRun(results, 1.0, 4.0)


def rendered_run(request: MutateRequest, progress: Progress | None = None) -> MutateOutcome:
    """``request`` planned, run and rendered (its report and SARIF files written), as
    the command line does it, less the printing."""
    return finish(plan_and_run(request, progress))


def never_run(*args: object, **kwargs: object) -> MutationRun:
    raise AssertionError("the runner was called")


def mutate_in(project: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """``metaeval mutate FLAGS`` in ``project``, two jobs, no cache: the finished process."""
    return subprocess.run([METAEVAL, "mutate", "--jobs", "2", "--no-cache", *flags],
                          cwd=project, capture_output=True, text=True, timeout=180)


def statuses(document: dict[str, object]) -> dict[str, str]:
    """Status by mutant id, from ``--format json`` or from the schema report."""
    if "mutants" in document:
        mutants = document["mutants"]
        assert isinstance(mutants, list)
        return {m["id"]: m["status"] for m in mutants}
    files = document["files"]
    assert isinstance(files, dict)
    return {m["id"]: m["status"] for f in files.values() for m in f["mutants"]}


def write(directory: Path, name: str, text: str) -> Path:
    """``text`` (dedented) as ``directory/name``, the directory made if need be."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(dedent(text), encoding="utf-8")
    return path


@pytest.fixture()
def guards_project(tmp_path: Path) -> Path:
    """A package of guards (a constant, a function, a static method) for patch mutants
    to replace; its ``mutants/`` is for each test to write."""
    write(tmp_path / "pkg_patches_demo", "__init__.py", "")
    write(tmp_path / "pkg_patches_demo", "guards.py", """\
        LIMIT = 3


        def allowed(tool):
            return tool != "delete_account"


        class Gate:
            @staticmethod
            def open(results):
                return all(results)
        """)
    return tmp_path


STEP = re.compile(r"^metaeval mutate: [a-z ,]+(: \d+/\d+ tests)? \(\d+[smh0-9]*\)$")
"""A line saying what a run does before its first mutant (``MutateProgress.phase``)."""


def without_steps(stderr: str) -> str:
    """``stderr`` without the step lines a run writes to a log before its first mutant:
    what the tests that read it look for is what else it says."""
    return "".join(line for line in stderr.splitlines(keepends=True)
                   if not STEP.match(line.rstrip("\n")))
