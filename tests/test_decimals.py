"""A figure that rounds to zero prints as zero, never ``-0.00``; any other keeps
its sign, in the table and in the JSON alike."""

from __future__ import annotations

import json
import math

import pytest

from metaeval.audit.metrics import Interval, Value
from metaeval.decimals import fixed, rounded
from metaeval.report import judge_audit_render as report


@pytest.mark.parametrize(("value", "shown"), [
    (-0.001, "0.00"), (-0.0049, "0.00"), (0.0, "0.00"), (-0.0, "0.00"), (0.004, "0.00"),
    # Not zero at two places: the sign stays.
    (-0.006, "-0.01"), (-0.25, "-0.25"), (0.6667, "0.67"),
])
def test_fixed_never_prints_a_signed_zero(value: float, shown: str) -> None:
    assert fixed(value) == shown


def test_rounded_makes_a_negative_zero_zero_and_keeps_other_signs() -> None:
    assert math.copysign(1, rounded(-0.00004)) == 1.0
    assert json.dumps(rounded(-0.00004)) == "0.0"
    assert rounded(-0.00006) == -0.0001
    assert rounded(-0.04, 1) == -0.0 and json.dumps(rounded(-0.04, 1)) == "0.0"


def test_the_judge_audit_report_shows_a_kappa_of_minus_a_thousandth_as_zero() -> None:
    kappa = Value(-0.001)
    assert report._v(kappa) == "0.00"
    assert report._i(Interval(-0.0004, 0.5, 0.95)) == "[0.00, 0.50]"
    assert json.dumps(report._value(Value(-0.00001))) == '{"value": 0.0, "reason": ""}'
    assert report._v(Value(-0.3)) == "-0.30"  # a real disagreement keeps its sign


def test_meta_eval_and_the_summaries_print_no_signed_zero_either() -> None:
    from metaeval.report import audit_html
    from metaeval.report import meta_eval_render as meta_eval

    assert meta_eval._rate(Value(-0.001), Interval(-0.002, 0.4)) == "0.00 [0.00, 0.40]"
    assert ">0.00</span>" in audit_html.number("kappa", -0.001)
    assert audit_html._ci(Interval(-0.001, 0.5)) == ' <span class="ci">[0.00, 0.50]</span>'
