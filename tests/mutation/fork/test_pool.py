"""A forked child's limits, worked out by hand: factor 2, constant 1."""

from __future__ import annotations

from metaeval.mutation.fork.pool import Limits, job_limits


def test_each_test_its_own_limit_and_the_cpu_its_tests_so_far_may_use() -> None:
    # Tests that took 0.5 s and 1.0 s: 0.5*2+1 and 1.0*2+1 each; by their ends
    # 0.5 s and 1.5 s in all: 2.0 and 4.0 CPU seconds; the whole child 4.0.
    assert job_limits([0.5, 1.0], 0.0, 2.0, 1.0) == Limits(4.0, (2.0, 3.0), (2.0, 4.0))


def test_a_child_that_executes_modules_again_counts_its_setup_in_every_test_once_in_cpu(
        ) -> None:
    # 0.25 s of import and collection: each test's own limit has it (collection
    # comes between tests), the running CPU total has it once.
    assert job_limits([0.5, 1.0], 0.25, 2.0, 1.0) == Limits(4.5, (2.5, 3.5), (2.5, 4.5))


def test_no_test_leaves_the_constant_and_the_setup() -> None:
    assert job_limits([], 0.5, 3.0, 2.0) == Limits(3.5)
