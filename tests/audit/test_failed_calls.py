"""When most calls to a live judge fail, the audit is void and names the errors;
when at most half fail, the failures are unscored verdicts and the audit stands."""

from __future__ import annotations

from metaeval.audit.collect import Calls, ask_judge
from metaeval.audit.judge_decision import AuditSource, AuditVerdict, audit_judge
from metaeval.audit.verdict import failed_calls
from metaeval.judges.base import JudgeReply
from metaeval.judges.fakes import SteadyJudge
from metaeval.loaders.judge_items import JudgeItems, PairItem


def test_more_than_half_failed_is_the_cause_named_with_counts() -> None:
    calls = Calls(made=10, failed=6, failures=(("refused", 4), ("timed out", 1),
                                               ("HTTP 500", 1)))
    reason = failed_calls(calls)
    assert reason is not None
    assert "6 of 10 calls failed" in reason
    assert "'refused' x4; 'timed out' x1; 'HTTP 500' x1" in reason


def test_half_or_fewer_failed_is_no_cause() -> None:
    assert failed_calls(Calls(made=10, failed=5, failures=(("refused", 5),))) is None
    assert failed_calls(Calls(made=0, cached=0, failed=0)) is None
    # Cached replies were answers too: 6 failed of 4 made + 8 cached is half of none.
    assert failed_calls(Calls(made=6, cached=8, failed=6, failures=(("x", 6),))) is None


def test_only_the_first_few_distinct_errors_are_named() -> None:
    failures = tuple((f"error {n}", 1) for n in range(5))
    reason = failed_calls(Calls(made=5, failed=5, failures=failures))
    assert reason is not None
    assert "'error 2' x1" in reason and "'error 3'" not in reason
    assert "and 2 other error(s)" in reason


class _Flaky:
    """The steady judge, but every call after the first ``answers`` raises."""

    def __init__(self, answers: int) -> None:
        self.answers, self.calls, self.steady = answers, 0, SteadyJudge()
        self.identity, self.scale, self.modes = (self.steady.identity, self.steady.scale,
                                                 self.steady.modes)

    def score(self, prompt: str, response: str, reference: str | None = None, *,
              criterion: str = "", sample: int = 0) -> JudgeReply:
        raise AssertionError("pairs only")

    def compare(self, prompt: str, response_a: str, response_b: str, *,
                reference: str | None = None, sample: int = 0) -> JudgeReply:
        self.calls += 1
        if self.calls > self.answers:
            raise ConnectionRefusedError(111, "Connection refused")
        return self.steady.compare(prompt, response_a, response_b, reference=reference,
                                   sample=sample)


def _pairs(n: int) -> JudgeItems:
    return JudgeItems(pairwise=tuple(
        PairItem(f"p{i}", "Which is the capital of France?", "Paris is the capital.",
                 "Lyon, I think.", None, "a", f"t:{i}") for i in range(n)))


def test_ask_judge_counts_the_distinct_failure_reasons() -> None:
    table = ask_judge(_Flaky(answers=2), _pairs(3))  # 6 questions: 2 answered, 4 raised
    assert (table.calls.made, table.calls.failed) == (6, 4)
    assert table.calls.failures == (
        ("judge raised ConnectionRefusedError(111, 'Connection refused')", 4),)


def test_a_live_audit_of_a_mostly_failing_judge_is_void_and_a_recorded_one_is_not() -> None:
    items = _pairs(10)
    judge = _Flaky(answers=4)  # 4 of 20 answered
    table = ask_judge(judge, items)
    live = audit_judge(judge.identity, judge.scale, items, table, source=AuditSource.LIVE)
    assert live.verdict is AuditVerdict.VOID
    assert live.reasons[0].startswith("the judge could not be reached: 16 of 20 calls failed")
    # The same table read back from logs made no call: nothing was unreachable.
    recorded = audit_judge(judge.identity, judge.scale, items, table,
                           source=AuditSource.RECORDED)
    assert recorded.verdict is not AuditVerdict.VOID

    steady = _Flaky(answers=10)  # half answered: unscored verdicts, not a void audit
    half = audit_judge(steady.identity, steady.scale, items, ask_judge(steady, items),
                       source=AuditSource.LIVE)
    assert half.verdict is AuditVerdict.REPORT_ONLY
    assert not any("could not be reached" in r for r in half.reasons)
