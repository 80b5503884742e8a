"""Paired statistics for interleaved benchmarking: ratios per round, intervals over launches.

Every stack stays alive and short windows are cycled across stacks in a fresh random order
each round, so within one round all stacks saw the same machine. Dividing each stack's
figure by the baseline's in the same round cancels the machine's slow drift (thermal,
neighbours, frequency), which an unpaired comparison of two sides' aggregates cannot.

Rounds are grouped into launches (one start of every server). A launch can shift every
round it holds (memory layout, which core a worker landed on), so rounds of one launch are
not independent: intervals come from a two-stage bootstrap, launches with replacement and
then rounds within each chosen launch (Kalibera & Jones 2013, "Rigorous benchmarking in
reasonable time"). With one launch it is the ordinary bootstrap over rounds.

All statistics are taken on log ratios and reported back as ratios: a ratio's noise is
multiplicative, and log space makes B/A and A/B symmetric.

numpy only, on purpose: importing scipy.stats took 5-13 s on this machine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from statistics import NormalDist
from typing import Any

import numpy as np
from scipy.special import stdtrit

CONFIDENCE = 0.95
RESAMPLES = 4000
TRIM = 0.10  # cut from each end: absorbs one window hit by a neighbour's burst in ten
_CHUNK_CELLS = 2_000_000  # bounds the resample matrix (16 MB) when launches are large

_Array = np.ndarray[Any, Any]


@dataclass(frozen=True)
class Observation:
    """One measured window's figure for one stack (req/s, CPU s per request, or a ratio)."""

    launch: int
    round: int
    value: float


class Statistic(StrEnum):
    TRIMMED_GEOMEAN = "trimmed-geomean"
    """exp of the 10%-trimmed mean of logs: robust to a burst, ~95% efficient on normal data."""
    MEDIAN = "median"
    """exp of the median of logs (the median itself for an odd count)."""
    GEOMEAN = "geomean"


@dataclass(frozen=True)
class Interval:
    center: float
    low: float
    high: float
    n_rounds: int
    n_launches: int
    se_log: float
    """Standard deviation of the bootstrap distribution of log(statistic)."""

    @property
    def half_width(self) -> float:
        """Half the width relative to the center (0.02 = +-2%)."""
        return (self.high - self.low) / 2.0 / self.center

    @property
    def excludes_one(self) -> bool:
        return self.low > 1.0 or self.high < 1.0


def paired_ratios(values: Sequence[Observation], baseline: Sequence[Observation]) -> tuple[Observation, ...]:
    """values / baseline per (launch, round) present on both sides with both values > 0.

    Keyed on (launch, round) so that round numbers may restart in each launch.
    """
    base = _by_key(baseline)
    out: list[Observation] = []
    for key, obs in sorted(_by_key(values).items()):
        other = base.get(key)
        if other is not None and obs.value > 0 and other.value > 0:
            out.append(Observation(obs.launch, obs.round, obs.value / other.value))
    return tuple(out)


def _by_key(observations: Sequence[Observation]) -> dict[tuple[int, int], Observation]:
    keyed: dict[tuple[int, int], Observation] = {}
    for obs in observations:
        key = (obs.launch, obs.round)
        if key in keyed:
            raise ValueError(f"two observations for launch {obs.launch}, round {obs.round}")
        keyed[key] = obs
    return keyed


def _row_statistic(logs: _Array, statistic: Statistic) -> _Array:
    """The statistic of each row of logs; NaN marks padding (launches of unequal size)."""
    ordered = np.sort(logs, axis=1)  # NaN sorts last, so each row's data is a prefix
    rows = np.arange(ordered.shape[0])
    n = np.sum(~np.isnan(ordered), axis=1)
    if statistic is Statistic.MEDIAN:
        middle: _Array = (ordered[rows, (n - 1) // 2] + ordered[rows, n // 2]) / 2.0
        return middle
    trim = TRIM if statistic is Statistic.TRIMMED_GEOMEAN else 0.0
    k = (n * trim + 1e-9).astype(int)  # 1e-9: n x 0.1 may land just under an integer
    sums = np.zeros((ordered.shape[0], ordered.shape[1] + 1))
    np.cumsum(np.nan_to_num(ordered, nan=0.0), axis=1, out=sums[:, 1:])
    result: _Array = (sums[rows, n - k] - sums[rows, k]) / (n - 2 * k)
    return result


def row_statistics(logs: _Array, statistic: Statistic = Statistic.TRIMMED_GEOMEAN) -> _Array:
    """The statistic (in log space) of each row of a matrix of logs, NaN entries left out.

    For bootstraps outside this module (a ranking's concordance, analyze/agreement.py) that
    resample many stacks' rounds at once; a row with no value gives NaN.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        return _row_statistic(logs, statistic)


def _log_statistic(logs: _Array, statistic: Statistic) -> float:
    return float(_row_statistic(logs.reshape(1, -1), statistic)[0])


def _logs_by_launch(observations: Sequence[Observation]) -> tuple[_Array, _Array]:
    """Log values grouped by launch (concatenated) and each launch's size."""
    if any(obs.value <= 0 for obs in observations):
        raise ValueError("values must be positive")
    launches = sorted({obs.launch for obs in observations})
    groups = [[math.log(o.value) for o in observations if o.launch == launch] for launch in launches]
    return np.concatenate([np.asarray(g) for g in groups]), np.asarray([len(g) for g in groups])


def _bootstrap(logs: _Array, sizes: _Array, statistic: Statistic, resamples: int,
               rng: np.random.Generator, *, stratified: bool = False) -> _Array:
    """Bootstrap of the statistic over rounds: launches with replacement, then rounds within
    each (two-stage); or, `stratified`, every launch kept and its rounds resampled.

    Each chosen launch contributes as many rounds as it has; shorter launches are padded with
    NaN to the longest, which the row statistic ignores. One launch is the plain bootstrap.
    """
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    n_launches, longest = sizes.size, int(sizes.max())
    slot = np.arange(longest)
    chunk = max(1, _CHUNK_CELLS // (n_launches * longest))
    out = np.empty(resamples)
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        chosen = np.broadcast_to(np.arange(n_launches), (rows, n_launches)) if stratified \
            else rng.integers(0, n_launches, size=(rows, n_launches))
        size = sizes[chosen][..., None]
        index = offsets[chosen][..., None] + (rng.random((rows, n_launches, longest)) * size).astype(int)
        drawn = np.where(slot < size, logs[index], np.nan).reshape(rows, -1)
        out[start:start + rows] = _row_statistic(drawn, statistic)
    return out


def _interval(center_log: float, boot_logs: _Array, confidence: float, n_rounds: int,
              n_launches: int) -> Interval:
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(boot_logs, [tail, 100.0 - tail])
    return Interval(center=math.exp(center_log), low=math.exp(float(low)), high=math.exp(float(high)),
                    n_rounds=n_rounds, n_launches=n_launches, se_log=float(np.std(boot_logs, ddof=1)))


def statistic_value(observations: Sequence[Observation],
                    statistic: Statistic = Statistic.TRIMMED_GEOMEAN) -> float | None:
    """The statistic of the positive values as observed; None when there are none."""
    positive = np.asarray([o.value for o in observations if o.value > 0])
    if positive.size == 0:
        return None
    return math.exp(_log_statistic(np.log(positive), statistic))


def ratio_interval(
    ratios: Sequence[Observation], statistic: Statistic = Statistic.TRIMMED_GEOMEAN, *,
    confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = 0,
) -> Interval | None:
    """Interval of the statistic of paired ratios over rounds nested in launches; None below two rounds.

    One launch: the bootstrap over rounds. Several: the random-effects error of the grand
    statistic, se^2 = se_within^2 + var_between / launches, where se_within comes from a
    bootstrap of rounds within each launch (launches kept) and var_between from the one-way
    ANOVA of level_variances. Resampling launches *and* rounds (the two-stage bootstrap)
    counts the within-launch variance twice: with no launch effect its intervals came out
    1.3-1.4x too wide here (Davison & Hinkley 1997, 3.8); resampling a handful of launches
    alone is too coarse to give an interval at all.
    """
    if len(ratios) < 2:
        return None
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    logs, sizes = _logs_by_launch(ratios)
    center = _log_statistic(logs, statistic)
    rng = np.random.default_rng(seed)
    if sizes.size == 1 or int(sizes.max()) == 1:
        # One launch, or a launch per round: the rounds are the independent units.
        flat = np.asarray([logs.size])
        return _interval(center, _bootstrap(logs, flat, statistic, resamples, rng), confidence, len(ratios),
                         int(sizes.size))
    within = _bootstrap(logs, sizes, statistic, resamples, rng, stratified=True)
    levels = level_variances(ratios)
    between = (levels[0] if levels is not None else 0.0) / sizes.size
    within_var = float(np.var(within, ddof=1))
    se = math.sqrt(within_var + between)
    # Student's t with Satterthwaite's degrees of freedom: a launch effect is estimated from
    # only launches - 1 degrees of freedom, and the interval must say so.
    df_within, df_between = len(ratios) - sizes.size, sizes.size - 1
    denominator = within_var ** 2 / max(1, df_within) + between ** 2 / df_between
    df = (se ** 4 / denominator) if denominator > 0 else float("inf")
    quantile = float(stdtrit(df, 0.5 + confidence / 2.0)) if math.isfinite(df) \
        else NormalDist().inv_cdf(0.5 + confidence / 2.0)
    return Interval(center=math.exp(center), low=math.exp(center - quantile * se),
                    high=math.exp(center + quantile * se), n_rounds=len(ratios), n_launches=int(sizes.size),
                    se_log=se)


def unpaired_ratio_interval(
    values: Sequence[Observation], baseline: Sequence[Observation],
    statistic: Statistic = Statistic.TRIMMED_GEOMEAN, *,
    confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = 0,
) -> Interval | None:
    """statistic(values) / statistic(baseline), each side resampled on its own (pairing ignored).

    For showing what pairing buys. None unless both sides have two rounds; n_rounds and
    n_launches are the smaller side's.
    """
    if len(values) < 2 or len(baseline) < 2:
        return None
    rng = np.random.default_rng(seed)
    logs_a, sizes_a = _logs_by_launch(values)
    logs_b, sizes_b = _logs_by_launch(baseline)
    boot = (_bootstrap(logs_a, sizes_a, statistic, resamples, rng)
            - _bootstrap(logs_b, sizes_b, statistic, resamples, rng))
    center = _log_statistic(logs_a, statistic) - _log_statistic(logs_b, statistic)
    return _interval(center, boot, confidence, min(len(values), len(baseline)),
                     min(sizes_a.size, sizes_b.size))


def level_variances(ratios: Sequence[Observation]) -> tuple[float, float] | None:
    """(between-launch, within-launch) variance of log ratios; None below two launches.

    One-way random-effects ANOVA (method of moments, n0 for unequal launches), the between
    component clipped at 0. Repetitions pay off at the level whose variance dominates.
    """
    if not ratios:
        return None
    logs, sizes = _logs_by_launch(ratios)
    n_launches, total = sizes.size, int(sizes.sum())
    if n_launches < 2 or total <= n_launches:
        return None
    groups = np.split(logs, np.cumsum(sizes)[:-1])
    means = np.asarray([g.mean() for g in groups])
    within = sum(float(((g - m) ** 2).sum()) for g, m in zip(groups, means)) / (total - n_launches)
    between_ms = float((sizes * (means - logs.mean()) ** 2).sum()) / (n_launches - 1)
    n0 = (total - float((sizes ** 2).sum()) / total) / (n_launches - 1)
    return max(0.0, (between_ms - within) / n0), within


def min_detectable(interval: Interval, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest relative difference detectable (two-sided alpha, given power) with this spend.

    se_log is already the paired ratio's own error, so no sqrt(2) as for two separate means.
    The defaults give z = 1.959964 + 0.841621; stdlib NormalDist serves other levels.
    """
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0) + NormalDist().inv_cdf(power)
    return math.exp(z * interval.se_log) - 1.0


def rounds_needed(interval: Interval, target_half_width: float) -> int:
    """Rough rounds for the target half-width (width ~ 1/sqrt(rounds)), at least those spent."""
    if target_half_width <= 0:
        raise ValueError("target half-width must be positive")
    projected = interval.n_rounds * (interval.half_width / target_half_width) ** 2
    return max(interval.n_rounds, math.ceil(projected - 1e-9))  # 160.00000001 is 160


def tied(
    a: Sequence[Observation], b: Sequence[Observation],
    statistic: Statistic = Statistic.TRIMMED_GEOMEAN, *,
    confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = 0,
) -> bool | None:
    """Whether the paired a/b interval contains 1; None when there is no interval."""
    interval = ratio_interval(paired_ratios(a, b), statistic, confidence=confidence,
                              resamples=resamples, seed=seed)
    return None if interval is None else not interval.excludes_one


def rank_with_ties(
    items: Sequence[tuple[str, Sequence[Observation]]],
    statistic: Statistic = Statistic.TRIMMED_GEOMEAN, *,
    higher_is_better: bool = True, confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES, seed: int = 0,
) -> list[tuple[str, int]]:
    """Labels best first, each with a tie group (from 1).

    A row joins the previous row's group when the two are tied by their own paired ratio
    (adjacent neighbours only: overlapping intervals against a baseline would hide the pairing).
    Rows without a value come last, each in a group of its own.
    """
    scored = [(label, obs, statistic_value(obs, statistic)) for label, obs in items]
    sign = -1.0 if higher_is_better else 1.0
    ranked = sorted(scored, key=lambda row: (row[2] is None, sign * (row[2] or 0.0)))
    out: list[tuple[str, int]] = []
    group = 0
    previous: Sequence[Observation] | None = None
    for label, obs, value in ranked:
        same = (previous is not None and value is not None
                and tied(previous, obs, statistic, confidence=confidence, resamples=resamples, seed=seed))
        group += 0 if same else 1
        out.append((label, group))
        previous = obs if value is not None else None
    return out


def should_continue(intervals: Mapping[str, Interval | None], precision: float) -> tuple[str, ...]:
    """Labels still too wide for the stopping rule: no interval yet, or half-width > precision."""
    return tuple(label for label, interval in intervals.items()
                 if interval is None or interval.half_width > precision)
