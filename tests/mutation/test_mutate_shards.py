"""End to end: the fixture shop as one run, and as 3 shards merged, status for status.

Four runs of the shop in all (each a few seconds); the merge runs no mutant.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mutation.conftest import copy_shop, mutate_in, statuses, tree_digest

METAEVAL = str(Path(sys.executable).parent / "metaeval")


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The shop, its single run's report, and the directory of its 3 shards' manifests."""
    scratch = tmp_path_factory.mktemp("shards")
    project = copy_shop(scratch)
    single = mutate_in(project, "--report", str(scratch / "single.json"),
                     "--write-timings", str(scratch / "timings.json"))
    assert single.returncode == 1, single.stderr
    before = tree_digest(project)
    for k in (1, 2, 3):
        done = mutate_in(project, "--shard", f"{k}/3", "--shard-out", str(scratch / f"out/s{k}"),
                       "--report", str(scratch / f"r{k}.json"),
                       "--timings", str(scratch / "timings.json"))
        assert done.returncode in (0, 1), done.stderr
        assert f"--shard {k}/3:" in done.stderr and "balanced by the timings in" in done.stderr
    assert tree_digest(project) == before
    return project, scratch / "single.json", scratch / "out"


@pytest.mark.slow  # four mutate runs (CI: pytest -m slow)
def test_three_merged_shards_equal_one_run(sharded: tuple[Path, Path, Path],
                                           tmp_path: Path) -> None:
    project, single, out = sharded
    merged = mutate_in(project, "--merge", str(out), "--format", "json",
                     "--report", str(tmp_path / "merged.json"),
                     "--sarif", str(tmp_path / "merged.sarif"),
                     "--write-timings", str(tmp_path / "timings.json"))
    assert merged.returncode == 1, merged.stderr  # as the single run: survivors
    assert "--merge: 3 shards, 16 mutants" in merged.stderr
    want = statuses(json.loads(single.read_text()))
    assert len(want) == 16
    assert statuses(json.loads(merged.stdout)) == want
    assert statuses(json.loads((tmp_path / "merged.json").read_text())) == want
    assert json.loads((tmp_path / "merged.sarif").read_text())["runs"][0]["results"]
    timings = json.loads((tmp_path / "timings.json").read_text())
    assert set(timings) == {i for i, s in want.items() if s not in ("Ignored", "NoCoverage")}
    shares = [json.loads(p.read_text())["assigned"] for p in sorted(out.rglob("*.json"))]
    assert sorted(i for s in shares for i in s) == sorted(want)
    assert all(shares)


@pytest.mark.slow  # four mutate runs (CI: pytest -m slow)
def test_a_missing_or_doubled_shard_fails_the_merge_naming_it(
        sharded: tuple[Path, Path, Path], tmp_path: Path) -> None:
    project, _, out = sharded
    partial = tmp_path / "partial"
    shutil.copytree(out, partial)
    shutil.rmtree(partial / "s2")
    done = mutate_in(project, "--merge", str(partial))
    assert done.returncode == 3
    assert "error: --merge: shard 2/3 is missing (no shard-2-of-3.json)" in done.stderr
    assert "Killed" not in done.stdout
    shutil.copytree(out / "s1", partial / "s2")
    done = mutate_in(project, "--merge", str(partial))
    assert done.returncode == 3 and "shard 1/3 is there 2 times" in done.stderr


@pytest.mark.slow  # four mutate runs (CI: pytest -m slow)
def test_a_merge_in_a_changed_checkout_is_from_another_plan(
        sharded: tuple[Path, Path, Path], tmp_path: Path) -> None:
    project, _, out = sharded
    changed = tmp_path / "changed"
    shutil.copytree(project, changed)
    test_file = next(changed.rglob("test_*.py"))
    test_file.write_text(test_file.read_text() + "\n# edited\n")
    done = mutate_in(changed, "--merge", str(out))
    assert done.returncode == 3
    assert done.stderr.count("is from another plan") == 3


@pytest.mark.parametrize("value", ["0/3", "4/3", "two/3"])
def test_a_bad_shard_exits_2_naming_it(value: str, tmp_path: Path) -> None:
    done = mutate_in(tmp_path, "--shard", value)
    assert done.returncode == 2
    assert f"got '{value}'; expected k/n" in done.stderr


@pytest.mark.slow  # four mutate runs (CI: pytest -m slow)
def test_shards_run_one_after_another_in_one_checkout_merge(tmp_path: Path) -> None:
    # With the result cache on: the first shard writes it; the second once balanced
    # by the durations in it, split differently, and the merge refused the shares.
    project = copy_shop(tmp_path)
    said = []
    for k in (1, 2):
        done = subprocess.run([METAEVAL, "mutate", "--jobs", "2", "--shard", f"{k}/2",
                               "--shard-out", str(tmp_path / f"out/s{k}"),
                               "--report", str(tmp_path / f"r{k}.json")],
                              cwd=project, capture_output=True, text=True, timeout=180)
        assert done.returncode in (0, 1), done.stderr
        said.append(done.stderr)
    assert (project / ".metaeval" / "mutate-cache.json").is_file()
    merged = mutate_in(project, "--merge", str(tmp_path / "out"), "--format", "json")
    assert merged.returncode == 1, merged.stderr  # the shop's survivors, as one run
    assert "--merge: 2 shards, 16 mutants" in merged.stderr
    assert len(statuses(json.loads(merged.stdout))) == 16
    assert all("balanced by a stable hash of each mutant id" in s for s in said)


def test_a_shard_whose_manifest_cannot_be_written_says_why_and_runs_nothing(
        tmp_path: Path) -> None:
    project = copy_shop(tmp_path)
    (tmp_path / "blocker").write_text("a file where the manifest's directory would go\n",
                                      encoding="utf-8")
    done = mutate_in(project, "--shard", "1/2", "--shard-out", str(tmp_path / "blocker" / "out"))
    assert done.returncode == 2
    (error,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert str(tmp_path / "blocker") in error
    assert "Killed" not in done.stdout  # no table: no mutant ran
