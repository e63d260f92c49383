"""`metaeval init` on a project that configures judges: the workflow audits each
judge and runs `metaeval gate` over the results, so a judge its audit refused fails
the check; without a judge the workflow is as before. The steps run as GitHub's
bash would run them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

from metaeval.cli import main
from tests.scaffold_project import make_shop

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = ".github/workflows/metaeval.yml"
JUDGES = """
[tool.metaeval]
meta_sets = ["meta_sets"]

[tool.metaeval.judges]
house = "biased"

[tool.metaeval.judges.paid]
type = "http"
base_url = "http://127.0.0.1:9/v1"
model = "m"
api_key_env = "PAID_JUDGE_KEY"

[tool.metaeval.gate]
"meta-eval:evaluator.kappa" = 0.0
"""


def _steps(root: Path, *flags: str) -> dict[str, dict[str, object]]:
    out = CliRunner().invoke(main, ["init", "--path", str(root), *flags])
    assert out.exit_code == 0, out.output
    workflow = yaml.safe_load((root / WORKFLOW).read_text())
    jobs = workflow["jobs"]
    job = jobs["metaeval"] if "metaeval" in jobs else jobs["merge"]
    return {str(step.get("name", step.get("uses"))): step for step in job["steps"]}


def test_without_a_judge_the_workflow_runs_neither_judge_audit_nor_gate(tmp_path: Path) -> None:
    make_shop(tmp_path)
    steps = _steps(tmp_path)
    assert not any("judge-audit" in str(s.get("run")) or "metaeval gate" in str(s.get("run"))
                   for s in steps.values())


def test_with_judges_the_workflow_audits_each_and_gates(tmp_path: Path) -> None:
    make_shop(tmp_path)
    with (tmp_path / "pyproject.toml").open("a") as f:
        f.write(JUDGES)
    steps = _steps(tmp_path)
    names = list(steps)
    assert names.index("Graders against human labels") < names.index(
        "May the judge gate? (house)") < names.index("May the judge gate? (paid)") < names.index(
        "Release bars") < names.index("Upload the HTML reports")
    paid = steps["May the judge gate? (paid)"]
    assert paid["env"] == {"PAID_JUDGE_KEY": "${{ secrets.PAID_JUDGE_KEY }}"}
    assert "env" not in steps["May the judge gate? (house)"]
    assert "metaeval gate metaeval-reports/meta-eval.json metaeval-reports/judge-audit-*.json" \
        in str(steps["Release bars"]["run"])

    # The house judge is the biased control: its audit says "report only" (exit 1),
    # which its own step lets through and the gate fails, naming the verdict.
    shutil.copytree(REPO / "meta_sets" / "judge", tmp_path / "meta_sets" / "judge")
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    ran = {}
    for name in ("May the judge gate? (house)", "Release bars"):
        ran[name] = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                                    str(steps[name]["run"])], cwd=tmp_path, env=env,
                                   capture_output=True, text=True, timeout=300)
    assert ran["May the judge gate? (house)"].returncode == 0, ran
    gate = ran["Release bars"]
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "judge-audit:biased.verdict: verdict 'report only'" in gate.stdout


def test_the_sharded_merge_gates_the_judges_too(tmp_path: Path) -> None:
    make_shop(tmp_path)
    with (tmp_path / "pyproject.toml").open("a") as f:
        f.write(JUDGES)
    steps = _steps(tmp_path, "--shards", "2")
    assert {"May the judge gate? (house)", "May the judge gate? (paid)", "Release bars"} <= set(
        steps)


def test_a_judge_name_that_is_not_plain_is_left_out_with_a_warning(tmp_path: Path) -> None:
    make_shop(tmp_path)
    with (tmp_path / "pyproject.toml").open("a") as f:
        f.write('[tool.metaeval.judges]\n"bad; rm -rf ~" = "steady"\nok = "steady"\n')
    out = CliRunner().invoke(main, ["init", "--path", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert "judge 'bad; rm -rf ~' left out" in out.stderr
    text = (tmp_path / WORKFLOW).read_text()
    assert "rm -rf" not in text and "May the judge gate? (ok)" in text
