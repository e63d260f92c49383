"""`metaeval init` then the first run, as a new user would: the scaffold runs as
written. `metaeval mutate` on a fresh repository mutates the user's package and
shows nothing outside it; the workflow's shell steps install and run in a fresh
virtual environment, with metaeval installed from this checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import yaml

import metaeval
from tests.builders import git as git
from tests.scaffold_project import make_shop

CHECKOUT = Path(__file__).resolve().parents[2]
METAEVAL = [sys.executable, "-c", "from metaeval.cli import main; main()"]


def fresh_repository(root: Path) -> None:
    """The shop, committed on main, scaffolded by init, and the scaffold committed."""
    make_shop(root)
    git(root, "init", "-q", "-b", "main")
    run = subprocess.run([*METAEVAL, "init"], cwd=root, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "shop, scaffolded")


def outside_paths(text: str, root: Path) -> list[str]:
    """The paths outside the repository ``text`` names (and the repository's own
    absolute path: the outputs say paths relative to it)."""
    places = {str(root), str(Path(metaeval.__file__).resolve().parent), sys.prefix,
              "site-packages"}
    return sorted(p for p in places if p in text)


def test_init_then_mutate_runs_the_users_package_as_scaffolded(tmp_path: Path) -> None:
    fresh_repository(tmp_path)
    run = subprocess.run([*METAEVAL, "mutate", "--format", "json", "--update-baseline",
                          "--sarif", "metaeval.sarif"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    mutants = json.loads(run.stdout)["mutants"]
    statuses = {m["id"]: m["status"] for m in mutants}
    ran = [i for i, s in statuses.items() if i.startswith("shop/") and s in ("Killed",
                                                                             "Survived")]
    assert ran and "Survived" in statuses.values()  # clamp_quantity's limit is untested
    (example,) = [m for m in mutants if m["id"] == "example-edit-me"]
    assert example["status"] == "Ignored"
    assert example["detail"].startswith("example: edit me")
    assert example["path"] == "shop/guards.py"
    table = subprocess.run([*METAEVAL, "mutate"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)  # from the cache: the table
    assert "Ignored         1" in table.stdout
    outputs = {"json": run.stdout + run.stderr, "table": table.stdout + table.stderr}
    for name in ("mutants/findings.json", "metaeval.sarif"):
        outputs[name] = (tmp_path / name).read_text()
    report = json.loads((tmp_path / ".metaeval/mutation-report.json").read_text())
    assert report.pop("projectRoot") == str(tmp_path)  # the schema's field: the repository
    outputs["report"] = json.dumps(report)
    assert {name: outside_paths(text, tmp_path) for name, text in outputs.items()} == {
        name: [] for name in outputs}
    assert "shop/guards.py" in outputs["metaeval.sarif"]


def run_steps(workflow: dict[str, object], root: Path, env: dict[str, str]
              ) -> list[tuple[str, subprocess.CompletedProcess[str]]]:
    """Every ``run:`` step of the workflow's job, in order, as GitHub's bash runs it;
    ``uses:`` steps (checkout, setup-python, the SARIF upload) are the runner's."""
    jobs = workflow["jobs"]
    assert isinstance(jobs, dict)
    done = []
    for step in jobs["metaeval"]["steps"]:
        if "run" not in step:
            continue
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                               step["run"]], cwd=root, env=env, capture_output=True,
                              text=True, timeout=600)
        done.append((step["name"], proc))
        if proc.returncode != 0:
            break
    return done


@pytest.mark.slow  # a fresh virtual environment and two installs: a minute or more
def test_the_scaffolded_workflow_installs_and_runs(tmp_path: Path) -> None:
    # This checkout as CI would install metaeval from it: the files git knows,
    # copied, so that the build writes nothing here.
    source = tmp_path / "metaeval-source"
    listed = git(CHECKOUT, "ls-files", "-co", "--exclude-standard", "-z").split("\0")
    for name in filter(None, listed):
        if (CHECKOUT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(CHECKOUT / name, source / name)
    repo = tmp_path / "shop"
    repo.mkdir()
    fresh_repository(repo)
    git(repo, "remote", "add", "origin", str(repo))
    git(repo, "fetch", "-q", "origin")
    git(repo, "checkout", "-q", "-b", "tighter-refunds")
    guards = repo / "shop/guards.py"
    guards.write_text(guards.read_text().replace("return amount <= LIMIT",
                                                 "return amount <= LIMIT  # inclusive"))
    git(repo, "commit", "-qam", "a pull request's change")

    workflow = yaml.safe_load((repo / ".github/workflows/metaeval.yml").read_text())
    assert isinstance(workflow, dict)
    env_vars = workflow["env"]
    assert isinstance(env_vars, dict) and "METAEVAL_SPEC" in env_vars
    python = tmp_path / "venv"
    venv.create(python, with_pip=True)
    env = {**os.environ, **{k: str(v) for k, v in env_vars.items()},
           "METAEVAL_SPEC": f"metaeval @ {source.as_uri()}",
           "PATH": f"{python / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "VIRTUAL_ENV": str(python), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    env.pop("PYTHONPATH", None)
    done = run_steps(workflow, repo, env)
    said = {name: proc.stdout + proc.stderr for name, proc in done}
    assert [(name, proc.returncode) for name, proc in done] == [
        ("Install", 0), ("Mutation testing of safety controls and graders", 0),
        ("Graders against human labels", 0)], said
    mutate = said["Mutation testing of safety controls and graders"]
    assert "--since origin/main: " in mutate and "Killed  " in mutate
    assert "Killed          0" not in mutate
    assert json.loads((repo / "metaeval.sarif").read_text())["runs"][0]["results"] == []
    # The checks page's summary, one per step; the report page, its viewer carried by a
    # non-editable install as package data.
    summary = (tmp_path / "summary.md").read_text()
    assert "### ✅ metaeval mutate: no new survivor" in summary
    assert "metaeval meta-eval: " in summary
    page = (repo / "metaeval-reports/mutation.html").read_text()
    assert "customElements.define" in page and "<mutation-test-report-app" in page
    assert (repo / "metaeval-reports/meta-eval.html").read_text().count("<svg") == 2
    # -I: the current directory would shadow the installs (the repository is "shop").
    installed = subprocess.run([str(python / "bin/python"), "-I", "-c",
                                "import metaeval, shop; print(metaeval.__file__, shop.__file__)"],
                               cwd=tmp_path, capture_output=True, text=True,
                               check=True).stdout.split()
    assert str(python) in installed[0]  # metaeval from the spec, into the fresh venv
    assert installed[1] == str(repo / "shop/__init__.py")  # the project, editable
