"""`metaeval init --shards N`: a workflow with a baseline job, an N-shard matrix and a
merge job that gates. Its structure is read as GitHub would (YAML: jobs, needs,
matrix, artifacts); then its metaeval steps run job by job, each in a clone of
its own, the artifacts handed on as actions/upload- and download-artifact would,
and the merge must give the statuses of one run."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from metaeval.cli import main
from tests.builders import git
from tests.scaffold_project import make_shop

WORKFLOW = ".github/workflows/metaeval.yml"
BIN = str(Path(sys.executable).parent)


def _sharded(root: Path, shards: int) -> dict[str, Any]:
    make_shop(root)
    out = CliRunner().invoke(main, ["init", "--path", str(root), "--shards", str(shards)])
    assert out.exit_code == 0, out.output
    assert f"workflow: a baseline job, {shards} shards, a merge that gates" in out.stderr
    workflow = yaml.safe_load((root / WORKFLOW).read_text())
    assert isinstance(workflow, dict)
    return workflow


def _step(job: dict[str, Any], uses: str, index: int = 0) -> dict[str, Any]:
    found = [s for s in job["steps"] if str(s.get("uses", "")).startswith(uses)]
    return dict(found[index])


def _mutate_runs(job: dict[str, Any]) -> list[str]:
    return [s["run"] for s in job["steps"] if str(s.get("run", "")).startswith("metaeval mutate")]


def test_the_sharded_workflow_is_a_baseline_a_matrix_and_a_gating_merge(tmp_path: Path) -> None:
    workflow = _sharded(tmp_path, 4)
    jobs = workflow["jobs"]
    assert list(jobs) == ["baseline", "mutate", "merge"]
    baseline, mutate, merge = jobs["baseline"], jobs["mutate"], jobs["merge"]
    assert "needs" not in baseline
    assert mutate["needs"] == "baseline"
    assert mutate["strategy"] == {"fail-fast": False, "matrix": {"shard": [1, 2, 3, 4]}}
    # The merge runs whatever the shards did, so a missing shard fails it (exit 3).
    assert merge["needs"] == ["baseline", "mutate"] and merge["if"] == "always()"
    (trace,) = _mutate_runs(baseline)
    (shard,) = _mutate_runs(mutate)
    (merged,) = _mutate_runs(merge)
    assert "--trace-only --write-coverage metaeval-coverage.json" in trace
    assert "--shard ${{ matrix.shard }}/4 --coverage metaeval-coverage.json" in shard
    assert "--shard-out metaeval-shard" in shard
    assert shard.endswith("|| [ $? -ne 2 ]")  # survivors, an empty share: the merge's
    for flag in ("--merge metaeval-shards", "--baseline mutants/findings.json",
                 "--sarif metaeval.sarif", '--summary "$GITHUB_STEP_SUMMARY"'):
        assert flag in merged
    # Every job plans the same mutants: the same --since, the same history.
    assert {r.split(" --", 2)[1] for r in (trace, shard, merged)} == {"since origin/main"}
    for job in (baseline, mutate, merge):
        assert _step(job, "actions/checkout")["with"] == {"fetch-depth": 0}
    # Artifacts: the coverage map from the baseline job to each shard, every shard's
    # manifest to the merge.
    up = _step(baseline, "actions/upload-artifact")["with"]
    assert _step(mutate, "actions/download-artifact")["with"] == {"name": up["name"]}
    assert up["path"] == "metaeval-coverage.json"
    shard_up = _step(mutate, "actions/upload-artifact")
    assert shard_up["if"].startswith("always()")  # an unfinished shard is named by the merge
    down = _step(merge, "actions/download-artifact")["with"]
    assert fnmatch.fnmatch(shard_up["with"]["name"].replace("${{ matrix.shard }}", "3"),
                           down["pattern"])
    assert down["path"] == "metaeval-shards"
    assert _step(merge, "github/codeql-action/upload-sarif")["with"]["sarif_file"] == \
        "metaeval.sarif"


def test_without_shards_the_workflow_is_one_job(tmp_path: Path) -> None:
    make_shop(tmp_path)
    out = CliRunner().invoke(main, ["init", "--path", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert list(yaml.safe_load((tmp_path / WORKFLOW).read_text())["jobs"]) == ["metaeval"]


@pytest.mark.parametrize("value", ["1", "257", "two"])
def test_a_bad_shard_count_exits_2_and_writes_nothing(tmp_path: Path, value: str) -> None:
    make_shop(tmp_path)
    out = CliRunner().invoke(main, ["init", "--path", str(tmp_path), "--shards", value])
    assert out.exit_code == 2 and "--shards" in out.output
    assert not (tmp_path / WORKFLOW).exists()


class _Runner:
    """The jobs' metaeval steps, as a GitHub runner would run them: each job in a clone
    of its own, artifacts kept between jobs by name."""

    def __init__(self, repo: Path, scratch: Path) -> None:
        self.repo, self.scratch = repo, scratch
        self.artifacts = scratch / "artifacts"
        self.env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
                    "GITHUB_STEP_SUMMARY": str(scratch / "summary.md")}
        self.env.pop("PYTHONPATH", None)

    def job(self, name: str, job: dict[str, Any], shard: int | None = None
            ) -> list[subprocess.CompletedProcess[str]]:
        where = self.scratch / (name if shard is None else f"{name}-{shard}")
        git(self.scratch, "clone", "-q", "-b", "tighter-refunds", str(self.repo), str(where))
        done = []
        for step in job["steps"]:
            uses, given = str(step.get("uses", "")), step.get("with", {})
            if uses.startswith("actions/upload-artifact"):
                name_ = given["name"].replace("${{ matrix.shard }}", str(shard))
                source = where / given["path"]
                if source.exists():
                    target = self.artifacts / name_
                    if source.is_dir():
                        shutil.copytree(source, target)
                    else:
                        target.mkdir(parents=True)
                        shutil.copy2(source, target)
            elif uses.startswith("actions/download-artifact"):
                if "name" in given:
                    shutil.copytree(self.artifacts / given["name"], where / given.get("path", "."),
                                    dirs_exist_ok=True)
                else:
                    for artifact in self.artifacts.iterdir():
                        if fnmatch.fnmatch(artifact.name, given["pattern"]):
                            shutil.copytree(artifact, where / given["path"] / artifact.name)
            elif str(step.get("run", "")).startswith("metaeval mutate"):
                command = step["run"].replace("${{ matrix.shard }}", str(shard))
                done.append(subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail",
                                            "-c", command], cwd=where, env=self.env,
                                           capture_output=True, text=True, timeout=300))
                assert done[-1].returncode == 0, done[-1].stdout + done[-1].stderr
        return done


@pytest.mark.slow  # the whole workflow run locally (CI: pytest -m slow)
def test_the_sharded_workflow_runs_and_its_merge_equals_one_run(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    workflow = _sharded(repo, 3)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "shop, scaffolded")
    git(repo, "checkout", "-q", "-b", "tighter-refunds")
    guards = repo / "shop/guards.py"  # a pull request's change: mutants on its lines
    guards.write_text(guards.read_text().replace("return amount <= LIMIT",
                                                 "return amount <= LIMIT  # inclusive"))
    git(repo, "commit", "-qam", "a pull request's change")
    runner = _Runner(repo, tmp_path)
    (trace,) = runner.job("baseline", workflow["jobs"]["baseline"])
    assert "--trace-only: " in trace.stderr and " 0 reused" in trace.stderr
    for k in (1, 2, 3):
        (shard,) = runner.job("mutate", workflow["jobs"]["mutate"], k)
        assert f"--shard {k}/3:" in shard.stderr
        assert "tests traced" not in shard.stdout or " 0 tests traced" in shard.stdout
    (merged,) = runner.job("merge", workflow["jobs"]["merge"])
    assert "--merge: 3 shards" in merged.stderr and "Killed  " in merged.stdout
    report = json.loads((tmp_path / "merge/.metaeval/mutation-report.json").read_text())
    single = subprocess.run([f"{BIN}/metaeval", "mutate", "--since", "origin/main", "--no-cache",
                             "--format", "json"], cwd=tmp_path / "baseline", env=runner.env,
                            capture_output=True, text=True, timeout=300)
    assert single.returncode in (0, 1), single.stderr
    want = {m["id"]: m["status"] for m in json.loads(single.stdout)["mutants"]}
    assert want and {m["id"]: m["status"] for f in report["files"].values()
                     for m in f["mutants"]} == want
    assert "metaeval mutate" in (tmp_path / "summary.md").read_text()
