"""Smoke test of benchmarks/bench_shards.py: flags and the simulation's arithmetic.

Nothing is installed and no shard is run; the benchmark itself is run by hand.
"""

from __future__ import annotations

import pytest

from tests.benchmarks.conftest import load_benchmark

bs = load_benchmark("bench_shards")


def test_flags_default_to_itsdangerous_two_and_four_shards_both_balances() -> None:
    args = bs.parse_args([])
    assert (args.runs, args.chosen, args.shards, args.balance) == (
        3, ["itsdangerous"], [2, 4], ["time", "count"])
    assert bs.parse_args(["--target", "both", "--balance", "time"]).chosen == [
        "itsdangerous", "metaeval"]


@pytest.mark.parametrize("flags", [["--shards", "1,4"], ["--shards", "x"],
                                   ["--balance", "speed"], ["--runs", "0"]])
def test_bad_flags_are_refused(flags: list[str]) -> None:
    with pytest.raises(SystemExit):
        bs.parse_args(flags)


def test_spread_is_the_slowest_over_the_mean() -> None:
    assert bs.spread([2.0, 2.0]) == 1.0
    assert bs.spread([1.0, 3.0]) == 1.5


def test_a_shard_that_ran_nothing_traced_nothing() -> None:
    assert bs._traced('{"timing": {"traced_tests": 3}}') == 3
    assert bs._traced("nothing to run: shard 4/4 has no mutant of the 3") == 0


def test_the_simulation_passes_lpt_and_shows_count_balanced_worse(
        capsys: pytest.CaptureFixture[str]) -> None:
    # One heavy mutant per 32 light ones: LPT spreads the heavy ones, a split by
    # count may stack them.
    costs = {f"m{i:04}": (10.0 if i % 33 == 0 else 1.0) for i in range(33 * 64)}
    (check,) = bs.simulate("made up", costs)
    assert check[1] is True
    out = capsys.readouterr().out
    assert "simulation, made up: 2112 mutants" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines()
            if line.split() and line.split()[0] in ("8", "32", "128")}
    assert set(rows) == {"8", "32", "128"}
    for n, row in rows.items():
        ideal, lpt, by_count = float(row[1]), float(row[2]), float(row[4])
        assert ideal == pytest.approx(sum(costs.values()) / int(n), abs=0.01)
        assert ideal <= lpt <= by_count + 1e-9
