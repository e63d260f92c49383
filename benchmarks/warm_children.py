"""What a child forked from a process that ran the tests misses: a cache.

mutmut forks each mutant's child from a process that has run the whole suite
once with the original code; `metaeval mutate` forks from one that has only
collected it. A warm child skips what every test pays once per process (on
inspect_ai's scorers, rendering the offline tokenizer's error, which inspect_ai
caches by traceback text), but it also keeps what the original code left
behind. A grader that remembers its verdicts (as a judge cache does) answers a
mutant's tests from that memory, and the mutant survives though a fresh
`pytest` run fails on it.

This script builds such a grader (ten lines and two tests, written here, not
copied), runs mutmut 3.8.1 and `metaeval mutate` (fork and subprocess
isolation) on it, and checks every mutmut survivor against a fresh `pytest`
with that mutant written into a copy of the file:

    python3 benchmarks/warm_children.py                # ~1 min the first time (the venv)
    python3 benchmarks/warm_children.py --venv benchmarks/.work/venv

Printed: each tool's statuses, the mutmut survivors a fresh `pytest` kills,
what issue 51's check for a sound warm start (each test run again after the
suite warmed the process, outcomes compared with the first run) sees here, and
whether metaeval's fork and subprocess statuses agree. Exit 0 when
metaeval's two isolations agree and report no survivor a fresh run kills.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PINS = ("pytest", "mutmut==3.8.1")

GRADER = '''\
"""A grader that remembers its verdicts, as a judge cache does."""

_seen: dict[float, bool] = {}


def passes(score: float) -> bool:
    if score not in _seen:
        _seen[score] = decide(score)
    return _seen[score]


def decide(score: float) -> bool:
    return score >= 0.5
'''

TESTS = '''\
from verdicts.grade import passes


def test_high_score_passes():
    assert passes(0.7)


def test_low_score_fails():
    assert not passes(0.2)
'''

PYPROJECT = '''\
[project]
name = "verdicts"
version = "0.1.0"

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]

[tool.mutmut]
source_paths = ["src/verdicts"]
pytest_add_cli_args_test_selection = ["tests"]

[tool.metaeval.mutate]
targets = ["src/verdicts/grade.py"]
'''

GRADE = Path("src/verdicts/grade.py")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / ".work",
                        help="scratch directory (default: benchmarks/.work)")
    parser.add_argument("--venv", type=Path, default=None,
                        help="a venv with mutmut 3.8.1 and metaeval (default: made under --work)")
    return parser.parse_args(argv)


def run(cmd: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode} in {cwd}:\n"
                         f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout


def make_venv(work: Path) -> Path:
    venv = work / "venv-warm-children"
    if not (venv / "bin" / "python").exists():
        run([sys.executable, "-m", "venv", str(venv)], work)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    run([*pip, *PINS], work)
    # Reinstalled every time, so the script checks the metaeval in this checkout.
    run([*pip, "--force-reinstall", "--no-deps", str(REPO)], work)
    run([*pip, str(REPO)], work)
    return venv


def project(where: Path) -> Path:
    shutil.rmtree(where, ignore_errors=True)
    (where / "src" / "verdicts").mkdir(parents=True)
    (where / "tests").mkdir()
    (where / "src" / "verdicts" / "__init__.py").write_text("")
    (where / GRADE).write_text(GRADER)
    (where / "tests" / "test_grade.py").write_text(TESTS)
    (where / "pyproject.toml").write_text(PYPROJECT)
    run(["git", "init", "-q"], where)
    return where


def fresh_pytest_fails(venv: Path, work: Path, removed: str, added: str) -> bool:
    """Whether a fresh pytest fails with ``removed`` replaced by ``added`` in the grader."""
    copy = project(work / "fresh")
    source = (copy / GRADE).read_text()
    if source.count(removed) != 1:
        raise SystemExit(f"cannot place mutmut's mutant: {removed!r} is not in the grader once")
    (copy / GRADE).write_text(source.replace(removed, added))
    out = run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
              copy, ok=(0, 1))
    return " failed" in out


def mutmut_mutants(venv: Path, work: Path) -> list[tuple[str, str, str, str]]:
    """(name, status, removed lines, added lines) of each mutmut mutant."""
    copy = project(work / "mutmut")
    mutmut = str(venv / "bin" / "mutmut")
    run([mutmut, "run", "--max-children", "2"], copy, ok=(0, 1, 2))
    found = []
    for line in run([mutmut, "results", "--all", "true"], copy).splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if not sep:
            continue
        diff = run([mutmut, "show", name], copy).splitlines()
        removed = [d[1:] for d in diff if d.startswith("-") and not d.startswith("---")]
        added = [d[1:] for d in diff if d.startswith("+") and not d.startswith("+++")]
        found.append((name, status, "\n".join(removed), "\n".join(added)))
    return found


def metaeval_mutants(venv: Path, work: Path, isolation: str) -> dict[str, tuple[str, str, str]]:
    """Each metaeval mutant's (status, removed lines, added lines), by id."""
    copy = project(work / f"metaeval-{isolation}")
    out = run([str(venv / "bin" / "metaeval"), "mutate", "--isolation", isolation,
               "--format", "json"], copy, ok=(0, 1))
    found = {}
    for mutant in json.loads(out)["mutants"]:
        diff = mutant["diff"].splitlines()  # survivors carry theirs
        removed = [d[1:] for d in diff if d.startswith("-") and not d.startswith("---")]
        added = [d[1:] for d in diff if d.startswith("+") and not d.startswith("+++")]
        found[mutant["id"]] = (mutant["status"], "\n".join(removed), "\n".join(added))
    return found


def rerun_after_warming(venv: Path, work: Path) -> str:
    """Each test run twice in one process, the second time after the whole suite warmed
    it: whether any outcome differs from the first. A memo of verdicts changes none, so
    this check would clear a warm start that hides the survivors above."""
    copy = project(work / "rerun")
    out = run([str(venv / "bin" / "python"), "-m", "pytest", "-v", "-p", "no:cacheprovider",
               "--keep-duplicates", "tests/test_grade.py", "tests/test_grade.py"], copy,
              ok=(0, 1))
    outcomes = [line.split(" ", 1)[1].split()[0] for line in out.splitlines()
                if line.startswith("tests/test_grade.py::")]
    half = len(outcomes) // 2
    if half == 0:
        raise SystemExit(f"no test outcome in the rerun's output:\n{out[-2000:]}")
    same = sum(a == b for a, b in zip(outcomes[:half], outcomes[half:], strict=True))
    return (f"{same} of {half} outcomes as in the first run "
            f"({'it sees nothing' if same == half else 'it sees a difference'})")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = args.work.resolve() / "warm-children"
    work.mkdir(parents=True, exist_ok=True)
    venv = args.venv.resolve() if args.venv else make_venv(args.work.resolve())

    mutants = mutmut_mutants(venv, work)
    hidden = [(name, added) for name, status, removed, added in mutants
              if status == "survived" and fresh_pytest_fails(venv, work, removed, added)]
    print(f"mutmut 3.8.1 (children forked after the suite ran): "
          f"{dict(Counter(s for _, s, _, _ in mutants))}")
    for name, added in hidden:
        print(f"  survived, but a fresh pytest fails on it: {name}: {added.strip()}")

    again = rerun_after_warming(venv, work)
    print(f"the rerun check (each test run again in the process the suite warmed, as issue 51 "
          f"proposes to find tests whose outcome depends on what ran before): {again}")

    fork = metaeval_mutants(venv, work, "fork")
    sub = metaeval_mutants(venv, work, "subprocess")
    for name, found in (("fork", fork), ("subprocess", sub)):
        print(f"metaeval {name + ':':12s}{dict(Counter(s for s, _, _ in found.values()))}")
    apart = sorted(m for m in fork.keys() | sub.keys()
                   if fork.get(m, ("",))[0] != sub.get(m, ("",))[0])
    wrong = [m for m, (status, removed, added) in fork.items()
             if status == "Survived" and fresh_pytest_fails(venv, work, removed, added)]
    print(f"metaeval fork == subprocess: {'yes' if not apart else 'no: ' + ', '.join(apart)}")
    print(f"survivors a fresh pytest kills: mutmut {len(hidden)} of "
          f"{sum(1 for _, s, _, _ in mutants if s == 'survived')}, metaeval {len(wrong)} of "
          f"{sum(1 for s, _, _ in fork.values() if s == 'Survived')}")
    return 0 if not apart and not wrong else 1


if __name__ == "__main__":
    sys.exit(main())
