"""A file that cannot be written never loses a finished run.

The report, the findings file and the SARIF file that cannot be written are one
line each on stderr and exit code 2, after the table; a cache that cannot be
written is a warning, and the exit code stands; a scratch directory that cannot
be written is a void run (exit 3) with one line, never a traceback.

Tests run as root, which ignores permission bits: an unwritable path here is
one whose parent is a file, a directory of sysfs, or a system call made to fail
with the error a full disk gives.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.commands import mutate_run as session
from metaeval.commands.mutate_values import MutateRequest
from metaeval.errors import ExitCode
from metaeval.mutation.isolation.options import Isolation
from metaeval.mutation.subprocess.protocol import ChildSpec
from tests.mutation.conftest import (
    PRICING,
    SURVIVOR,
    FakeRunner,
    calc_project,
    never_run,
    rendered_run,
    shop_here,
    without_steps,
)

__all__ = ["shop_here"]  # a fixture, used by name

SYSFS = Path("/sys/kernel")


def full_disk(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def blocked(root: Path) -> Path:
    """A directory path that cannot be created: its parent is a file."""
    (root / "not-a-dir").write_text("a file\n", encoding="utf-8")
    return root / "not-a-dir"


def mutate(*args: str) -> Result:
    return CliRunner().invoke(main, ["mutate", PRICING, "--mutants", "no_patches", *args])


def assert_shown_then_failed(result: Result, *paths: Path) -> None:
    """The table on stdout; one error line per path on stderr; exit 2; no traceback."""
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert isinstance(result.exception, SystemExit)
    assert "Killed" in result.stdout and "Survived" in result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert [e.partition(": cannot write: ")[0] for e in errors] == [
        f"error: {p}" for p in paths]
    assert "Traceback" not in result.output


def test_an_unwritable_report_is_one_line_and_exit_2_after_the_table(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    report = blocked(shop_here) / "report.json"
    result = mutate("--report", str(report))
    assert_shown_then_failed(result, report)
    assert "is not a directory" in result.stderr


def test_unwritable_findings_and_sarif_files_are_each_named(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    findings, sarif = blocked(shop_here) / "findings.json", blocked(shop_here) / "out.sarif"
    result = mutate("--baseline", str(findings), "--update-baseline", "--sarif", str(sarif),
                    "--no-cache")
    assert_shown_then_failed(result, findings, sarif)
    assert "against " in result.stdout  # the comparison is still shown
    # The report is not held back by the files after it.
    assert (shop_here / ".metaeval" / "mutation-report.json").is_file()


def test_an_unwritable_html_page_is_one_line_and_the_json_report_stands(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    page = blocked(shop_here) / "report.html"
    result = mutate("--html", str(page))
    assert_shown_then_failed(result, page)
    assert (shop_here / ".metaeval" / "mutation-report.json").is_file()


def test_a_writable_html_page_holds_the_run(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The mirror: the same run, the page written, the survivor's exit code kept.
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    result = mutate("--html", "out/report.html")
    assert result.exit_code == ExitCode.FINDINGS, result.output
    assert "report: HTML in out/report.html" in result.stdout
    page = (shop_here / "out" / "report.html").read_text(encoding="utf-8")
    assert "<mutation-test-report-app" in page
    assert f'"id": "{SURVIVOR}"' in page and '"status": "Survived"' in page


@pytest.mark.skipif(not SYSFS.is_dir(), reason="no sysfs")
def test_a_cache_that_cannot_be_written_is_a_warning_and_keeps_the_exit_code(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    cache = SYSFS / "metaeval" / "mutate-cache.json"
    result = mutate("--cache", str(cache))
    assert result.exit_code == ExitCode.FINDINGS, result.output  # the survivor's code
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    # the last run's survivors go beside the cache, and cannot be written either
    assert sorted(w.partition(": cannot write: ")[0] for w in warnings) == sorted([
        f"warning: {cache.with_name('last-run-findings.json')}",
        f"warning: {cache}", f"warning: {cache.with_name('mutate-scan-cache.json')}"])
    assert "error" not in result.stderr
    assert (shop_here / ".metaeval" / "mutation-report.json").is_file()


def test_a_full_disk_loses_no_result_and_leaves_no_temporary_file(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    monkeypatch.setattr("metaeval.files.os.fsync", full_disk)
    result = mutate()
    assert_shown_then_failed(result, shop_here / ".metaeval" / "mutation-report.json")
    # 2 caches, the last run's survivors, the report
    assert result.stderr.count("No space left on device (ENOSPC)") == 4
    assert "'metaeval findings' will not see this run's survivors" in result.stderr
    assert os.listdir(shop_here / ".metaeval") == []


def test_a_good_run_writes_every_file_and_says_nothing_on_stderr(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The mirror of the cases above: the same run, every path writable.
    monkeypatch.setattr(session, "run_mutants", FakeRunner())
    findings, sarif = shop_here / "findings.json", shop_here / "out" / "run.sarif"
    result = mutate("--baseline", str(findings), "--update-baseline", "--sarif", str(sarif))
    assert result.exit_code == ExitCode.OK, result.output
    assert without_steps(result.stderr) == ""  # what it did before the run, and no more
    assert findings.is_file() and sarif.is_file()
    assert sorted(os.listdir(shop_here / ".metaeval")) == [
        "last-run-findings.json", "mutate-cache.json", "mutate-scan-cache.json",
        "mutation-report.json"]


# --- a full temp dir: the scratch directory ----------------------------------------------


@pytest.mark.parametrize("isolation", [Isolation.FORK, Isolation.SUBPROCESS])
def test_a_temp_dir_that_cannot_be_written_is_a_void_run_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolation: Isolation) -> None:
    root = calc_project(tmp_path, "from calc import double\n\n\ndef test_double():\n"
                                  "    assert double(2) == 4\n")
    monkeypatch.chdir(root)
    monkeypatch.setattr(tempfile, "mkdtemp", full_disk)
    outcome = rendered_run(MutateRequest(report_path=Path("r.json"), no_cache=True,
                                         isolation=isolation))
    assert outcome.code is ExitCode.VOID
    (why,) = outcome.after
    assert why.stderr
    assert why.text == (f"error: cannot write the scratch files in {tempfile.gettempdir()}: "
                        "No space left on device; free space there, or point TMPDIR at a "
                        "directory that has room")
    assert outcome.run is None and not (root / "r.json").exists()


def test_a_temp_dir_that_fills_up_mid_run_is_a_void_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = calc_project(tmp_path, "from calc import double\n\n\ndef test_double():\n"
                                  "    assert double(2) == 4\n")
    monkeypatch.chdir(root)
    write = ChildSpec.write
    scratch: list[Path] = []

    def fills_up(spec: ChildSpec, path: Path) -> None:
        scratch.append(path.parent)
        if spec.task.value in ("rewrite", "patch"):  # the baseline and the check went in
            full_disk()
        write(spec, path)

    monkeypatch.setattr(ChildSpec, "write", fills_up)
    outcome = rendered_run(MutateRequest(paths=("calc.py",), report_path=Path("r.json"),
                                         no_cache=True, isolation=Isolation.SUBPROCESS,
                                         jobs=2))
    assert outcome.code is ExitCode.VOID
    assert outcome.after[0].text.startswith(f"error: cannot write the scratch files in "
                                            f"{scratch[0]}: No space left on device")
    assert not scratch[0].exists()  # removed on the way out


def test_a_report_linked_to_a_source_file_never_overwrites_it(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A branch commits .metaeval/mutation-report.json -> ../shop/pricing.py.
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    source = shop_here / "shop" / "pricing.py"
    before = source.read_bytes()
    report = shop_here / ".metaeval" / "mutation-report.json"
    report.parent.mkdir()
    report.symlink_to(Path("..") / "shop" / "pricing.py")
    result = mutate("--no-cache")
    assert_shown_then_failed(result, report)
    assert "is a symbolic link; metaeval writes no file of its own through one" in result.stderr
    assert source.read_bytes() == before and report.is_symlink()


def test_a_report_named_as_a_link_inside_the_repository_is_refused(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
        ) -> None:
    # A pull request commits the report path as a link to a file outside the checkout
    # (a dangling one would even have its folders made): the workflow must not follow.
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    outside = tmp_path_factory.mktemp("outside")
    (outside / "victim.json").write_text("keep\n", encoding="utf-8")
    (shop_here / "latest.json").symlink_to(outside / "victim.json")
    (shop_here / "dangling.json").symlink_to(outside / "made" / "by" / "it.json")
    for name in ("latest.json", "dangling.json"):
        result = mutate("--no-cache", "--report", name)
        # refused with the outputs' other checks, before any mutant runs
        assert result.exit_code == ExitCode.BAD_INPUT, result.output
        assert f"{shop_here / name} is a symbolic link inside the repository" in result.stderr
        assert "Traceback" not in result.output
    assert (outside / "victim.json").read_text(encoding="utf-8") == "keep\n"
    assert not (outside / "made").exists()


def test_a_report_linked_outside_any_repository_is_written_through_the_link(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
        ) -> None:
    # The "no": a link the user keeps outside a repository is theirs to keep.
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    outside = tmp_path_factory.mktemp("reports")
    (outside / "latest.json").symlink_to(outside / "run.json")
    result = mutate("--no-cache", "--report", str(outside / "latest.json"))
    assert result.exit_code == ExitCode.FINDINGS, result.output
    assert (outside / "run.json").is_file() and (outside / "latest.json").is_symlink()


def test_a_report_over_a_fifo_is_refused_not_replaced(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", FakeRunner(survivors=[SURVIVOR]))
    os.mkfifo(shop_here / "report.json")
    runner = FakeRunner(survivors=[SURVIVOR])
    monkeypatch.setattr(session, "run_mutants", runner)
    result = mutate("--no-cache", "--report", "report.json")
    # refused with the outputs' other checks, before any mutant runs
    assert result.exit_code == ExitCode.BAD_INPUT and runner.calls == [], result.output
    assert "it is a fifo; expected a regular file" in result.stderr
    assert (shop_here / "report.json").is_fifo()


def test_a_report_over_a_target_is_refused_before_any_mutant_runs(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "run_mutants", never_run)
    source = shop_here / "shop" / "pricing.py"
    before = source.read_bytes()
    result = mutate("--report", "shop/pricing.py")
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert without_steps(result.stderr) == (f"error: --report {source}: is also an input "
                                            "(PATHS); refusing to overwrite it\n")
    assert source.read_bytes() == before
    findings = shop_here / "mutants" / "findings.json"
    findings.parent.mkdir(exist_ok=True)
    findings.write_text('{"version": 1, "findings": []}\n', encoding="utf-8")
    result = mutate("--sarif", "mutants/findings.json")
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "--sarif mutants/findings.json: is also an input (--baseline)" in result.stderr
