"""The smallest detectable difference uses Student's t at the interval's own df, as its test does."""

from __future__ import annotations

import math

import pytest
from scipy.special import stdtrit

from pywebbench.analyze.paired import Interval, min_detectable


def _interval(se: float, df: float) -> Interval:
    return Interval(1.0, math.exp(-2 * se), math.exp(2 * se), 12, int(df) + 1 if math.isfinite(df) else 40, se, df=df)


def test_few_launches_need_a_larger_difference_than_the_normal_claims() -> None:
    on_three = min_detectable(_interval(0.01, 3.0))
    assert on_three == pytest.approx(math.exp((3.182446 + 0.978472) * 0.01) - 1, rel=1e-5)
    normal = math.exp((1.959964 + 0.841621) * 0.01) - 1
    assert on_three > 1.45 * normal
    assert min_detectable(_interval(0.01, math.inf)) == pytest.approx(normal, rel=1e-6)
    assert min_detectable(_interval(0.01, 30.0)) == pytest.approx(
        math.exp((float(stdtrit(30, 0.975)) + float(stdtrit(30, 0.8))) * 0.01) - 1, rel=1e-9)


def test_other_levels_follow_alpha_and_power() -> None:
    strict = min_detectable(_interval(0.01, 8.0), alpha=0.01, power=0.9)
    assert strict == pytest.approx(math.exp((float(stdtrit(8, 0.995)) + float(stdtrit(8, 0.9))) * 0.01) - 1)
    assert strict > min_detectable(_interval(0.01, 8.0))
