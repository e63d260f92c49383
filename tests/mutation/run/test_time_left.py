"""The time left of a run: each mutant left weighed by its tests' baseline seconds,
calibrated by what the finished ones cost, not by how many are done."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from metaeval.mutation.coverage import Coverage
from metaeval.mutation.find.targets import find_mutants
from metaeval.mutation.isolation.options import Isolation, RunOptions
from metaeval.mutation.model import Mutant, MutantKind, MutantResult, Span, Status
from metaeval.mutation.run.time_left import RECENT, Expected, TimeLeft, expected_costs
from metaeval.mutation.wire import CodeRun
from metaeval.report.progress import MutateProgress
from tests.builders import run_here
from tests.mutation.conftest import SUBPROCESS_SLOW, calc_project

LIMITS = "def clamp(quantity, limit=10):\n    if quantity > limit:\n        return limit\n" \
         "    return quantity\n\n\ndef never(x):\n    return -x\n"


def mutant(name: str, line: int, qualname: str = "clamp", columns: tuple[int, int] = (5, 20)
           ) -> Mutant:
    return Mutant(id=name, kind=MutantKind.REWRITE, operator="op", path="limits.py",
                  module="limits", qualname=qualname,
                  span=Span(line, columns[0], line, columns[1]),
                  original="", replacement="", mutated_source="")


def result(name: str, status: Status, in_tests: float, outside: float = 0.1) -> MutantResult:
    return MutantResult(mutant(name, 2), status, duration=in_tests + outside,
                        in_tests=in_tests)


class Planted:
    """A run on a fake clock: ``jobs`` workers, each taking the next mutant as soon as
    it is free (after ``gap`` seconds of the parent's), the clock at each finish."""

    def __init__(self, jobs: int, gap: float = 0.0) -> None:
        self.free, self.gap, self.now = [0.0] * jobs, gap, 0.0

    def clock(self) -> float:
        return self.now

    def finish(self, left: TimeLeft, done: MutantResult) -> None:
        worker = self.free.index(min(self.free))
        self.free[worker] += self.gap + done.duration
        self.now = max(self.now, self.free[worker])
        left.finished(done)


def test_a_mutant_costs_its_fastest_selected_test_and_then_the_others(tmp_path: Path) -> None:
    (tmp_path / "limits.py").write_text(LIMITS, encoding="utf-8")
    # small ran lines 2 and 4, large lines 2 and 3; never() ran under no test.
    coverage = Coverage.from_runs(tmp_path, (CodeRun(
        "limits", "limits.py", 1, "clamp", ("t::small", "t::large"),
        (((2,), (0, 1)), ((4,), (0,)), ((3,), (1,)))),))
    durations = {"t::small": 0.5, "t::large": 3.0, "t::other": 7.0}
    costs = expected_costs([mutant("both", 2), mutant("large", 3), mutant("small", 4),
                            mutant("never", 8, "never", (12, 14))], coverage, durations)
    assert costs == {"both": Expected(0.5, 3.0, tests=2), "large": Expected(3.0, 0.0),
                     "small": Expected(0.5, 0.0), "never": Expected(0.0, 0.0)}


def test_tests_the_record_did_not_see_through_are_every_mutants(tmp_path: Path) -> None:
    # A test that replaced the tracer runs for every mutant, as the warm runner
    # selects it: left out, a child running it would look 10x over its tests, and
    # that share (on metaeval itself, with most tests unseen) made hours of seconds.
    (tmp_path / "limits.py").write_text(LIMITS, encoding="utf-8")
    coverage = Coverage.from_runs(tmp_path, (CodeRun(
        "limits", "limits.py", 1, "clamp", ("t::small",), (((2, 4), (0,)),)),))
    durations = {"t::small": 0.5, "t::unseen": 4.0}
    costs = expected_costs([mutant("both", 2), mutant("lines", 3),
                            mutant("never", 8, "never", (12, 14))], coverage, durations,
                           always=("t::unseen",))
    assert costs == {"both": Expected(0.5, 4.0, tests=2), "lines": Expected(4.0, 0.0),
                     "never": Expected(4.0, 0.0)}
    assert expected_costs([mutant("never", 8, "never", (12, 14))], coverage,
                          durations)["never"] == Expected(0.0, 0.0)


def test_the_first_slow_mutants_do_not_set_the_pace_of_the_quick_ones() -> None:
    # The run starts with the mutants whose tests take longest: three killed by a
    # 10 s test, then a hundred whose one test takes 0.1 s, and five no test
    # reaches. Counting would say 105 x 10 s / 2 jobs = 525 s.
    expected = {f"slow{i}": Expected(10.0, 0.0) for i in range(3)}
    expected |= {f"quick{i}": Expected(0.1, 0.0) for i in range(100)}
    expected |= {f"unreached{i}": Expected(0.0, 0.0) for i in range(5)}
    run = Planted(2)
    left = TimeLeft(expected, jobs=2, clock=run.clock)
    for i in range(2):
        run.finish(left, result(f"slow{i}", Status.KILLED, 10.0))
    assert left.seconds() is None  # two are no estimate yet
    run.finish(left, result("slow2", Status.KILLED, 10.0))
    # Each took its test's 10 s and 0.1 s outside; the unreached cost nothing:
    # (100 x 0.1 outside + 100 x 0.1 s of tests) / 2 jobs.
    assert left.seconds() == pytest.approx(10.0)


def test_survivors_run_every_test_and_the_cost_beyond_comes_from_the_finished() -> None:
    expected = {name: Expected(1.0, 4.0) for name in ("a", "b", "c", "d", "e")}
    run = Planted(1)
    left = TimeLeft(expected, jobs=1, clock=run.clock)
    run.finish(left, result("a", Status.KILLED, 2.0, outside=0.5))
    run.finish(left, result("b", Status.SURVIVED, 10.0, outside=0.5))
    run.finish(left, result("c", Status.KILLED, 2.0, outside=0.5))
    # Their tests took 14 s where 7 were expected (the killed ones their first
    # test's 1 s, the survivor all 5): twice. One survivor in three. Two left:
    # 2 x 0.5 outside + 2 x (2 x 1 s first + 8 s others / 3). (The median of each
    # one's share beyond all five seconds, 0.2, said 7.67 s.)
    assert left.seconds() == pytest.approx(1.0 + 2 * (2.0 + 8 / 3))
    run.finish(left, result("d", Status.TIMEOUT, 30.0))  # says nothing of its tests' cost
    assert left.seconds() == pytest.approx(0.5 + 2 * (1.0 + 4 / 3))


def test_the_cost_beyond_the_tests_comes_from_the_last_mutants_to_finish() -> None:
    # Module bodies first: every test reaches them, and a test a few seconds in
    # kills them (3 s beyond a fastest test of 1 ms, of 80 s in all). Then quick
    # mutants whose one test kills them at once: the ones left are like those.
    expected = {f"body{i}": Expected(0.001, 80.0) for i in range(30)}
    expected |= {f"quick{i}": Expected(0.01, 0.5) for i in range(RECENT + 10)}
    run = Planted(1)
    left = TimeLeft(expected, jobs=1, clock=run.clock)
    for i in range(30):
        run.finish(left, result(f"body{i}", Status.KILLED, 3.001, outside=0.0))
    for i in range(RECENT):
        run.finish(left, result(f"quick{i}", Status.KILLED, 0.01, outside=0.0))
    # The last RECENT cost nothing beyond their first test: 10 left x 0.01 s. (All of
    # them would say 30 x 3 s over 80 mutants beyond it: 1.1 s each.)
    assert left.seconds() == pytest.approx(0.1)


def test_module_bodies_tell_nothing_of_what_a_selected_mutant_costs() -> None:
    # Every test may reach a module body: it runs the suite, fastest first, until
    # one fails (3 s beyond its fastest test, of 80 s). A mutant with a selection
    # stops at its own first test: until one of those finishes, no estimate (on
    # metaeval itself, module bodies' 0.2 s to 136 s said 2x to 5x the time left).
    expected = {f"body{i}": Expected(0.001, 80.0, every=True) for i in range(7)}
    expected |= {f"picked{i}": Expected(0.01, 0.5) for i in range(20)}
    run = Planted(1)
    left = TimeLeft(expected, jobs=1, clock=run.clock)
    for i in range(5):
        run.finish(left, result(f"body{i}", Status.KILLED, 3.001, outside=0.0))
    assert left.seconds() is None
    run.finish(left, result("picked0", Status.KILLED, 0.01, outside=0.0))
    # Two bodies left at 3.001 s each, nineteen selected at their first test's 0.01 s.
    assert left.seconds() == pytest.approx(2 * 3.001 + 19 * 0.01)


def test_a_patch_mutant_costs_as_patch_mutants_did() -> None:
    # A patch mutant is put in place its own way (on metaeval itself, 3 s to 4 s
    # outside its tests where a rewrite mutant's child takes 0.2 s).
    expected = {f"patch{i}": Expected(0.01, 0.0, patch=True) for i in range(10)}
    expected |= {f"rewrite{i}": Expected(0.01, 0.0) for i in range(10)}
    run = Planted(1)
    left = TimeLeft(expected, jobs=1, clock=run.clock)
    for i in range(3):
        run.finish(left, result(f"rewrite{i}", Status.KILLED, 0.01, outside=0.2))
    assert left.seconds() is None  # no patch mutant ran yet
    run.finish(left, result("patch0", Status.KILLED, 0.01, outside=3.5))
    assert left.seconds() == pytest.approx(9 * 3.51 + 7 * 0.21)


def test_from_halfway_the_estimate_is_within_a_quarter_of_the_time_really_left() -> None:
    # A planted run on a fake clock: 2 workers, 200 quick mutants (50 ms in their
    # one test, 10 ms outside it), and 60 ms of the parent's between a child's end
    # and the next fork (classifying, recording, forking a large process on a
    # busy machine): no child's own time holds it, so the two workers are one.
    expected = {f"m{i}": Expected(0.05, 0.0) for i in range(200)}
    run = Planted(2, gap=0.06)
    left = TimeLeft(expected, jobs=2, clock=run.clock)
    shown: list[tuple[float, float, float]] = []
    for i in range(200):
        run.finish(left, result(f"m{i}", Status.KILLED, 0.05, outside=0.01))
        # From halfway to the last few (where one worker alone finishes the last).
        if 99 <= i < 190 and (seconds := left.seconds()) is not None:
            # Its work over the --jobs given, as the estimate said before it measured
            # how many children are at work at once.
            shown.append((run.now, seconds, seconds * left.workers() / left.jobs))
    end = run.now
    errors = [(seconds - (end - at)) / (end - at) for at, seconds, _ in shown]
    assert len(errors) == 91 and max(map(abs, errors)) <= 0.25
    at, _, by_jobs = shown[0]
    assert (by_jobs - (end - at)) / (end - at) == pytest.approx(-0.5, abs=0.02)


def test_the_pace_of_the_quick_children_at_the_end_is_their_own() -> None:
    # inspect_ai's shape: long children first, two at once (nothing else between),
    # then hundreds of quick ones beside which the parent's own time between two
    # children halves the pace. Counted since the first finish, the long ones' two
    # at once weigh on to the end, and the estimate says about half the time left
    # (52% short; on inspect_ai, 41% in the median from halfway).
    expected = {f"long{i}": Expected(10.0, 0.0) for i in range(20)}
    expected |= {f"quick{i}": Expected(0.05, 0.0) for i in range(1000)}
    run = Planted(2)
    left = TimeLeft(expected, jobs=2, clock=run.clock)
    for i in range(20):
        run.finish(left, result(f"long{i}", Status.KILLED, 10.0, outside=0.0))
    run.gap = 0.06
    shown: list[tuple[float, float]] = []
    for i in range(1000):
        run.finish(left, result(f"quick{i}", Status.KILLED, 0.05, outside=0.01))
        if 25 <= i < 990 and (seconds := left.seconds()) is not None:
            shown.append((run.now, seconds))
    end = run.now
    errors = [(seconds - (end - at)) / (end - at) for at, seconds in shown]
    assert len(errors) == 965 and max(map(abs, errors)) <= 0.25


def test_a_few_costly_kills_count_at_their_cost_not_at_the_median() -> None:
    # One mutant in three is killed by its last test (1.1 s), the others by their
    # first (0.1 s). The median of each one's share beyond its expected tests is
    # 0: the estimate said 0.11 s a mutant where 0.44 s was the mean, 75% short.
    expected = {f"m{i}": Expected(0.1, 1.0) for i in range(300)}
    run = Planted(1)
    left = TimeLeft(expected, jobs=1, clock=run.clock)
    shown: list[tuple[float, float]] = []
    for i in range(300):
        run.finish(left, result(f"m{i}", Status.KILLED, 1.1 if i % 3 == 2 else 0.1,
                                outside=0.01))
        if 150 <= i < 290 and (seconds := left.seconds()) is not None:
            shown.append((run.now, seconds))
    end = run.now
    errors = [(seconds - (end - at)) / (end - at) for at, seconds in shown]
    assert len(errors) == 140 and max(map(abs, errors)) <= 0.25


def test_children_finishing_one_at_a_time_are_no_pace_until_each_worker_had_one() -> None:
    run = Planted(3)
    left = TimeLeft({f"m{i}": Expected(1.0, 0.0) for i in range(10)}, jobs=3, clock=run.clock)
    for i in range(3):
        run.finish(left, result(f"m{i}", Status.KILLED, 1.0))
    assert left.seconds() is None  # three answers, but no finish after the first's yet
    run.finish(left, result("m3", Status.KILLED, 1.0))
    # Counted from the first finish: 3 x 1.1 s of children in 1.1 s, three at once.
    assert left.workers() == pytest.approx(3.0)
    assert left.seconds() == pytest.approx(6 * 1.1 / 3)


def test_a_result_from_before_the_estimate_or_twice_changes_nothing() -> None:
    run = Planted(1)
    left = TimeLeft({name: Expected(1.0, 0.0) for name in "abcd"}, jobs=1, clock=run.clock)
    for name in "abc":
        run.finish(left, result(name, Status.KILLED, 1.0))
    before = left.seconds()
    left.finished(result("a", Status.KILLED, 50.0))  # the same mutant again
    left.finished(result("cached", Status.KILLED, 50.0))  # not one it expected
    assert left.seconds() == before == pytest.approx(1.1)


def test_the_progress_shows_the_runners_estimate_once_it_has_one() -> None:
    out, ticks = io.StringIO(), iter(range(100))
    show = MutateProgress(out, terminal=True, clock=lambda: float(next(ticks)))
    run = Planted(1)
    left = TimeLeft({name: Expected(30.0, 0.0) for name in "abcdef"}, jobs=1, clock=run.clock)
    show.pace(left)
    for done, name in enumerate("abc", 1):
        run.finish(left, result(name, Status.KILLED, 30.0, outside=0.0))
        show(done, 6, result(name, Status.KILLED, 30.0))
    # A second a mutant by the clock: the count's pace would say 3 s.
    assert out.getvalue().split("\r")[-1] == "mutants 3/6 (killed 3) ~1m30s left\x1b[K"


class Watching:
    """A progress that keeps the estimate it is handed."""

    def __init__(self) -> None:
        self.estimates: list[TimeLeft] = []

    def __call__(self, done: int, total: int, result: MutantResult) -> None:
        pass

    def pace(self, left: TimeLeft) -> None:
        self.estimates.append(left)


SLOW_AND_QUICK = """\
    import time

    from calc import double


    def test_double():
        assert double(2) == 4


    def test_slowly():
        time.sleep(0.4)
        assert double(3) == 6
    """


@pytest.mark.parametrize("isolation", [Isolation.FORK, SUBPROCESS_SLOW])
def test_the_runner_weighs_each_mutant_by_its_tests_in_fork_isolation(
        tmp_path: Path, isolation: Isolation) -> None:
    root = calc_project(tmp_path, SLOW_AND_QUICK)
    watching = Watching()
    run = run_here(find_mutants(["calc.py"], root),
                      RunOptions(root, root / "mutants", jobs=1, isolation=isolation), watching)
    if isolation is Isolation.SUBPROCESS:  # no test's seconds: the count's pace
        assert watching.estimates == []
        return
    (estimate,) = watching.estimates
    doubling = [r.mutant.id for r in run.results if r.mutant.qualname == "double"]
    assert doubling and all(estimate.expected[m].first < 0.4 <= estimate.expected[m].rest
                            for m in doubling)
    assert estimate.left == set()  # every result reached it
    assert estimate.ran == sum(r.status in (Status.KILLED, Status.SURVIVED) for r in run.results)



def test_a_killed_mutant_costs_what_the_last_killed_cost_beyond_its_first_test() -> None:
    # inspect_ai's shape: mutants longest first (all their tests: 10 s down to 0.1 s),
    # one in three surviving; a child's first test costs 0.3 s where the baseline
    # said 1 ms (fixtures, first use), so a killed mutant costs 0.3 s in its tests
    # and a survivor 0.3 s more than its tests' seconds. Weighed by one ratio of sums
    # over the last to finish, killed and survived together, the survivors' seconds
    # drowned the killed ones' 0.3 s: from halfway the estimate was 16% to 39% short,
    # 35% in the median (on inspect_ai, 41%).
    seconds = [10 * 0.985 ** i for i in range(300)]
    expected = {f"m{i}": Expected(0.001, s - 0.001) for i, s in enumerate(seconds)}
    run = Planted(2)
    left = TimeLeft(expected, jobs=2, clock=run.clock)
    shown: list[tuple[float, float]] = []
    for i, s in enumerate(seconds):
        run.finish(left, result(f"m{i}", *((Status.SURVIVED, 0.3 + s) if i % 3 == 2
                                         else (Status.KILLED, 0.3))))
        if (estimate := left.seconds()) is not None:
            shown.append((run.now, estimate))
    end = run.now
    errors = [(estimate - (end - at)) / (end - at) for at, estimate in shown
              if at >= end / 2 and end - at >= 1.0]
    assert len(errors) > 200 and max(map(abs, errors)) <= 0.1


def test_a_killed_childs_cost_grows_with_its_tests_only_where_the_last_killed_show_it() -> None:
    # On metaeval itself a killed child with 300 tests ran 2 s to 8 s of them before
    # its killer, one with 10 tests 0.3 s; on jsonschema one with 3,000 tests was
    # killed as fast as one with 50. The same mutants left: ten of 11 tests each.
    left_over = {f"left{i}": Expected(0.001, 0.01, tests=11) for i in range(10)}
    seen = {f"seen{i}": Expected(0.001, 1.0, tests=n) for i, n in enumerate([11, 301] * 10)}
    # Grown with the tests: the cheapest (0.299 s beyond the first test) and the rest
    # spread over the tests after the first (10 x 3 s over 10 x 10 + 10 x 300).
    grown = 0.299 + 10 * 30 / 3100
    # Not grown (the larger selections killed faster): their mean, 0.399 s.
    for cost, each in (((0.3, 3.3), grown), ((0.5, 0.3), 0.399)):
        run = Planted(1)
        left = TimeLeft(seen | left_over, jobs=1, clock=run.clock)
        for i in range(20):
            run.finish(left, result(f"seen{i}", Status.KILLED, cost[i % 2] - 0.1, outside=0.1))
        seconds = left.seconds()
        assert seconds is not None
        assert seconds == pytest.approx(10 * (0.001 + each), rel=0.02)
    # Flat where it grew, the mean (1.8 s) would have said 4.5x the time left.
