"""Which packages a warm runner reusing a ``--coverage`` file records, from the
packages the plan read in the file (the runner does not read the file again)."""

from __future__ import annotations

from pathlib import Path

from metaeval.mutation.caches.coverage_file import covering_packages

FILE = Path("cov.json")


def test_a_file_traced_for_every_package_of_the_run_gives_its_own_packages() -> None:
    # A shard's share may touch fewer packages than the plan: the file's are recorded.
    assert covering_packages(FILE, ("shop", "tools"), ("shop",)) == (("shop", "tools"), "")
    assert covering_packages(FILE, ("shop",), ("shop",)) == (("shop",), "")


def test_a_file_missing_a_package_of_the_run_is_said_and_every_test_traced() -> None:
    packages, warning = covering_packages(FILE, ("shop",), ("shop", "tools"))
    assert packages == ("shop", "tools")
    assert warning == ("warning: cov.json: traced for the packages ['shop'], this run "
                       "mutates ['shop', 'tools']; tracing every test")
