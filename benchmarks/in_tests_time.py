"""Time in tests of `metaeval mutate` on jsonschema 4.26.0, an older commit against this checkout.

Issue 51: 349a7fc made a mutant of a function that ran at import (jsonschema's
keyword functions, registered by `validators.create(...)`) run every traced
test, so `timing.in_tests_seconds` rose by a third with the same statuses. This
script measures that figure for two versions of metaeval on the same target,
alternating the runs (before, after; then after, before; ...) so that other
work on the machine falls on both, and prints the median of each, their ratio,
the load average around each run, and whether every mutant's status is the
same in every run of both.

Downloads jsonschema 4.26.0's sdist (it carries the JSON-Schema-Test-Suite the
tests read), installs its test dependencies and each metaeval into a venv of its
own under the scratch directory (default benchmarks/.work/, git-ignored; the
older commit from `git archive`), and runs a fresh copy of the project per run.
One test is deselected in both: `test_import_cli` asserts the file a
DeprecationWarning names, which the traced baseline's import hook changes.

    python3 benchmarks/in_tests_time.py [--before 6cc6cee] [--runs 3] [--jobs 2]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_tools as bt
from bench_report import say

REPO = Path(__file__).resolve().parent.parent
SDIST = "jsonschema==4.26.0"
NAME = "jsonschema-4.26.0"
TARGETS = ("jsonschema/_keywords.py", "jsonschema/_utils.py")
DEPS = ("jsonschema==4.26.0", "attrs", "jsonschema-specifications", "referencing", "rpds-py",
        "jsonpath-ng", "virtue", "pytest")
DESELECT = "jsonschema/tests/test_deprecations.py::TestDeprecations::test_import_cli"
CONFIG = f'\n[tool.metaeval.mutate]\npytest_args = ["--deselect", "{DESELECT}"]\n'
# The same test deselected by a conftest too: a metaeval older than 6961c46 (8e353e2
# is) runs its traced baseline without pytest_args' --deselect, so the suite fails.
CONFTEST = f'''"""Deselect {DESELECT} for every metaeval (benchmarks/in_tests_time.py)."""


def pytest_collection_modifyitems(config, items):
    gone = [item for item in items if item.nodeid.endswith("{DESELECT.split("/")[-1]}")]
    if gone:
        config.hook.pytest_deselected(items=gone)
        items[:] = [item for item in items if item not in gone]
'''


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", default="6cc6cee",
                   help="the commit to compare this checkout with (default 6cc6cee)")
    p.add_argument("--runs", type=int, default=3, help="runs of each (default 3)")
    p.add_argument("--jobs", type=int, default=2, help="--jobs of every run (default 2)")
    p.add_argument("--python", default=sys.executable,
                   help="the interpreter of both venvs (default: this one); the recorder "
                        "differs from Python 3.12 on (sys.monitoring)")
    p.add_argument("--work", type=Path, default=REPO / "benchmarks" / ".work",
                   help="scratch directory (default benchmarks/.work, git-ignored)")
    args = p.parse_args(argv)
    if args.runs < 1 or args.jobs < 1:
        p.error("--runs and --jobs must be at least 1")
    args.work = args.work.resolve()
    return args


def venv_with(work: Path, name: str, metaeval: Path, env: dict[str, str], python: str
              ) -> Path:
    """A venv of ``python`` holding jsonschema's test dependencies and the metaeval at
    ``metaeval`` (installed anew each time: the checkout's may have changed)."""
    venv = work / f"venv-{name}"
    if not (venv / "bin" / "python").exists():
        bt.run_cmd([python, "-m", "venv", str(venv)], work, env)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    # The wheel, no dependencies: only its metadata (test_cli reads the version);
    # the tests import the sdist's copy, their working directory.
    bt.run_cmd([*pip, *DEPS[1:]], work, env)
    bt.run_cmd([*pip, "--no-deps", DEPS[0]], work, env)
    bt.run_cmd([*pip, "--force-reinstall", "--no-deps", str(metaeval)], work, env)
    bt.run_cmd([*pip, str(metaeval)], work, env)
    return venv


def setup(work: Path, before: str, python: str) -> tuple[Path, dict[str, Path]]:
    """The sdist, unpacked with the deselection added, and a venv per version."""
    work.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    dl = work / "dl"
    if not list(dl.glob(f"{NAME}.tar.gz")):
        bt.run_cmd([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:",
                    "--no-deps", SDIST, "-d", str(dl)], work, env)
    pristine = work / NAME
    if not pristine.exists():
        with tarfile.open(dl / f"{NAME}.tar.gz") as tar:
            tar.extractall(work, filter="data")
        with (pristine / "pyproject.toml").open("a", encoding="utf-8") as f:
            f.write(CONFIG)
    (pristine / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    old = work / f"metaeval-{before}"
    shutil.rmtree(old, ignore_errors=True)
    old.mkdir()
    archive = subprocess.run(["git", "archive", before], cwd=REPO, capture_output=True,
                             check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(old, filter="data")
    return pristine, {"before": venv_with(work, "before", old, env, python),
                      "after": venv_with(work, "after", REPO, env, python)}


@dataclass(frozen=True)
class Run:
    wall: float
    in_tests: float
    ran: int
    load: float
    """The 1-minute load average, the mean of its values before and after."""
    statuses: dict[str, str]


def one_run(venv: Path, pristine: Path, work: Path, name: str, jobs: int) -> Run:
    copy = work / "runs" / name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(pristine, copy, ignore=shutil.ignore_patterns(".metaeval"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    load = os.getloadavg()[0]
    m = bt.run_cmd([str(venv / "bin" / "metaeval"), "mutate", *TARGETS, "--jobs", str(jobs),
                    "--no-cache", "--format", "json"], copy, env, ok=(0, 1))
    report = json.loads(m.stdout)
    timing = report["timing"]
    return Run(m.wall, float(timing["in_tests_seconds"]), int(timing["ran"]),
               (load + os.getloadavg()[0]) / 2,
               {str(x["id"]): str(x["status"]) for x in report["mutants"]})


def differing(runs: Sequence[Run]) -> list[str]:
    """Mutants whose status is not the same in every run (or missing from one)."""
    ids = {k for r in runs for k in r.statuses}
    return sorted(k for k in ids if len({r.statuses.get(k) for r in runs}) > 1)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    after = head()  # what is installed now, though HEAD may move during the runs
    try:
        pristine, venvs = setup(args.work, args.before, args.python)
    except (bt.BenchError, OSError, subprocess.CalledProcessError) as e:
        print(f"setup failed: {(str(e).strip().splitlines() or ['?'])[0]}", file=sys.stderr)
        return 2
    version = subprocess.run([args.python, "-V"], capture_output=True, text=True).stdout
    say(f"{version.strip()}; {os.cpu_count()} cores; load average at start "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    runs: dict[str, list[Run]] = {"before": [], "after": []}
    for i in range(args.runs):
        for name in ("before", "after") if i % 2 == 0 else ("after", "before"):
            r = one_run(venvs[name], pristine, args.work, f"{NAME}-{name}-{i}", args.jobs)
            runs[name].append(r)
            say(f"  run {i + 1} {name}: in tests {r.in_tests:.1f} s, wall {r.wall:.1f} s, "
                f"{r.ran} mutants ran, load {r.load:.1f}")
    in_tests = {n: statistics.median(r.in_tests for r in rs) for n, rs in runs.items()}
    wall = {n: statistics.median(r.wall for r in rs) for n, rs in runs.items()}
    every = [*runs["before"], *runs["after"]]
    differ = differing(every)
    counts = Counter(every[0].statuses.values())
    for name, label in (("before", args.before), ("after", after)):
        say(f"{name} ({label}): in tests {in_tests[name]:.1f} s, wall {wall[name]:.1f} s "
            f"(medians of {args.runs}; load {statistics.mean(r.load for r in runs[name]):.1f})")
    say(f"after / before: in tests {in_tests['after'] / in_tests['before']:.2f}, "
        f"wall {wall['after'] / wall['before']:.2f}")
    say(f"statuses: {len(every[0].statuses)} mutants "
        f"({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}); {len(differ)} differ "
        "between any two runs" + (f": {differ[:5]}" if differ else ""))
    out = args.work / "results-in-tests.json"
    out.write_text(json.dumps({"before": args.before, "after": after, "in_tests": in_tests,
                               "wall": wall, "differ": differ,
                               "runs": {n: [asdict(r) for r in rs] for n, rs in runs.items()}},
                              indent=1))
    say(f"results: {out}")
    return 1 if differ else 0


def head() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, text=True,
                          capture_output=True).stdout.strip() or "this checkout"


if __name__ == "__main__":
    sys.exit(main())
