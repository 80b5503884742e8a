"""Aggregation of repeats (the restart method: each repeat its own start) and how far an
aggregate can be trusted.

Repeats on a shared machine are few (3 to 10) and not normal. A percentile bootstrap of the
median of three repeats is their [min, max], which covers the median about 75% of the time, not
95%. So the median's interval is the distribution-free one from order statistics (its coverage
is at least 95% for any continuous distribution; none below 6 repeats, where even [min, max]
falls short), the mean's is Student's t on the repeats, and the best of N has none (a maximum
has no interval from the maxima of so few). A ratio of two stacks' repeats is Welch's t on
their logs (the ratio of geometric means).

The resampling is numpy, vectorised, rather than scipy.stats.bootstrap: importing
scipy.stats took 5-13 s on this machine, on every `report`, for the same ten lines of maths.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

import numpy as np
from scipy.special import stdtrit

from pywebbench.core.errors import UserError

CONFIDENCE = 0.95
Z_CONFIDENCE = 1.96  # two-sided 95%
Z_POWER = 0.84  # 80% power
POWER = 0.8
MEDIAN_EFFICIENCY = 1.25  # a median's standard error over a mean's, for normal data (sqrt(pi/2))


class Aggregation(StrEnum):
    MEDIAN = "median"
    BEST = "best"
    """Seed 003: the best of N runs."""
    MEAN = "mean"
    """Seed 004: the mean of N runs."""


def parse_aggregation(name: str) -> Aggregation:
    try:
        return Aggregation(name)
    except ValueError:
        raise UserError(f"unknown aggregation {name!r}; choose from "
                        f"{', '.join(a.value for a in Aggregation)}") from None


def _reducer(how: Aggregation) -> Any:
    return {Aggregation.MEDIAN: np.median, Aggregation.BEST: np.max, Aggregation.MEAN: np.mean}[how]


def aggregate(values: Sequence[float], how: Aggregation = Aggregation.MEDIAN) -> float | None:
    if not values:
        return None
    return float(_reducer(how)(np.asarray(values, dtype=float)))


def median_rank_bounds(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """0-based order statistics (k, n-1-k) bracketing the median with at least `confidence`."""
    best = None
    for k in range(n // 2):
        # P(x_(k) <= median <= x_(n-1-k)) = 1 - 2 P(Binomial(n, 1/2) <= k)
        covered = 1.0 - 2.0 * sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
        if covered >= confidence:
            best = (k, n - 1 - k)
    return best


def aggregate_ci(
    values: Sequence[float], how: Aggregation = Aggregation.MEDIAN, *, confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """The aggregate's interval over independent repeats, or None where the data cannot give one."""
    data = np.sort(np.asarray(values, dtype=float))
    if data.size < 2:
        return None
    if how is Aggregation.MEDIAN:
        bounds = median_rank_bounds(int(data.size), confidence)
        return None if bounds is None else (float(data[bounds[0]]), float(data[bounds[1]]))
    if how is Aggregation.MEAN:
        half = float(stdtrit(data.size - 1, 0.5 + confidence / 2.0)) * float(np.std(data, ddof=1)) / math.sqrt(data.size)
        centre = float(np.mean(data))
        return (centre - half, centre + half)
    return None


def ratio_ci(
    values: Sequence[float], baseline: Sequence[float], how: Aggregation = Aggregation.MEDIAN, *,
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """Interval of the ratio of the two sides' geometric means: Welch's t on their logs.

    None unless both sides have at least two values (a ratio to a single baseline run carries
    its noise but could not show it), and for the best of N.
    """
    a = np.asarray(values, dtype=float)
    b = np.asarray(baseline, dtype=float)
    if a.size < 2 or b.size < 2 or np.any(b <= 0) or np.any(a <= 0) or how is Aggregation.BEST:
        return None
    la, lb = np.log(a), np.log(b)
    va, vb = float(np.var(la, ddof=1)) / a.size, float(np.var(lb, ddof=1)) / b.size
    centre = float(np.mean(la) - np.mean(lb))
    if va + vb == 0:
        return (math.exp(centre), math.exp(centre))
    df = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
    half = float(stdtrit(df, 0.5 + confidence / 2.0)) * math.sqrt(va + vb)
    return (math.exp(centre - half), math.exp(centre + half))


def ratio_centre(values: Sequence[float], baseline: Sequence[float],
                 how: Aggregation = Aggregation.MEDIAN) -> float | None:
    """The ratio ratio_ci's interval is about, to print beside it: the two sides' geometric means
    over each other wherever ratio_ci gives one; the aggregates' ratio (the best of N, or a side
    with one window) only where it gives none. A median over a median printed beside an interval
    for the geometric means' ratio put the point outside its own interval in skewed repeats."""
    if ratio_ci(values, baseline, how) is not None:
        return math.exp(float(np.mean(np.log(values))) - float(np.mean(np.log(baseline))))
    top, bottom = aggregate(values, how), aggregate(baseline, how)
    return top / bottom if top is not None and bottom else None


def half_width(ci: tuple[float, float] | None, center: float | None) -> float | None:
    """How far the interval reaches from its center, as a fraction of it (0.02 = ±2%): the wider
    side, so that "±2%" holds the whole interval. The one rule for every half-width here (an
    interval's, the precision stop's, the spread check's, the pages'): half the width over the
    center, used before beside this, read a log-symmetric ratio's ±h as sinh(h) where its upper
    side is expm1(h), and an order-statistic interval of a median as narrower than its long side."""
    if ci is None or not center:
        return None
    return max(ci[1] / center - 1.0, 1.0 - ci[0] / center)


def coefficient_of_variation(values: Sequence[float]) -> float | None:
    data = np.asarray(values, dtype=float)
    if data.size < 2 or float(np.mean(data)) == 0:
        return None
    return float(np.std(data, ddof=1) / np.mean(data))


def min_detectable_difference(cv: float, repeats: int) -> float:
    """Smallest relative difference between two stacks' medians this noise lets us detect.

    Each median of n repeats has a relative standard error of 1.25 x cv / sqrt(n); a difference
    of two has sqrt(2) times that; detecting it at 95% confidence with 80% power needs
    t(0.975) + t(0.8) standard errors on the two sides' 2 (n - 1) df (1.96 + 0.84 only as n grows:
    at 3 repeats, 2.78 + 0.94).
    """
    df = 2.0 * (repeats - 1)
    multiplier = float(stdtrit(df, 0.5 + CONFIDENCE / 2.0)) + float(stdtrit(df, POWER))
    return multiplier * MEDIAN_EFFICIENCY * cv * math.sqrt(2.0 / repeats)


def repeats_needed(cv: float, difference: float) -> int:
    """Repeats per stack for min_detectable_difference(cv, n) <= difference (the fewest such n)."""
    if difference <= 0:
        raise ValueError("difference must be positive")
    n = max(2, math.ceil(2.0 * ((Z_CONFIDENCE + Z_POWER) * MEDIAN_EFFICIENCY * cv / difference) ** 2))
    while min_detectable_difference(cv, n) > difference:  # the normal's count is a lower bound
        n += 1
    return n
