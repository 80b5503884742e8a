"""The statistics against inputs whose answers are known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pywebbench.core.errors import UserError
from pywebbench.analyze.stats import (
    Aggregation,
    aggregate,
    aggregate_ci,
    median_rank_bounds,
    coefficient_of_variation,
    half_width,
    min_detectable_difference,
    parse_aggregation,
    ratio_ci,
    repeats_needed,
)


def test_aggregations_are_the_seeds_own() -> None:
    values = [100.0, 130.0, 110.0, 90.0]
    assert aggregate(values, Aggregation.MEDIAN) == 105.0
    assert aggregate(values, Aggregation.BEST) == 130.0  # seed 003: best of N
    assert aggregate(values, Aggregation.MEAN) == 107.5  # seed 004: mean of N
    assert aggregate([], Aggregation.MEDIAN) is None
    assert parse_aggregation("best") is Aggregation.BEST
    with pytest.raises(UserError, match="unknown aggregation"):
        parse_aggregation("max")


def test_no_interval_from_one_repeat_and_a_point_interval_from_identical_ones() -> None:
    assert aggregate_ci([1234.0]) is None
    assert aggregate_ci([500.0] * 6) == (500.0, 500.0)
    assert aggregate_ci([500.0, 500.0, 500.0], Aggregation.MEAN) == (500.0, 500.0)
    assert ratio_ci([10.0, 10.0], [5.0]) is None  # a single baseline run cannot show its noise


def test_mean_interval_matches_the_normal_theory_on_a_large_sample() -> None:
    rng = np.random.default_rng(7)
    sample = rng.normal(1000.0, 50.0, size=400)
    low, high = aggregate_ci(list(sample), Aggregation.MEAN) or (0.0, 0.0)
    expected_half = 1.966 * 50.0 / math.sqrt(400)  # 4.9 req/s
    assert low < float(np.mean(sample)) < high
    assert (high - low) / 2 == pytest.approx(expected_half, rel=0.1)


def test_a_median_of_fewer_than_six_repeats_has_no_95_percent_interval() -> None:
    # [min, max] of three repeats covers the median 75% of the time (1 - 2/8): not a 95% interval.
    assert aggregate_ci([100.0, 110.0, 105.0]) is None
    assert median_rank_bounds(5) is None
    assert median_rank_bounds(6) == (0, 5)  # 1 - 2/64 = 96.9%
    assert median_rank_bounds(17) == (4, 12)
    assert aggregate_ci([100.0, 110.0, 105.0, 104.0, 99.0, 101.0]) == (99.0, 110.0)
    assert aggregate_ci([100.0, 110.0, 105.0], Aggregation.BEST) is None


def test_the_median_interval_covers_at_least_95_percent() -> None:
    rng = np.random.default_rng(3)
    covered = sum(lo <= 0.0 <= hi for lo, hi in (aggregate_ci(list(rng.standard_t(3, 9))) or (1.0, 1.0)
                                                 for _ in range(2000)))
    assert covered / 2000 >= 0.95


def test_ratio_interval_contains_the_ratio_and_scales() -> None:
    stack = [2000.0, 2100.0, 1950.0, 2050.0, 2020.0]
    base = [1000.0, 1010.0, 990.0, 1005.0, 995.0]
    low, high = ratio_ci(stack, base) or (0.0, 0.0)
    assert low <= 2020.0 / 1000.0 <= high
    assert 1.9 < low < high < 2.15
    doubled = ratio_ci([2 * v for v in stack], base) or (0.0, 0.0)
    assert doubled == pytest.approx((2 * low, 2 * high))


def test_half_width_and_noise_maths() -> None:
    assert half_width((98.0, 102.0), 100.0) == pytest.approx(0.02)
    assert half_width(None, 100.0) is None
    assert coefficient_of_variation([90.0, 100.0, 110.0]) == pytest.approx(0.1)
    # (t(0.975) + t(0.8) on 2 (n - 1) df) x 1.25 x cv x sqrt(2/n); the normal's 1.96 + 0.84 only as n grows
    assert min_detectable_difference(0.10, 8) == pytest.approx((2.144787 + 0.868055) * 1.25 * 0.10 * 0.5, rel=1e-5)
    assert min_detectable_difference(0.10, 3) == pytest.approx((2.776445 + 0.940965) * 1.25 * 0.10 * math.sqrt(2 / 3),
                                                                rel=1e-5)
    assert min_detectable_difference(0.10, 100_000) == pytest.approx(2.8 * 1.25 * 0.10 * math.sqrt(2e-5), rel=2e-3)
    n = repeats_needed(0.03, 0.05)
    assert min_detectable_difference(0.03, n) <= 0.05 < min_detectable_difference(0.03, n - 1)


def test_one_half_width_rule_everywhere() -> None:
    """The wider side: an order-statistic median interval's long side, a log-symmetric ratio's
    upper side (expm1, where half the width over the center read sinh); Interval.half_width is
    this one function."""
    from pywebbench.analyze.paired import Interval

    assert half_width((90.0, 130.0), 100.0) == pytest.approx(0.30)
    assert half_width((70.0, 110.0), 100.0) == pytest.approx(0.30)
    h = 0.2
    assert half_width((math.exp(-h), math.exp(h)), 1.0) == pytest.approx(math.expm1(h))
    interval = Interval(1.1, 1.1 * math.exp(-h), 1.1 * math.exp(h), 10, 4, h / 3)
    assert interval.half_width == pytest.approx(math.expm1(h))


def test_the_printed_ratio_is_the_one_its_interval_is_for() -> None:
    """Restart repeats, skewed: the medians' ratio (1.01) is not what the Welch interval of the
    geometric means' ratio is about (its centre 1.27); ratio_centre prints that centre."""
    from pywebbench.analyze.stats import ratio_centre

    values, base = [100.0, 101.0, 102.0, 180.0, 190.0], [100.0, 100.5, 101.0, 101.5, 102.0]
    low, high = ratio_ci(values, base)  # type: ignore[misc]
    centre = ratio_centre(values, base)
    assert centre == pytest.approx(math.exp(np.mean(np.log(values)) - np.mean(np.log(base))))
    assert low <= centre <= high  # type: ignore[operator]
    assert math.sqrt(low * high) == pytest.approx(centre)  # type: ignore[operator]
    assert abs(np.median(values) / np.median(base) - centre) > 0.2  # type: ignore[operator]
    # no interval (best of N, one window a side): the aggregates' ratio, as before
    assert ratio_centre(values, base, Aggregation.BEST) == pytest.approx(190.0 / 102.0)
    assert ratio_centre([120.0], base) == pytest.approx(120.0 / 101.0)
    assert ratio_centre([], base) is None
