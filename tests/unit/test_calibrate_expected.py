"""calibrate's expected B/A: from the sizing windows' CPU, with its own interval, checked against B/A."""

from __future__ import annotations

import math

import pytest

from pywebbench.analyze.calibrate import Sizing, expected_ab, holds
from pywebbench.analyze.paired import Interval


def _interval(center: float, se: float, df: float = 6.0) -> Interval:
    half = 2.447 * se
    return Interval(center, center * math.exp(-half), center * math.exp(half), 12, 7, se, df=df)


def test_the_expected_ratio_follows_the_probe_and_scales_with_the_loops() -> None:
    probe = _interval(1.30, 0.01)
    same = expected_ab(Sizing(loops=100, cpu_a_us=300.0, per_loop_us=0.9, probe_loops=100, probe_ratio=probe))
    assert same is not None and same.center == pytest.approx(1 / 1.30)
    assert same.low == pytest.approx(1 / (1 + (probe.high - 1))) and same.high == pytest.approx(1 / probe.low)
    sixth = expected_ab(Sizing(loops=50, cpu_a_us=300.0, per_loop_us=0.9, probe_loops=300, probe_ratio=probe))
    assert sixth is not None and sixth.center == pytest.approx(1 / (1 + 0.30 / 6))
    assert sixth.se_log < same.se_log  # a sixth of the probe: a sixth of its uncertainty, about
    assert expected_ab(Sizing(1, 300.0, 0.9, 100, None)) is None


def test_b_over_a_holds_the_expected_ratio_within_both_errors() -> None:
    expected = _interval(0.95, 0.004)
    assert holds(_interval(0.955, 0.006), expected) is True
    assert holds(_interval(0.92, 0.006), expected) is False
    assert holds(None, expected) is None


def test_a_narrow_expected_ratio_on_few_df_does_not_set_the_quantile() -> None:
    """Run 11 (interleaved): B/A 1.027 (se 0.021 on 9 df) against 0.950 (se 0.0035 on 2 df).
    On the smaller side's 2 df, t = 4.30 let a 3.7-se gap hold; Satterthwaite gives about 9.5 df."""
    expected = _interval(0.950, 0.0035, df=2.0)
    assert holds(_interval(1.027, 0.0206, df=9.0), expected) is False
    assert holds(_interval(0.990, 0.0206, df=9.0), expected) is True  # 1.9 se: within t(9.5) = 2.25
