"""Intervals over launches, each stack's spread moderated by its table's other stacks.

A stack's ratio to the baseline is estimated from its launch means: the mean log ratio of the
rounds of each launch. Launch means are independent whatever the launch and round variances
are (a launch's effect, its rounds' noise), so the mean of L of them with Student's t on L - 1
degrees of freedom is exact for normal noise at every shape with two launches or more. Its
weakness is the spread on few launches: two launches give one degree of freedom (t = 12.7).

The stacks of one table ran in the same launches on the same machine, so their spreads are
draws from a common distribution. Smyth's moderated variance (2004, limma's eBayes) estimates
that distribution from the table itself, a scaled inverse chi-square with d0 degrees of
freedom around s0^2, and gives each stack (d0 s0^2 + d s^2) / (d0 + d) on d0 + d degrees of
freedom. d0 comes out large where the stacks' spreads are alike beyond what chance explains,
and small (nothing borrowed) where they differ: a noisy stack keeps its own spread. d0 is capped
at the degrees of freedom the table's spreads hold together, which is what full pooling of
alike spreads would give. The coverage this gives at every shape the harness produces is
measured by simulation (analyze/coverage.py, scripts/coverage, docs/method.md), not argued.

Everything works on arrays whose last two axes are (launch, round), NaN for a missing window,
so the simulator and the report run the same code.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import digamma, fdtri, polygamma, stdtrit

from pywebbench.plan.interval_rule import OWN_DF, SPREADS_TO_POOL

_Array = np.ndarray[Any, Any]

OUTLYING = 0.99
"""A stack's own spread above this quantile of the table's distribution is its own (on many launches)."""
OUTLYING_BY_DF = ((1, OUTLYING), (3, 0.90), (6, 0.95))
"""(up to this many own degrees of freedom, the quantile): on few launches the test is weak, so it
is made at a lower quantile. At 0.99 throughout, a stack twice as noisy as its table passed as
one of it and, borrowing the table's spread, was covered 92% of the time at 4 launches and 4x
87.5% (simulated, analyze/noise_classes.py). A lower quantile gives that many ordinary stacks
their own wider spread: at 0.75 the grid's small tables reached 97.6% coverage. This schedule
keeps every cell of the coverage grid within 93-97% and a 2x-noisier stack from 3 launches on
at 93% or more; a 4x one is covered about 92% at 3 launches (docs/method.md). On 2 launches (one
own degree of freedom) no test can tell a noisier stack: a lower quantile would only take the
interval from ordinary stacks at random (an outlying stack keeps its own launches, too few for
one), so it stays at 0.99 and a noisier stack there is under-covered, as the page shows."""


def spread_outlying(own_variance: Any, own_df: Any, prior_variance: Any, prior_df: Any) -> Any:
    """Whether a spread on own_df degrees of freedom lies above its table's distribution (prior_variance
    on prior_df) at outlying_quantile: then it is its own, not pulled toward the table's."""
    ceiling = prior_variance * fdtri(np.maximum(own_df, 1), np.where(prior_df > 0, prior_df, 1.0),
                                     outlying_quantile(own_df))
    return (np.asarray(own_df) > 0) & (own_variance > ceiling)


def outlying_quantile(own_df: Any) -> Any:
    """The quantile of the table's spread distribution above which a stack's own spread is its own."""
    df = np.asarray(own_df)
    out = np.full(df.shape, OUTLYING)
    for most, quantile in reversed(OUTLYING_BY_DF):
        out = np.where(df <= most, quantile, out)
    return out


@dataclass(frozen=True)
class Prior:
    """The table's distribution of launch-mean variances: s0^2 on d0 degrees of freedom."""

    variance: float
    df: float
    """0: nothing borrowed."""
    stacks: int
    """How many spreads it was estimated from."""


NO_PRIOR = Prior(0.0, 0.0, 0)


def launch_means(logs: _Array) -> _Array:
    """(..., launch, round) -> (..., launch): each launch's mean; NaN for a launch with no round."""
    with np.errstate(invalid="ignore"):
        counts = np.sum(~np.isnan(logs), axis=-1)
        sums = np.nansum(logs, axis=-1)
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def spreads(means: _Array) -> tuple[_Array, _Array]:
    """(..., launch) -> the variance of the launch means (ddof 1) and its degrees of freedom."""
    present = ~np.isnan(means)
    n = np.sum(present, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.nansum(means, axis=-1) / np.maximum(n, 1)
        squares = np.nansum((means - centre[..., None]) ** 2, axis=-1)
        variance = np.where(n >= 2, squares / np.maximum(n - 1, 1), np.nan)
    return variance, np.maximum(n - 1, 0)


def trigamma_inverse(x: _Array) -> _Array:
    """y with trigamma(y) = x, by Newton's method from Smyth's starting point (limma)."""
    x = np.asarray(x, dtype=float)
    y = 0.5 + 1.0 / x
    for _ in range(60):
        tri = polygamma(1, y)
        step = tri * (1.0 - tri / x) / polygamma(2, y)
        y = y + step
        if np.all(-step / y < 1e-8):
            break
    out: _Array = np.where(x > 1e7, 1.0 / np.sqrt(x), np.where(x < 1e-6, 1.0 / x, y))
    return out


def estimate_priors(variances: _Array, dfs: _Array) -> tuple[_Array, _Array]:
    """Per table (the last axis holds its stacks): s0^2 and d0.

    Spreads with no degrees of freedom or no variance are left out; below SPREADS_TO_POOL
    usable spreads a table borrows nothing (d0 = 0).
    """
    usable = (dfs > 0) & np.isfinite(variances) & (variances > 0)
    count = np.sum(usable, axis=-1)
    d = np.where(usable, dfs, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.where(usable, np.log(np.where(usable, variances, 1.0)) - digamma(d / 2.0) + np.log(d / 2.0), 0.0)
        e_mean = np.sum(e, axis=-1) / np.maximum(count, 1)
        spread_e = np.sum(np.where(usable, (e - e_mean[..., None]) ** 2, 0.0), axis=-1) / np.maximum(count - 1, 1)
        excess = spread_e - np.sum(np.where(usable, polygamma(1, d / 2.0), 0.0), axis=-1) / np.maximum(count, 1)
        d0 = np.where(excess > 0, 2.0 * trigamma_inverse(np.where(excess > 0, excess, 1.0)), np.inf)
        d0 = np.minimum(d0, np.sum(np.where(usable, dfs, 0), axis=-1))
        s0 = np.exp(e_mean + digamma(d0 / 2.0) - np.log(d0 / 2.0))
    pooled = count >= SPREADS_TO_POOL
    return np.where(pooled, s0, 0.0), np.where(pooled, d0, 0.0)


@dataclass(frozen=True)
class Bounds:
    """Arrays of log centres, standard errors, degrees of freedom and half-widths (NaN: none)."""

    centre: _Array
    se: _Array
    df: _Array
    half: _Array
    launches: _Array
    rounds: _Array


def launch_intervals(logs: _Array, prior_variance: _Array | float = 0.0, prior_df: _Array | float = 0.0,
                     confidence: float = 0.95) -> Bounds:
    """Moderated t intervals of the mean of launch means, for arrays (..., launch, round).

    prior_* broadcast against the leading axes. A stack with one launch has no interval (NaN
    half-width) even with a prior: the prior alone would say its spread is the others', and
    one launch cannot show that it is not one of the table's outlying stacks. Nor has one whose
    spread rests on fewer than OWN_DF degrees of freedom (two launches and nothing lent: t on
    one df, a range no reader can use; plan/interval_rule.py).
    """
    means = launch_means(logs)
    variance, d = spreads(means)
    n = np.sum(~np.isnan(means), axis=-1)
    pv = np.broadcast_to(np.asarray(prior_variance, dtype=float), variance.shape)
    pd = np.broadcast_to(np.asarray(prior_df, dtype=float), variance.shape)
    own = np.where(d > 0, variance, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        total_df = pd + d
        moderated = (np.where(pd > 0, pd * pv, 0.0) + d * own) / total_df
        se = np.sqrt(moderated / n)
        centre = np.nansum(means, axis=-1) / np.maximum(n, 1)
        quantile = stdtrit(np.where(total_df > 0, total_df, 1.0), 0.5 + confidence / 2.0)
        half = np.where((total_df >= OWN_DF) & (n > 1), quantile * se, np.nan)
    return Bounds(centre=np.where(n > 0, centre, np.nan), se=se, df=total_df, half=half, launches=n,
                  rounds=np.sum(~np.isnan(logs), axis=(-2, -1)))


def moderated_intervals(logs: _Array, confidence: float = 0.95) -> tuple[Bounds, _Array, _Array]:
    """Intervals for a table (..., stack, launch, round) of ratios to one baseline.

    Every ratio shares the baseline's launch means, so the stacks' spreads are not independent
    draws: pooling them would count the baseline's part once per stack although the run holds
    it on launches - 1 degrees of freedom only. So each launch mean is split into the table's
    common part (the launch's effect, fitted beside each stack's level: the baseline's deviation,
    mostly; launch_effects) and the stack's own part (the rest). The own parts are moderated
    across stacks; the common part keeps its launches - 1 degrees of freedom; the two add up, on
    Satterthwaite's degrees of freedom. Below SPREADS_TO_POOL ratios each stack keeps its own spread (exact t).
    """
    means = launch_means(logs)
    stacks = np.sum(np.any(~np.isnan(means), axis=-1), axis=-1)
    common = launch_effects(means)
    own = means - common[..., None, :]
    own_variance, own_df = spreads(own)
    # A launch's effect is read off the stacks it held, each stack's own part included: the own
    # parts lose 1/g of their variance, g the stacks a launch holds (all of them but in blocks).
    g = np.maximum(_stacks_per_launch(means, stacks), 2)[..., None]
    own_variance = own_variance * g / (g - 1)
    s0, d0 = estimate_priors(own_variance, own_df)
    plain = launch_intervals(logs, 0.0, 0.0, confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        total_own_df = own_df + d0[..., None]
        moderated = (d0[..., None] * s0[..., None] + own_df * np.where(own_df > 0, own_variance, 0.0)) \
            / np.where(total_own_df > 0, total_own_df, 1.0)
        # Each stack's mean holds the common part of its own launches only: where stacks left
        # early (adaptive allocation), the later launches' common part, read off the few stacks
        # still measured, is not theirs.
        common_variance, common_df = spreads(np.where(np.isnan(means), np.nan, common[..., None, :]))
        n = plain.launches
        own_se2, common_se2 = moderated / n, common_variance / n
        se2 = own_se2 + common_se2
        df = se2 ** 2 / (own_se2 ** 2 / np.where(total_own_df > 0, total_own_df, np.inf)
                         + common_se2 ** 2 / np.maximum(common_df, 1))
        # A spread improbably large for the table's distribution (a misbehaving stack) is not
        # pulled toward the others: it keeps its own launches' t (Smyth's robust variant, simply).
        outlying = spread_outlying(own_variance, own_df, s0[..., None], d0[..., None])
        pooled = (stacks >= SPREADS_TO_POOL)[..., None] & (n >= 2) & (d0[..., None] > 0) & ~outlying
        quantile = stdtrit(np.where(df > 0, df, 1.0), 0.5 + confidence / 2.0)
        half = np.where(pooled, quantile * np.sqrt(se2), plain.half)
    bounds = Bounds(centre=plain.centre, se=np.where(pooled, np.sqrt(se2), plain.se),
                    df=np.where(pooled, df, plain.df), half=half, launches=plain.launches, rounds=plain.rounds)
    return bounds, s0, d0


def launch_effects(means: _Array, sweeps: int = 100) -> _Array:
    """(..., stack, launch) -> (..., launch): each launch's common part, by the additive fit
    means = stack level + launch effect (least squares over the cells present).

    Where every stack ran in every launch this is the launch's mean over stacks. Where a
    launch held some stacks only (--launch-block, or stacks an adaptive run let go) that mean
    would be the mean level of whichever stacks the launch held, which is no effect of the
    launch: at 15 of 126 stacks a block it moved 30% from block to block and became each
    stack's own spread. Each stack's level is taken out first, alternating until the fit holds.
    """
    present = ~np.isnan(means)
    filled = np.where(present, means, 0.0)
    count_by_launch = np.sum(present, axis=-2)
    count_by_stack = np.sum(present, axis=-1)
    level = np.sum(filled, axis=-1) / np.maximum(count_by_stack, 1)
    def effect_of(level: _Array) -> _Array:
        out: _Array = np.sum(np.where(present, filled - level[..., None], 0.0), axis=-2) / np.maximum(count_by_launch, 1)
        return out

    for _ in range(sweeps):
        effect = effect_of(level)
        moved = np.sum(np.where(present, filled - effect[..., None, :], 0.0), axis=-1) / np.maximum(count_by_stack, 1)
        if np.allclose(moved, level, rtol=0.0, atol=1e-12):
            break
        level = moved
    effect = effect_of(level)  # the effects of the levels kept, whichever way the loop ended
    # The mean level over stacks rides on the effects, as a launch's plain mean would carry it.
    centre = np.sum(np.where(count_by_stack > 0, level, 0.0), axis=-1) / np.maximum(np.sum(count_by_stack > 0, axis=-1), 1)
    out: _Array = np.where(count_by_launch > 0, effect + centre[..., None], np.nan)
    return out


def _stacks_per_launch(means: _Array, stacks: _Array) -> _Array:
    """The typical number of stacks a launch held: the median over launches holding any."""
    held = np.sum(~np.isnan(means), axis=-2).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a table with no launch at all
        typical = np.nanmedian(np.where(held > 0, held, np.nan), axis=-1)
    return np.where(np.isfinite(typical), typical, stacks)


def satterthwaite_df(*parts: tuple[float, float]) -> float:
    """Degrees of freedom of a sum of variances, each (variance, its df); a part known exactly
    (infinite or no df) adds none of the uncertainty, and a sum known exactly has infinite df."""
    total = sum(v for v, _ in parts)
    spread = sum(v ** 2 / df for v, df in parts if math.isfinite(df) and df > 0)
    return total ** 2 / spread if spread > 0 else math.inf


def mean_half_width(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """The mean of independent values and its Student's t half-width on n - 1 df (n >= 2)."""
    n = len(values)
    mean = sum(values) / n
    return mean, t_quantile(n - 1, confidence) * math.sqrt(sum((x - mean) ** 2 for x in values) / (n - 1) / n)


def t_quantile(df: float, confidence: float = 0.95) -> float:
    return float(stdtrit(df, 0.5 + confidence / 2.0)) if math.isfinite(df) else float(stdtrit(1e9, 0.5 + confidence / 2.0))
