"""Hostile data files through the real command, as a user runs it: the bad line is
named, the exit code is 2, and no traceback reaches the terminal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.contract import JsonValue
from tests.builders import record

METAEVAL = str(Path(sys.executable).parent / "metaeval")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # A real process: stdout is a pipe encoded as UTF-8, as in CI, where an
    # unencodable string raises instead of being replaced by CliRunner.
    return subprocess.run([METAEVAL, *args], cwd=cwd, capture_output=True, text=True,
                          encoding="utf-8", timeout=120)


def state_run(run_id: str, levels: int, *, changed: bool) -> dict[str, JsonValue]:
    """A run whose states nest ``levels`` objects deep and differ at the bottom when
    ``changed``; state_unchanged must walk all the way down to tell."""
    def nested(leaf: JsonValue) -> JsonValue:
        for _ in range(levels):
            leaf = {"k": leaf}
        return leaf
    return {**record(run_id), "task": {"id": "t", "checks": [{"grader": "state_unchanged"}]},
            "initial_state": nested(1), "final_state": nested(2 if changed else 1),
            "label": {"verdict": "fail" if changed else "pass",
                      "criteria": {"state_unchanged": "fail" if changed else "pass"}}}


@pytest.mark.parametrize("command", [["validate"], ["meta-eval", "--resamples", "50"]])
def test_a_lone_surrogate_in_a_category_is_a_file_line_error(tmp_path: Path,
                                                            command: list[str]) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(record("good")) + "\n" + json.dumps(record("bad"))
                    .replace('"pass/clean"', '"\\ud800"') + "\n", encoding="utf-8")
    done = run(*command, str(path), cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    assert f"{path}:2: category: got '\\ud800' with a lone surrogate" in output


def test_states_nested_to_the_bound_are_diffed_and_deeper_ones_are_refused(
        tmp_path: Path) -> None:
    # The line's object is level 1 and the state level 2: 62 more levels reach the bound.
    deep_ok = tmp_path / "ok.jsonl"
    deep_ok.write_text("".join(json.dumps(state_run(f"r{changed}", 62, changed=changed)) + "\n"
                               for changed in (True, False)), encoding="utf-8")
    done = run("meta-eval", "--resamples", "50", "--format", "json", str(deep_ok), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    check = json.loads(done.stdout)["checks"][0]
    assert (check["name"], check["tp"], check["tn"]) == ("state_unchanged", 1, 1)

    too_deep = tmp_path / "deep.jsonl"
    deep = json.dumps({**state_run("deep", 0, changed=True), "final_state": "DEEP"})
    deep = deep.replace('"DEEP"', '{"k": ' * 1000 + "2" + "}" * 1000)  # json.dumps would recurse
    too_deep.write_text(json.dumps(state_run("ok", 2, changed=False)) + "\n" + deep + "\n",
                        encoding="utf-8")
    done = run("meta-eval", "--resamples", "50", str(too_deep), cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    assert f"{too_deep}:2: not valid JSON: nested deeper than 64 levels" in output


def test_a_pattern_that_backtracks_without_end_does_not_hang_meta_eval(tmp_path: Path) -> None:
    answer = "a" * 40 + "b"
    checks: list[JsonValue] = [
        {"grader": "answer_contains", "pattern": "^(a+)+$", "name": "nested"},
        {"grader": "answer_contains", "pattern": "(a|aa)+$", "name": "alternation"}]
    runs = [record(f"r{i}", task={"id": "t", "checks": checks},
                   label={"verdict": "fail", "criteria": {"nested": "fail",
                                                         "alternation": "fail"}},
                   trajectory=[{"type": "message", "role": "user", "content": "Say a's."},
                               {"type": "message", "role": "assistant", "content": answer}])
            for i in range(3)]
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    try:
        done = subprocess.run([METAEVAL, "meta-eval", "--resamples", "50", "--format", "json",
                               str(path)], cwd=tmp_path, capture_output=True, text=True,
                              encoding="utf-8", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("meta-eval still matching after 60 s")
    assert "Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr
    checks_out = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert (checks_out["nested"]["tn"], checks_out["nested"]["unscored"]) == (3, 0)
    assert checks_out["alternation"]["unscored"] == 3  # never a pass
