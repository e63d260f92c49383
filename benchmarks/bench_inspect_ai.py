"""inspect_ai's scorers as a target of mutation_speed.py (issue 14's benchmark).

The project comes from a snapshot in the shared folder (its SOURCE.md says
what it holds): a tarball of the repository, the pins of its lock file
(constraints.txt) and the pytest arguments that keep the scorer tests that pass
offline (pytest_args.txt). Nothing is downloaded from elsewhere: the tarball is
unpacked under the scratch directory, made a git repository (its version comes
from git), and installed into a venv of its own with the constraints, its test
plugins, mutmut 3.8.1 and this checkout's metaeval.

metaeval and mutmut get the same files and the same tests: metaeval through
``[tool.metaeval.mutate]`` (targets, pytest_args), mutmut through
``[tool.mutmut]`` (source_paths, only_mutate, pytest_add_cli_args_test_selection).
Every timed run is on a fresh copy (so metaeval's cache is cold), the tools
alternate their order run by run, and the issue's targets are printed as
PASS/FAIL: the whole run at most half of mutmut's wall, mutants per second at
least 1.5x mutmut's, at most 2% of mutants outside the fork (each with its
reason), fork == subprocess (``--isolation-check``), and a ``--since`` run for a
one-line change within the time of the tests reaching the changed function
plus 10 s.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import bench_tools as bt
from bench_report import Check, Summary, print_checks, say, speed_ratio, speed_table, summarize

NAME = "inspect_ai"
DEFAULT_TARGETS = tuple(
    [f"src/inspect_ai/scorer/{m}.py"
     for m in ("_match", "_pattern", "_answer", "_choice", "_classification", "_common")]
    + ["src/inspect_ai/scorer/_metrics/"])
TEST_PLUGINS = ("pytest", "moto[server]", "pytest-dotenv", "pytest-mock", "pytest-timeout",
                "pytest-xdist", "pytest-asyncio", "mutmut==3.8.1")
# The one-line change of the --since measurement: the case check of match_str
# (the matching function of the match scorer), said another way: same
# behaviour, so the suite still passes; the line holds a mutant, and the offline
# tests reach it (`includes` in _match.py, the first choice, is reached only by
# tests the offline selection leaves out).
SINCE_FILE = "src/inspect_ai/scorer/_common.py"
SINCE_BEFORE = "    if ignore_case:\n"
SINCE_AFTER = "    if bool(ignore_case):\n"
SINCE_SLACK = 10.0
OUTSIDE_FORK_SHARE = 0.02
OWN_COST = "; a pytest process of its own took "
"""Where the runner's note on a mutant outside the fork turns to what its process cost."""
TIKTOKEN_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""The o200k_base encoding in the shared tiktoken-cache/ (SOURCE.md): the hash tiktoken
checks on every read of its cache, checked here first so a changed file is one line."""
SELECTIONS = {"offline": "pytest_args.txt", "networked": "pytest_args_networked.txt"}
"""--inspect-ai-selection: the scorer tests that pass offline (302), or those that pass
once tiktoken's encoding is cached, as on a networked CI (416)."""


class SetupError(bt.BenchError):
    """Setting inspect_ai up failed; the message is one line."""


# ---------------------------------------------------------------- configuration


def default_source(repo: Path) -> Path:
    """The shared snapshot: /work/shared/benchmarks/inspect_ai, else ../shared beside the repo."""
    for candidate in (Path("/work/shared/benchmarks/inspect_ai"),
                      repo.parent / "shared" / "benchmarks" / "inspect_ai"):
        if candidate.is_dir():
            return candidate
    return repo.parent / "shared" / "benchmarks" / "inspect_ai"


def parse_targets(text: str) -> tuple[str, ...]:
    """--inspect-ai-targets: comma-separated paths inside the project."""
    return tuple(t.strip() for t in text.split(",") if t.strip())


def read_pytest_args(text: str) -> tuple[str, ...]:
    """pytest_args.txt: one argument a line; blank lines and # comments left out."""
    return tuple(line.strip() for line in text.splitlines()
                 if line.strip() and not line.strip().startswith("#"))


def _toml_list(items: Sequence[str]) -> str:
    # JSON strings are TOML basic strings for everything these paths and flags hold.
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def only_mutate(targets: Sequence[str]) -> list[str]:
    """mutmut's globs for the targets: a file as it is, a directory as `dir/*`."""
    return [t if t.endswith(".py") else t.rstrip("/") + "/*" for t in targets]


def metaeval_config(targets: Sequence[str], pytest_args: Sequence[str]) -> str:
    return (f"\n[tool.metaeval.mutate]\ntargets = {_toml_list(targets)}\n"
            f"pytest_args = {_toml_list(pytest_args)}\n")


def mutmut_config(targets: Sequence[str], pytest_args: Sequence[str]) -> str:
    return ('[tool.mutmut]\nsource_paths = ["src/inspect_ai"]\n'
            f"only_mutate = {_toml_list(only_mutate(targets))}\n"
            f"pytest_add_cli_args_test_selection = {_toml_list(pytest_args)}\n")


def make_target(pristine: Path, targets: Sequence[str], pytest_args: Sequence[str],
                cache: Path | None = None) -> bt.Target:
    """Both tools' view of the snapshot; ``cache``: tiktoken's cache folder, set for both."""
    env = (("TIKTOKEN_CACHE_DIR", str(cache)),) if cache is not None else ()
    return bt.Target(NAME, pristine, (), mutmut_config(targets, pytest_args), (),
                     ("-p", "no:cacheprovider", *pytest_args), src_on_path=True, env=env)


def tiktoken_cache(source: Path, work: Path) -> Path:
    """The shared tiktoken-cache/ unpacked into ``work`` as tiktoken names its file; the
    folder for TIKTOKEN_CACHE_DIR. SetupError when it is missing or not the encoding."""
    found = sorted((source / "tiktoken-cache").glob("*.gz"))
    if len(found) != 1:
        raise SetupError(f"expected one .gz file in {source / 'tiktoken-cache'}, found "
                         f"{len(found)} (see SOURCE.md there)")
    data = gzip.decompress(found[0].read_bytes())
    digest = hashlib.sha256(data).hexdigest()
    if digest != TIKTOKEN_SHA256:
        raise SetupError(f"{found[0]}: sha256 {digest!r}; expected {TIKTOKEN_SHA256!r} "
                         "(the o200k_base encoding tiktoken checks)")
    folder = work / "tiktoken-cache"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / found[0].name.removesuffix(".gz")).write_bytes(data)
    return folder


# ---------------------------------------------------------------- setup


def _tarball(source: Path) -> Path:
    found = sorted(source.glob("inspect_ai-*.tar.gz"))
    if not found:
        raise SetupError(f"no inspect_ai-*.tar.gz in {source} (see --inspect-ai-source)")
    return found[-1]


def _step(cmd: Sequence[str], cwd: Path, env: Mapping[str, str], what: str, log: Path) -> None:
    """Run a setup command; on failure its whole output goes to log, one line to the user."""
    try:
        bt.run_cmd(cmd, cwd, env)
    except (bt.BenchError, OSError) as e:
        log.write_text(str(e))
        raise SetupError(f"inspect_ai setup: {what} failed (output in {log})") from None


def setup(source: Path, work: Path, repo: Path, targets: Sequence[str],
          selection: str = "offline") -> tuple[Path, bt.Target]:
    """Unpack the snapshot, commit it, install it with its pins; reinstall this metaeval.
    ``selection``: which of SELECTIONS' test lists both tools run; either way both run
    with the shared tiktoken cache, as on a networked machine."""
    args_file = SELECTIONS[selection]
    for name in ("constraints.txt", args_file):
        if not (source / name).is_file():
            raise SetupError(f"no {name} in {source} (see --inspect-ai-source)")
    tarball = _tarball(source)
    pytest_args = read_pytest_args((source / args_file).read_text())
    source, work = source.resolve(), work.resolve()  # commands run with a copy as their cwd
    work.mkdir(parents=True, exist_ok=True)
    cache = tiktoken_cache(source, work)
    log = work / "inspect_ai-setup.log"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    unpacked = work / "inspect_ai-src"
    pristine = unpacked / "inspect_ai"
    shutil.rmtree(unpacked, ignore_errors=True)
    with tarfile.open(tarball) as tar:
        tar.extractall(unpacked, filter="data")
    if not (pristine / "pyproject.toml").is_file():
        raise SetupError(f"{tarball.name} holds no inspect_ai/pyproject.toml")
    missing = [t for t in targets if not (pristine / t).exists()]
    if missing:
        raise SetupError(f"--inspect-ai-targets: not in the snapshot: {', '.join(missing)}")
    pyproject = pristine / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + metaeval_config(targets, pytest_args))
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    for cmd, what in ((["git", "init", "-q"], "git init"), (["git", "add", "-A"], "git add"),
                      ([*git, "commit", "-qm", "snapshot"], "git commit")):
        _step(cmd, pristine, env, what, log)

    venv = work / "venv-inspect_ai"
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    if not (venv / ".installed").exists():
        _step([sys.executable, "-m", "venv", str(venv)], work, env, "making the venv", log)
        _step([*pip, "-c", str(source / "constraints.txt"), "-e", str(pristine), *TEST_PLUGINS],
              work, env, "installing inspect_ai with constraints.txt", log)
        (venv / ".installed").write_text(tarball.name)
    # Reinstalled every time, so the benchmark measures the metaeval in this checkout.
    _step([*pip, "--force-reinstall", "--no-deps", str(repo)], work, env,
          "installing this checkout's metaeval", log)
    _step([*pip, str(repo)], work, env, "installing metaeval's dependencies", log)
    bt.write_durations_plugin(work)
    return venv, make_target(pristine, targets, pytest_args, cache)


# ---------------------------------------------------------------- reading results


def outside_fork(report: Mapping[str, object]) -> tuple[int, int, Counter[str]]:
    """Of metaeval's --format json: mutants run outside the fork, mutants run, reasons.

    A mutant the fork path could not take has its reason in `own_process`
    (empty when it ran in a forked child); the runner's count is
    `timing.deferred`, the mutants run `timing.ran`. A reason that is missing
    is counted as the empty string, so a check can say some had none.
    """
    timing = report.get("timing")
    timing = timing if isinstance(timing, dict) else {}
    mutants = report.get("mutants")
    reasons: Counter[str] = Counter()
    for m in mutants if isinstance(mutants, list) else []:
        if isinstance(m, dict) and m.get("own_process"):
            # Without what each process cost, which differs mutant by mutant.
            why = str(m["own_process"]).strip().splitlines()[0].split(OWN_COST)[0]
            reasons[why[:160]] += 1
    deferred = int(str(timing.get("deferred", sum(reasons.values()))))
    if deferred > sum(reasons.values()):
        reasons[""] += deferred - sum(reasons.values())
    return deferred, int(str(timing.get("ran", 0))), reasons


def statuses_by_id(report: Mapping[str, object]) -> dict[str, str]:
    mutants = report.get("mutants")
    return {str(m["id"]): str(m["status"])
            for m in (mutants if isinstance(mutants, list) else []) if isinstance(m, dict)}


def status_differences(fork: Mapping[str, str], subprocess_: Mapping[str, str]
                       ) -> list[tuple[str, str, str]]:
    """(id, fork status, subprocess status) for every id whose statuses differ or is in one only."""
    return [(k, fork.get(k, "missing"), subprocess_.get(k, "missing"))
            for k in sorted(fork.keys() | subprocess_.keys()) if fork.get(k) != subprocess_.get(k)]


def isolation_check(fork: Mapping[str, str], subprocess_: Mapping[str, str]) -> Check:
    diff = status_differences(fork, subprocess_)
    shown = "; ".join(f"{k}: fork {a}, subprocess {b}" for k, a, b in diff[:5])
    return (f"{NAME}: fork == subprocess, every status identical", not diff and bool(fork),
            f"{len(fork)} mutants, {len(diff)} differ" + (f": {shown}" if diff else ""))


def function_span(source: str, line: int) -> tuple[int, int] | None:
    """First and last line of the innermost function holding line, or None."""
    best: tuple[int, int] | None = None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            if node.lineno <= line <= end and (best is None or node.lineno >= best[0]):
                best = (node.lineno, end)
    return best


def tests_reaching(report: Mapping[str, object], path: str, span: tuple[int, int]) -> list[str]:
    """The tests that covered any mutant of path within span in a full run (its covered_by)."""
    found: set[str] = set()
    mutants = report.get("mutants")
    for m in mutants if isinstance(mutants, list) else []:
        if (isinstance(m, dict) and str(m.get("path", "")).endswith(path)
                and span[0] <= int(str(m.get("line", 0))) <= span[1]):
            covered = m.get("covered_by")
            if isinstance(covered, list):
                found.update(str(t) for t in covered if t)
    return sorted(found)


def tests_from_coverage(coverage: Mapping[str, object], path: str, def_line: int) -> list[str]:
    """The tests metaeval's coverage map (.metaeval/mutate-coverage.json) says ran the
    function of path defined at def_line."""
    found: set[str] = set()
    ran = coverage.get("ran")
    for entry in ran if isinstance(ran, list) else []:
        if (isinstance(entry, dict) and str(entry.get("file", "")).endswith(path)
                and entry.get("line") == def_line and isinstance(entry.get("tests"), list)):
            found.update(str(t) for t in entry["tests"])
    return sorted(found)


def one_line_change(text: str) -> str:
    """text with its one line SINCE_BEFORE (the whole line) made SINCE_AFTER."""
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line == SINCE_BEFORE]
    if len(hits) != 1:
        raise bt.BenchError(f"{SINCE_FILE}: expected one {SINCE_BEFORE.strip()!r} line, "
                            f"found {len(hits)}")
    lines[hits[0]] = SINCE_AFTER
    return "".join(lines)


# ---------------------------------------------------------------- the targets


def target_checks(me: Summary, mm: Summary | None, outside: tuple[int, int, Counter[str]]
                  ) -> list[Check]:
    """Issue 14's targets on metaeval's summary against mutmut's (n/a without mutmut)."""
    checks: list[Check] = []
    if mm is None:
        checks.append(("metaeval's wall <= 0.5x mutmut's", None, "mutmut not run"))
        checks.append(("metaeval's mutants/s >= 1.5x mutmut's", None, "mutmut not run"))
    else:
        wall_ratio = me.median_wall / mm.median_wall if mm.median_wall else float("inf")
        checks.append(("metaeval's wall <= 0.5x mutmut's", wall_ratio <= 0.5,
                       f"{wall_ratio:.2f}x ({me.median_wall:.1f} s vs {mm.median_wall:.1f} s)"))
        rate = speed_ratio(me, mm)
        checks.append(("metaeval's mutants/s >= 1.5x mutmut's", rate >= 1.5,
                       f"{rate:.2f}x ({me.per_second:.2f} vs {mm.per_second:.2f} mutants/s)"))
    deferred, ran, reasons = outside
    share = deferred / ran if ran else 0.0
    unexplained = reasons.get("", 0)
    checks.append((f"<= {OUTSIDE_FORK_SHARE:.0%} of mutants outside the fork, each with a reason",
                   share <= OUTSIDE_FORK_SHARE and not unexplained and ran > 0,
                   f"{deferred} of {ran} run ({share:.1%})"
                   + (f", {unexplained} without a reason" if unexplained else "")))
    return checks


def since_check(since_wall: float, tests_wall: float | None, n_tests: int) -> Check:
    label = f"--since for a one-line change <= tests reaching it + {SINCE_SLACK:g} s"
    if tests_wall is None:
        return (label, None, f"{since_wall:.1f} s; no test of the full run reaches the change")
    bound = tests_wall + SINCE_SLACK
    return (label, since_wall <= bound,
            f"{since_wall:.1f} s vs {bound:.1f} s ({n_tests} tests in {tests_wall:.1f} s "
            f"+ {SINCE_SLACK:g} s)")


# ---------------------------------------------------------------- running


def run_once(tool: str, target: bt.Target, venv: Path, work: Path, run: int, jobs: int,
             extra: Sequence[str] = ()) -> bt.ToolRun:
    """One timed run of metaeval or mutmut on a fresh copy."""
    copy = bt.fresh_copy(target, work, f"{NAME}-{tool}-{run}")
    env = bt.tool_env(venv, copy, target)
    if tool == "metaeval":
        m = bt.run_cmd(bt.metaeval_cmd(venv, target, jobs, extra), copy, env, ok=(0, 1))
        mutants, report = bt.read_metaeval(m.stdout)
        return bt.ToolRun(tool, NAME, run, m.wall, mutants, report=report)
    bt.write_mutmut_config(copy, target)
    m = bt.run_cmd(bt.mutmut_cmd(venv, jobs), copy, env)
    return bt.ToolRun(tool, NAME, run, m.wall, bt.read_mutmut(venv, copy, env))


def measure_since(target: bt.Target, venv: Path, copy: Path, report: Mapping[str, object],
                  jobs: int, data: dict[str, object]) -> Check:
    """In the copy of the last full metaeval run (its cache present): change one line,
    commit it, time `metaeval mutate --since HEAD~1`, and time the tests reaching it.

    The tests reaching the changed function come from metaeval's coverage map as
    the full run left it, else from its report's covered_by."""
    env = bt.tool_env(venv, copy, target)
    changed = copy / SINCE_FILE
    before = changed.read_text()
    changed.write_text(one_line_change(before))
    line = before[:before.index(SINCE_BEFORE)].count("\n") + 1
    span = function_span(before, line) or (line, line)
    coverage_file = copy / ".metaeval" / "mutate-coverage.json"
    coverage = json.loads(coverage_file.read_text()) if coverage_file.is_file() else {}
    tests = (tests_from_coverage(coverage, SINCE_FILE, span[0])
             or tests_reaching(report, SINCE_FILE, span))
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    bt.run_cmd([*git, "commit", "-qam", "one-line change"], copy, env)
    since = bt.run_cmd(bt.metaeval_cmd(venv, target, jobs, ("--since", "HEAD~1")), copy, env,
                       ok=(0, 1, 3))
    try:
        result = json.loads(since.stdout)
    except json.JSONDecodeError:
        result = {}
    timing = result.get("timing") if isinstance(result.get("timing"), dict) else {}
    mutants = result.get("mutants") if isinstance(result.get("mutants"), list) else []
    tests_wall = None
    if tests:
        cmd = [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
               *tests]
        tests_wall = bt.run_cmd(cmd, copy, env).wall
    statuses = ", ".join(sorted(str(m.get("status")) for m in mutants if isinstance(m, dict)))
    say(f"--since HEAD~1 after changing line {line} of {SINCE_FILE} (function at lines "
        f"{span[0]}-{span[1]}): {since.wall:.1f} s, exit {since.returncode}, {len(mutants)} "
        f"mutants ({statuses or 'none'}), {timing.get('traced_tests', '?')} tests traced, "
        f"{timing.get('reused_tests', '?')} reused; the {len(tests)} tests reaching it take "
        + (f"{tests_wall:.1f} s" if tests_wall is not None else "n/a") + " in a plain run")
    data["since"] = {"wall": since.wall, "exit": since.returncode, "mutants": len(mutants),
                     "statuses": statuses, "traced_tests": timing.get("traced_tests"),
                     "reused_tests": timing.get("reused_tests"),
                     "tests_reaching": len(tests), "tests_wall": tests_wall}
    if since.returncode == 3:
        last = (since.stderr.strip().splitlines() or ["?"])[-1]
        return (f"--since for a one-line change <= tests reaching it + {SINCE_SLACK:g} s", None,
                f"{since.wall:.1f} s, but no mutant ran: {last}")
    return since_check(since.wall, tests_wall, len(tests))


def bench(target: bt.Target, venv: Path, work: Path, tools: Sequence[str], runs: int,
          jobs: int, isolation: bool) -> tuple[list[Check], dict[str, object]]:
    """Every measurement on inspect_ai; the checks to print and the data for the JSON."""
    say(f"\n== {NAME} ==")
    tools = [t for t in tools if t in ("metaeval", "mutmut")]
    plain, durations = bt.plain_test_run(target, venv, work)
    say(f"plain test run: {len(durations)} tests, {plain.wall:.2f} s wall")
    done: dict[str, list[bt.ToolRun]] = {t: [] for t in tools}
    for i in range(runs):
        for tool in tools[i % len(tools):] + tools[:i % len(tools)]:
            r = run_once(tool, target, venv, work, i, jobs)
            done[tool].append(r)
            say(f"  run {i + 1} {tool}: {len(r.mutants)} mutants in {r.wall:.1f} s")
    summaries = [summarize(done[t]) for t in tools]
    say("")
    say(speed_table(summaries))
    data: dict[str, object] = {
        "plain": {"tests": len(durations), "wall": plain.wall},
        "summaries": [s.as_json() for s in summaries],
        "walls": {t: [r.wall for r in rs] for t, rs in done.items()}}
    if "metaeval" not in done:
        return [], data
    by_tool = {s.tool: s for s in summaries}
    last = done["metaeval"][-1]
    outside = outside_fork(last.report)
    deferred, ran, reasons = outside
    say(f"metaeval: {ran} mutants run, {deferred} outside the fork"
        + ("".join(f"\n  {n} x {r or '(no reason given)'}" for r, n in reasons.most_common())))
    data["outside_fork"] = {"count": deferred, "ran": ran, "reasons": dict(reasons)}
    checks = target_checks(by_tool["metaeval"], by_tool.get("mutmut"), outside)
    (work / f"results-{NAME}-metaeval-report.json").write_text(json.dumps(last.report))
    checks.append(measure_since(target, venv, work / "runs" / f"{NAME}-metaeval-{last.run}",
                                last.report, jobs, data))
    if isolation:
        # The subprocess run is the longest part: what is known is shown and kept first.
        print_checks(f"targets on {NAME} so far (the fork == subprocess run follows):", checks)
        (work / f"results-{NAME}-partial.json").write_text(json.dumps(data, indent=1,
                                                                      default=str))
        sub = run_once("metaeval", target, venv, work, runs, jobs, ("--isolation", "subprocess"))
        say(f"metaeval --isolation subprocess: {len(sub.mutants)} mutants in {sub.wall:.1f} s")
        data["isolation_subprocess_wall"] = sub.wall
        checks.append(isolation_check(statuses_by_id(last.report), statuses_by_id(sub.report)))
    return checks, data


def add_arguments(p: argparse.ArgumentParser, repo: Path) -> None:
    p.add_argument("--inspect-ai-source", type=Path, default=default_source(repo),
                   help="folder with the inspect_ai snapshot, constraints.txt and "
                        "pytest_args.txt (default: the shared benchmarks/inspect_ai)")
    p.add_argument("--inspect-ai-targets", type=parse_targets, default=DEFAULT_TARGETS,
                   help="comma-separated files and folders to mutate (default: SOURCE.md's "
                        "scorer modules and _metrics/)")
    p.add_argument("--isolation-check", action="store_true",
                   help="on inspect_ai, also run metaeval with --isolation subprocess and "
                        "compare every status with the fork run")
    p.add_argument("--inspect-ai-selection", choices=tuple(SELECTIONS), default="offline",
                   help="the scorer tests both tools run, each with the shared tiktoken cache: "
                        "offline (pytest_args.txt, 302 tests; default) or networked "
                        "(pytest_args_networked.txt, 416)")


def metaeval_commit(repo: Path) -> str:
    """HEAD of this checkout, with -dirty when tracked files changed."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=repo, text=True, capture_output=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")
