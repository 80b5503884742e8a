"""Paired statistics for interleaved benchmarking: ratios per round, intervals over launches.

Every stack stays alive and short windows are cycled across stacks in a fresh random order
each round, so within one round all stacks saw the same machine. Dividing each stack's
figure by the baseline's in the same round cancels the machine's slow drift (thermal,
neighbours, frequency), which an unpaired comparison of two sides' aggregates cannot.

Rounds are grouped into launches (one start of every server). A launch can shift every
round it holds (memory layout, which core a worker landed on), so rounds of one launch are
not independent: an interval is Student's t over the launch means (the mean log ratio of each
launch's rounds), exact for normal noise at any launch and round variance, with the spread
moderated across the stacks of a table where there are enough of them (analyze/moderation.py;
coverage measured by simulation at every shape, analyze/coverage.py). One launch gives no
interval: nothing in it tells a launch's own effect from the stack's.

All statistics are taken on log ratios and reported back as ratios: a ratio's noise is
multiplicative, and log space makes B/A and A/B symmetric.

numpy only, on purpose: importing scipy.stats took 5-13 s on this machine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

import numpy as np

from pywebbench.analyze.moderation import (
    NO_PRIOR,
    Bounds,
    Prior,
    launch_intervals,
    moderated_intervals,
    satterthwaite_df,
    t_quantile,
)
from pywebbench.analyze.stats import half_width
from pywebbench.plan.interval_rule import least_launches, why_none

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
    """The standard error of the log centre."""
    df: float = math.inf
    """Degrees of freedom of the t quantile (own launches - 1, plus what a prior lent)."""
    prior_df: float = 0.0
    """Degrees of freedom borrowed from the table's other stacks (0: the stack's own launches alone)."""
    confidence: float = 0.95

    @property
    def half_width(self) -> float:
        """How far it reaches from the center, relative (0.02 = +-2%): stats.half_width's one rule."""
        return half_width((self.low, self.high), self.center) or 0.0

    @property
    def excludes_one(self) -> bool:
        return self.low > 1.0 or self.high < 1.0

    def within(self, margin: float) -> bool:
        """Inside ±margin of 1 (a ratio): at 2 x confidence - 1, two one-sided tests' equivalence."""
        return 1.0 / (1.0 + margin) < self.low and self.high < 1.0 + margin


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


def launch_array(sets: Sequence[Sequence[Observation]]) -> _Array:
    """Log values as an array (set, launch, round), NaN where a set has no window.

    Launches are numbered over all sets together, so that the same launch lines up across
    the stacks of a table; rounds fill each launch in order.
    """
    launches = sorted({o.launch for obs in sets for o in obs})
    column = {launch: i for i, launch in enumerate(launches)}
    width = max((sum(1 for o in obs if o.launch == launch) for obs in sets for launch in launches), default=1)
    out = np.full((len(sets), max(1, len(launches)), max(1, width)), np.nan)
    for i, obs in enumerate(sets):
        filled: dict[int, int] = {}
        for o in sorted(obs, key=lambda o: (o.launch, o.round)):
            if o.value <= 0:
                raise ValueError("values must be positive")
            slot = filled.get(o.launch, 0)
            out[i, column[o.launch], slot] = math.log(o.value)
            filled[o.launch] = slot + 1
    return out


def interval_from_bounds(bounds: Bounds, index: int, prior_df: float, confidence: float) -> Interval | None:
    """Row `index` of vectorised bounds (log scale) as an Interval; None where its half-width is not finite."""
    half = float(bounds.half[index])
    if not math.isfinite(half):
        return None
    centre = float(bounds.centre[index])
    return Interval(center=math.exp(centre), low=math.exp(centre - half), high=math.exp(centre + half),
                    n_rounds=int(bounds.rounds[index]), n_launches=int(bounds.launches[index]),
                    se_log=float(bounds.se[index]), df=float(bounds.df[index]), prior_df=prior_df,
                    confidence=confidence)


def ratio_interval(
    ratios: Sequence[Observation], *, prior: Prior = NO_PRIOR, confidence: float = CONFIDENCE,
) -> Interval | None:
    """Student's t interval of the mean of launch means; None without two launches.

    `prior`: the spread of launch means the other stacks of the table lend (moderation.Prior);
    without it the stack's own launches alone, on launches - 1 degrees of freedom.
    """
    if not ratios:
        return None
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    bounds = launch_intervals(launch_array([ratios]), prior.variance, prior.df, confidence)
    return interval_from_bounds(bounds, 0, prior.df, confidence)


def table_intervals(
    sets: Mapping[str, Sequence[Observation]], *, confidence: float = CONFIDENCE,
) -> tuple[dict[str, Interval | None], Prior]:
    """Every stack's ratio interval in one table (ratios to the same baseline, the same launches).

    The stacks' own spreads moderate each other and the baseline's share keeps its own degrees
    of freedom (moderation.moderated_intervals). The prior returned is the own-part spread the
    stacks lent each other, for intervals between two of them (a ranking's neighbours).
    """
    labels = [label for label, obs in sets.items() if obs]
    out: dict[str, Interval | None] = {label: None for label in sets}
    if not labels:
        return out, NO_PRIOR
    bounds, s0, d0 = moderated_intervals(launch_array([sets[label] for label in labels]), confidence)
    prior = Prior(float(s0), float(d0), len(labels)) if float(d0) > 0 else NO_PRIOR
    for i, label in enumerate(labels):
        out[label] = interval_from_bounds(_row(bounds, i), 0, prior.df, confidence)
    return out, prior


def _row(bounds: Bounds, index: int) -> Bounds:
    return Bounds(*(np.atleast_1d(np.asarray(getattr(bounds, name))[index]) for name in
                    ("centre", "se", "df", "half", "launches", "rounds")))


def with_run_term(interval: Interval, sd: float, df: float) -> Interval:
    """The interval widened by a run-level term (sd of log ratio, known on df degrees of freedom)
    that one run cannot show, its degrees of freedom by Satterthwaite."""
    own = interval.se_log ** 2
    se2 = own + sd ** 2
    if se2 <= 0:
        return interval
    total_df = satterthwaite_df((own, interval.df), (sd ** 2, df))
    half = t_quantile(total_df, interval.confidence) * math.sqrt(se2)
    centre = math.log(interval.center)
    return replace(interval, low=math.exp(centre - half), high=math.exp(centre + half), se_log=math.sqrt(se2),
                   df=total_df)


def launch_centre(observations: Sequence[Observation]) -> float | None:
    """exp of the mean of the launch means of the logs: the centre every interval here is about."""
    positive = [o for o in observations if o.value > 0]
    if not positive:
        return None
    means = launch_intervals(launch_array([positive])).centre
    return math.exp(float(means[0]))


def launches_of(observations: Sequence[Observation]) -> int:
    return len({o.launch for o in observations})


def why_no_interval(ratios: Sequence[Observation], lent: bool = False) -> str | None:
    """The table's words where a ratio's launches give no interval ("needs 3 launches"); None
    where they are enough. `lent`: its table lends it a spread (plan/interval_rule.py)."""
    launches = launches_of(ratios)
    return None if launches >= least_launches(lent) else why_none(launches, lent)


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
    Student's t at the interval's own df, as its test would use: on 3 df that is 3.18 + 0.98 where
    the normal's 1.96 + 0.84 claimed two thirds of the difference (infinite df: the normal's).
    """
    multiplier = t_quantile(interval.df, 1.0 - alpha) + t_quantile(interval.df, 2.0 * power - 1.0)
    return math.exp(multiplier * interval.se_log) - 1.0


ROUNDS_CAP = 1_000_000
"""No projection beyond this: a width that a run term holds up never narrows to the target."""


def rounds_needed(interval: Interval, target_half_width: float) -> int:
    """Rough rounds for the target half-width, at least those spent: the width falls as
    1/sqrt(rounds) and with the t quantile, the launches (its degrees of freedom) growing with
    the rounds at the run's rounds per launch (at two launches t = 12.7 falls to 2.4 at six,
    which 1/sqrt(rounds) alone ignores)."""
    if target_half_width <= 0:
        raise ValueError("target half-width must be positive")
    rounds, launches = max(1, interval.n_rounds), max(1, interval.n_launches)
    now = t_quantile(interval.df, interval.confidence)
    goal = target_half_width * (1 + 1e-9)  # a projection landing on the target reaches it

    def half_at(more: int) -> float:
        scale = more / rounds
        later = t_quantile(interval.df + launches * (scale - 1.0), interval.confidence)
        return interval.half_width * later / now / math.sqrt(scale)

    if half_at(rounds) <= goal:
        return rounds
    low, high = rounds, rounds * 2
    while half_at(high) > goal and high < ROUNDS_CAP:
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if half_at(middle) > goal else (low, middle)
    return min(high, ROUNDS_CAP)


def should_continue(intervals: Mapping[str, Interval | None], precision: float) -> tuple[str, ...]:
    """Labels still too wide for the stopping rule: no interval yet, or half-width > precision."""
    return tuple(label for label, interval in intervals.items()
                 if interval is None or interval.half_width > precision)
