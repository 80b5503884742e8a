"""Aggregation of repeats and how far an aggregate can be trusted: bootstrap intervals.

Repeats on a shared machine are few (3 to 10) and not normal (a neighbour's burst makes a
long tail), so intervals come from resampling the repeats themselves (the percentile
bootstrap: BCa needs more points than a benchmark has). With n repeats the interval of a
median can be no narrower than the data allow, which is the honest answer for small n.

The resampling is numpy, vectorised, rather than scipy.stats.bootstrap: importing
scipy.stats took 5-13 s on this machine, on every `report`, for the same ten lines of maths.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

import numpy as np

from pywebbench.errors import UserError

CONFIDENCE = 0.95
RESAMPLES = 4000
Z_CONFIDENCE = 1.96  # two-sided 95%
Z_POWER = 0.84  # 80% power
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


def _resample(data: np.ndarray[Any, Any], resamples: int, rng: np.random.Generator) -> np.ndarray[Any, Any]:
    """resamples x len(data) draws with replacement, one resample per row."""
    return data[rng.integers(0, data.size, size=(resamples, data.size))]


def _percentile_interval(statistics: np.ndarray[Any, Any], confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(statistics, [tail, 100.0 - tail])
    return float(low), float(high)


def bootstrap_ci(
    values: Sequence[float], how: Aggregation = Aggregation.MEDIAN, *, confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES, seed: int = 0,
) -> tuple[float, float] | None:
    """The bootstrap interval of the aggregate; None below two values (nothing to resample)."""
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None
    rng = np.random.default_rng(seed)
    statistics = _reducer(how)(_resample(data, resamples, rng), axis=1)
    return _percentile_interval(statistics, confidence)


def ratio_ci(
    values: Sequence[float], baseline: Sequence[float], how: Aggregation = Aggregation.MEDIAN, *,
    confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = 0,
) -> tuple[float, float] | None:
    """Interval of aggregate(values) / aggregate(baseline), the two resampled independently.

    None unless both sides have at least two values: a ratio to a single baseline run
    carries the baseline's noise but could not show it.
    """
    a = np.asarray(values, dtype=float)
    b = np.asarray(baseline, dtype=float)
    if a.size < 2 or b.size < 2 or np.any(b <= 0):
        return None
    rng = np.random.default_rng(seed)
    reduce = _reducer(how)
    statistics = reduce(_resample(a, resamples, rng), axis=1) / reduce(_resample(b, resamples, rng), axis=1)
    return _percentile_interval(statistics, confidence)


def half_width(ci: tuple[float, float] | None, center: float | None) -> float | None:
    """Half the interval's width as a fraction of the center (0.02 = ±2%)."""
    if ci is None or not center:
        return None
    return (ci[1] - ci[0]) / 2 / abs(center)


def coefficient_of_variation(values: Sequence[float]) -> float | None:
    data = np.asarray(values, dtype=float)
    if data.size < 2 or float(np.mean(data)) == 0:
        return None
    return float(np.std(data, ddof=1) / np.mean(data))


def min_detectable_difference(cv: float, repeats: int) -> float:
    """Smallest relative difference between two stacks' medians this noise lets us detect.

    Normal approximation: each median of n repeats has a relative standard error of
    1.25 x cv / sqrt(n); a difference of two has sqrt(2) times that; detecting it at 95%
    confidence with 80% power needs (1.96 + 0.84) standard errors.
    """
    return (Z_CONFIDENCE + Z_POWER) * MEDIAN_EFFICIENCY * cv * math.sqrt(2.0 / repeats)


def repeats_needed(cv: float, difference: float) -> int:
    """Repeats per stack for min_detectable_difference(cv, n) <= difference."""
    if difference <= 0:
        raise ValueError("difference must be positive")
    n = 2.0 * ((Z_CONFIDENCE + Z_POWER) * MEDIAN_EFFICIENCY * cv / difference) ** 2
    return max(2, math.ceil(n))
