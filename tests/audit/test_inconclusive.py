"""Inconclusive is a verdict: an interval that holds its bar cannot decide it, the
audit says about how many more labelled items would, exits 4, and gate fails it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from metaeval.audit.bars import Bars
from metaeval.audit.bias_probes import ProbeStatus
from metaeval.audit.collect import VerdictTable
from metaeval.audit.controls import ControlCheck, Controls
from metaeval.audit.judge_decision import AuditSettings, AuditSource, AuditVerdict, audit_judge
from metaeval.audit.metrics import Interval, kappa, kappa_interval
from metaeval.audit.power import MAX_MORE, Side, more_items, more_said, side, undecided
from metaeval.cli import main
from metaeval.contract import Outcome
from metaeval.errors import ExitCode
from metaeval.judges.base import DEFAULT_SCALE, JudgeIdentity, Mode
from metaeval.judges.fakes import SteadyJudge
from metaeval.loaders.judge_items import JudgeItems, Order, PointItem, Slot, Variant

TOPICS = ["refund", "shipping", "warranty", "password", "invoice", "delivery", "account",
          "discount", "exchange", "battery", "screen", "charger", "subscription", "coupon",
          "tracking", "receipt", "cancel", "upgrade", "storage", "printer"]


@dataclass(frozen=True, slots=True)
class PointSteady(SteadyJudge):
    """The steady judge, audited for pointwise use only (no pairwise probe to run)."""

    modes: frozenset[Mode] = field(default_factory=lambda: frozenset({Mode.POINTWISE}))


def items_file(path: Path, wrong: tuple[int, ...]) -> Path:
    """20 items, 10 people passed and 10 failed; the steady judge passes a response that
    repeats the reference and fails one that does not, so ``wrong`` plants its errors."""
    lines = []
    for i, topic in enumerate(TOPICS):
        human = "pass" if i < 10 else "fail"
        reference = f"The {topic} policy allows a full {topic} request within thirty days."
        good = (i < 10) != (i in wrong)
        response = reference if good else f"Please ask someone else about {topic} today."
        lines.append(json.dumps({"id": f"q{i:02d}", "prompt": f"What is the {topic} policy?",
                                 "reference": reference, "response": response,
                                 "label": human}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.metaeval]\nallowed_modules = ["tests"]\n')
    return tmp_path


JUDGE = "tests.audit.test_inconclusive:PointSteady"
# TPR and TNR are not what these tests are about: bars 20 items can decide.
BARS = ("--tpr-bar", "0.4", "--tnr-bar", "0.4")


def audit(*args: str) -> Result:
    return CliRunner().invoke(main, ["judge-audit", "--judge", JUDGE, "--no-cache", *args])


# --- the measure against its bar ------------------------------------------------------


def test_an_interval_holding_the_bar_is_open_and_one_beside_it_decides() -> None:
    assert side(0.7, Interval(0.3, 1.0), 0.6) is Side.OPEN
    assert side(0.9, Interval(0.7, 1.0), 0.6) is Side.MET
    assert side(0.3, Interval(0.1, 0.5), 0.6) is Side.MISSED
    # a percentile interval that leaves its estimate out is never read as a pass
    assert side(0.55, Interval(0.61, 0.9), 0.6) is Side.MISSED


def test_more_items_is_the_power_computation() -> None:
    # 20 * (0.2 * (1.96 + 0.84) / (1.96 * 0.1)) ** 2 = 163.5 items in all: 144 more
    assert more_items(0.7, Interval(0.5, 0.9), 0.6, 20) == 144
    # further from the bar, fewer; on the bar, no count
    assert (more_items(0.7, Interval(0.5, 0.9), 0.55, 20) or MAX_MORE) < 144
    assert more_items(0.6, Interval(0.4, 0.8), 0.6, 20) is None
    assert more_said(None).startswith("no number")
    assert more_said(MAX_MORE) == f"more than {MAX_MORE} more labelled items"
    assert undecided("kappa", 0.7, Interval(0.5, 0.9), 0.6, 20).said().endswith(
        "about 144 more labelled items would likely decide it")


# --- the verdict ----------------------------------------------------------------------


def test_twenty_items_whose_kappa_interval_holds_the_bar_are_inconclusive(
        project: Path) -> None:
    items = items_file(project / "items.ndjson", wrong=(0, 10, 11))
    done = audit("--items", str(items), *BARS)
    assert done.exit_code == ExitCode.INCONCLUSIVE, done.output
    assert int(ExitCode.INCONCLUSIVE) == 4  # the code DESIGN.md and the README give it
    document = json.loads(audit("--items", str(items), *BARS, "--format", "json").output)
    block = document["inconclusive"]
    [kappa_open] = block["measures"]
    assert kappa_open["measure"] == "kappa" and kappa_open["n"] == 20
    assert kappa_open["low"] < 0.6 < kappa_open["high"]
    more = block["more_items"]
    assert isinstance(more, int) and more > 0
    assert f"verdict: inconclusive: about {more} more labelled items" in done.output
    assert document["verdict"] == "inconclusive"
    assert block["labels"] == {"pass": 10, "fail": 10} and block["unlabelled"] == {}


def test_a_judge_right_on_all_twenty_may_gate(project: Path) -> None:
    done = audit("--items", str(items_file(project / "items.ndjson", wrong=())), *BARS)
    assert done.exit_code == ExitCode.OK, done.output
    assert "verdict: may gate" in done.output and "inconclusive" not in done.output


def test_a_clear_miss_stays_report_only_beside_an_open_kappa(project: Path) -> None:
    # TNR 0.80 [0.49, 0.94] lies wholly below 0.99: missed, whatever kappa's interval says
    done = audit("--items", str(items_file(project / "items.ndjson", wrong=(0, 10, 11))),
                 "--tpr-bar", "0.4", "--tnr-bar", "0.99")
    assert done.exit_code == ExitCode.FINDINGS, done.output
    assert "verdict: report only" in done.output
    assert "TNR 0.80 < 0.99" in done.output and "kappa 0.70 [" in done.output


def test_a_failed_control_voids_an_audit_that_is_otherwise_inconclusive() -> None:
    items = tuple(PointItem(f"q{i}", "p", "r", None, "pass" if i < 10 else "fail", None,
                            f"items.ndjson:{i + 1}") for i in range(20))
    judged = [i < 10 for i in range(20)]
    judged[0], judged[10], judged[11] = False, True, True
    table = VerdictTable({Slot(f"q{i}", Variant.ORIGINAL, Order.AB): (v,)
                          for i, v in enumerate(judged)})
    broken = Controls((ControlCheck("biased", "length", ProbeStatus.FOUND, ProbeStatus.CLEAN,
                                    "nothing found"),))
    fine = Controls(())
    identity = JudgeIdentity("mine", "recorded")
    settings = AuditSettings(Bars(tpr=0.4, tnr=0.4))
    # audited for no use: no probe is required, so only the interval and the control speak
    open_, void = (audit_judge(identity, DEFAULT_SCALE, JudgeItems(items), table,
                               source=AuditSource.RECORDED, modes=frozenset(),
                               controls=controls, settings=settings)
                   for controls in (fine, broken))
    assert open_.verdict is AuditVerdict.INCONCLUSIVE
    assert void.verdict is AuditVerdict.VOID


# --- gate -----------------------------------------------------------------------------


def test_gate_fails_an_inconclusive_audit_saying_how_many_more(project: Path) -> None:
    items = items_file(project / "items.ndjson", wrong=(0, 10, 11))
    result = audit("--items", str(items), *BARS, "--format", "json")
    more = json.loads(result.output)["inconclusive"]["more_items"]
    (project / "audit.json").write_text(result.output)
    for allow in ("false", "true"):  # allow_report_only never lets it through
        (project / "pyproject.toml").write_text(
            f"[tool.metaeval.gate]\nallow_report_only = {allow}\n")
        out = CliRunner().invoke(main, ["gate", "audit.json"])
        assert out.exit_code == ExitCode.FINDINGS, out.output
        assert "inconclusive" in out.output
        assert f"about {more} more labelled items" in out.output


# --- the power computation holds up -----------------------------------------------------

BAR = 0.6
START = 20
TRIALS = 40
MOST = 1500
"""A trial needing more further items than this counts as not settled (conservative)."""


def draw_items(rng: np.random.Generator, n: int, accuracy: float
               ) -> tuple[list[Outcome], list[Outcome]]:
    """``n`` items from a source: half pass for people; the judge right with ``accuracy``."""
    human = [Outcome.PASS if rng.random() < 0.5 else Outcome.FAIL for _ in range(n)]
    judged = [h if rng.random() < accuracy else
              (Outcome.FAIL if h is Outcome.PASS else Outcome.PASS) for h in human]
    return human, judged


def settle_rate(accuracy: float, seed: int) -> float:
    """Of the inconclusive 20-item audits drawn from the source, the share that N more
    items from the same source settle (the interval no longer holds the bar)."""
    rng = np.random.default_rng(seed)
    settled = trials = 0
    while trials < TRIALS:
        human, judged = draw_items(rng, START, accuracy)
        interval = kappa_interval(human, judged)
        value = kappa(human, judged).value
        if side(value, interval, BAR) is not Side.OPEN:
            continue
        trials += 1
        more = more_items(value, interval, BAR, START)
        if more is None or more > MOST:
            continue
        more_human, more_judged = draw_items(rng, more, accuracy)
        human, judged = human + more_human, judged + more_judged
        after = kappa_interval(human, judged)
        settled += side(kappa(human, judged).value, after, BAR) is not Side.OPEN
    return settled / trials


@pytest.mark.parametrize(("accuracy", "at_least"), [(0.95, 0.6), (0.65, 0.6)])
def test_that_many_more_labels_from_the_same_source_settle_it_more_often_than_not(
        accuracy: float, at_least: float) -> None:
    # Measured (seed 7): 0.95 accuracy (true kappa 0.90, above the bar) settles 37 of 40
    # inconclusive 20-item audits (0.925); 0.65 accuracy (kappa 0.30, below it) 37 of 40
    # too. The nominal power is 0.8; the bar asked here, 0.6, leaves room for the noise
    # of another seed.
    assert settle_rate(accuracy, seed=7) >= at_least


# --- the alternative annotator test, short of items -------------------------------------


def test_an_alt_test_short_of_items_is_counted_by_simulation() -> None:
    from metaeval.audit.alt_test import alt_test, more_for_alt
    from metaeval.audit.annotators import Panel
    from metaeval.audit.rater_agreement import Level
    from metaeval.judges.base import Scale
    from metaeval.loaders.judge_labels import Label

    truth = [("a", "b")[i % 2] for i in range(10)]
    flip = {"a": "b", "b": "a"}
    humans: dict[str, dict[str, Label]] = {
        name: {str(i): flip[t] if i % wrong == 0 else t for i, t in enumerate(truth)}
        for name, wrong in (("x", 3), ("y", 4), ("z", 5))}
    judge: dict[str, Label | None] = {str(i): t for i, t in enumerate(truth)}
    short = alt_test(Panel("pairwise", Level.NOMINAL, humans, judge, Scale(1, 5, 4)),
                     0.1, "test")
    assert not short.ran and short.more is not None and short.more > 0
    # nothing observed tells: no count
    assert more_for_alt({"x": [], "y": []}, 0.1) is None
    # The judge wins every duel (W_f 1, W_h 0): the test passes at any size, so it decides
    # at the first, 30 items each, and the three annotators lack 20 each.
    assert more_for_alt({n: [(1, 0)] * 10 for n in "xyz"}, 0.1) == 60
    # it loses every one: it fails at any size, decided as soon
    assert more_for_alt({n: [(0, 1)] * 10 for n in "xyz"}, 0.1) == 60
    # two annotators only: the third is drawn from the duels seen, and lacks all 30
    assert more_for_alt({n: [(1, 0)] * 10 for n in "xy"}, 0.1) == 70


def test_the_pairwise_kappa_interval_is_the_pass_fail_one_on_two_labels() -> None:
    from metaeval.audit.metrics import nominal_kappa, nominal_kappa_interval

    rng = np.random.default_rng(3)
    human = ["a" if rng.random() < 0.6 else "b" for _ in range(25)]
    judged = [h if rng.random() < 0.8 else ("b" if h == "a" else "a") for h in human]
    as_outcome = {"a": Outcome.PASS, "b": Outcome.FAIL}
    # the same seed draws the same resamples: two codes, one interval
    nominal = nominal_kappa_interval(human, judged)
    pass_fail = kappa_interval([as_outcome[h] for h in human], [as_outcome[j] for j in judged])
    assert (nominal.low, nominal.high) == pytest.approx((pass_fail.low, pass_fail.high))
    interval = nominal_kappa_interval(human, [*judged[:-1], None])
    assert interval.low <= nominal_kappa(human, [*judged[:-1], None]).value <= interval.high
    assert nominal_kappa_interval(["a", "b"] * 5, ["a", "b"] * 5) == Interval(1.0, 1.0)


def test_the_summary_and_the_page_say_it_too(project: Path) -> None:
    items = items_file(project / "items.ndjson", wrong=(0, 10, 11))
    page, summary = project / "audit.html", project / "summary.md"
    done = audit("--items", str(items), *BARS, "--html", str(page), "--summary", str(summary))
    assert done.exit_code == ExitCode.INCONCLUSIVE, done.output
    said = done.output.split("verdict: ")[1].split("\n")[0]
    assert said.startswith("inconclusive: about ")
    assert said in page.read_text(encoding="utf-8")
    assert summary.read_text(encoding="utf-8").startswith(
        f"### ❔ metaeval judge-audit: `steady` {said}\n")


def test_a_large_pairwise_interval_draws_tables_and_agrees_with_resampling_cases() -> None:
    from metaeval.audit.metrics import nominal_kappa_interval

    rng = np.random.default_rng(5)
    human = ["a" if rng.random() < 0.5 else "b" for _ in range(5000)]
    judged = [h if rng.random() < 0.85 else ("b" if h == "a" else "a") for h in human]
    tables = nominal_kappa_interval(human, judged)  # 5000 x 1000 cells: drawn as tables
    cases = nominal_kappa_interval(human, judged, resamples=500)  # 2.5M: cases resampled
    assert tables != cases  # two ways of drawing...
    assert (tables.low, tables.high) == pytest.approx((cases.low, cases.high), abs=0.01)
