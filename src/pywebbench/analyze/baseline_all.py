"""Ratios to the baseline with the baseline's level estimated once, from all its windows.

The paired estimator (analyze/paired.py) divides each stack's window by the baseline's in the
same round, so every ratio carries the baseline's noise of the launches it shares: under launch
blocks 7 of the baseline's 63 launches per ratio, and always on those launches - 1 degrees of
freedom. Here the log throughput of every stack, the baseline included, is one two-way table:

    m[s, l] = alpha_s + gamma_l + v[s, l]

m the stack's mean log req/s in launch l (its rounds put on the launch's common footing first:
a round's machine speed is read off every stack of the round, so a missing window does not
move a launch mean), gamma_l the launch's effect (whatever the launch did to all its stacks),
v the stack's own launch-level noise, independent across cells, of variance tau_s^2 (each stack
its own). alpha_s - alpha_baseline is the log ratio. Least squares over every present cell
gives it; the launch effects are read off every stack a launch held, so the baseline weighs
1/(g+1) in a launch of g stacks instead of 1, and its level comes from all its launches.

The variance of each log ratio is the sum, over every stack s', of tau_s'^2 times the squared
weights the estimate puts on s' cells: the stack's own part, the baseline's and the small
shares of its launch companions. Each tau_s^2 is the stack's residual sum of squares over its
residual degrees of freedom (the diagonal of I - H over its cells), moderated across the table
as analyze/moderation.py moderates the paired spreads (Smyth's prior; a spread above the table's
distribution keeps its own, moderation.spread_outlying), the baseline included among them, its
own kept from a lower quantile (BASELINE_OUTLYING): its share is in every ratio.
The degrees of freedom of the sum are Satterthwaite's. Coverage by simulation:
analyze/baseline_all_coverage.py, docs/method.md.

In a complete design (every stack in every launch) the centre is the paired one exactly; what
changes is the baseline's share of the variance, moderated with the table instead of resting on
its own launches - 1 degrees of freedom. Tables of fewer than SPREADS_TO_POOL ratios lend no
spread; they keep the paired estimator.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import fdtr, fdtri, stdtrit

from pywebbench.analyze.moderation import (
    Bounds,
    estimate_priors,
    launch_effects,
    moderated_intervals,
    spread_outlying,
)
from pywebbench.analyze.paired import (CONFIDENCE, Interval, Observation, interval_from_bounds, paired_ratios,
                                       table_intervals)
from pywebbench.plan.interval_rule import OWN_DF, SPREADS_TO_POOL

_Array = np.ndarray[Any, Any]
BASELINE_OUTLYING = 0.75
"""The quantile of the table's spread distribution above which the baseline's spread is its own
(in a complete design the table then keeps the paired intervals). At the 0.90 that moderation.OUTLYING_BY_DF gives a
stack on two or three degrees of freedom, a baseline twice as noisy as its table was covered
92.9% of the time at the default run's shape and 93.5% at seed 003's (complete designs, where
the baseline's own spread rests on launches - 1 degrees of freedom); at 0.85, 93.5-93.6%; at
0.75, 94.5-95.3% (analyze/baseline_all_coverage.py)."""
_TINY = 1e-9  # residual degrees of freedom below this are none (a stack's single cell)


def cell_means(logs: _Array) -> _Array:
    """(stack, launch, round) log values, NaN where missing -> (stack, launch) launch means,
    each stack's rounds first put on its launch's common footing: the rounds' effects are read
    off every stack of the launch (an additive fit, moderation.launch_effects), so a stack that
    missed a window is not moved by that round's machine speed. Complete launches give the
    plain means."""
    by_launch = np.moveaxis(logs, 1, 0)  # (launch, stack, round): rounds play the fit's "launches"
    effects = launch_effects(by_launch)  # (launch, round)
    with np.errstate(invalid="ignore"):
        adjusted = by_launch - effects[:, None, :]
        present = ~np.isnan(by_launch)
        counts = np.sum(present, axis=-1)
        own = np.nansum(adjusted, axis=-1) / np.maximum(counts, 1)
        rounds_held = np.any(present, axis=-2)
        centre = np.nansum(np.where(rounds_held, effects, 0.0), axis=-1) / np.maximum(np.sum(rounds_held, -1), 1)
        means = np.where(counts > 0, own + centre[:, None], np.nan)
    out: _Array = np.moveaxis(means, 0, 1)
    return out


@dataclass(frozen=True)
class TwoWay:
    """The least-squares fit of a table of launch means (stack, launch), stack 0 the baseline."""

    centre: _Array
    """Each stack's log ratio to the baseline (stacks 1..)."""
    weights: _Array
    """(ratio, stack): the sum of the squared weights each log ratio puts on that stack's cells,
    so that its variance is weights @ (each stack's launch-level variance)."""
    own_var: _Array
    """Each stack's residual sum of squares over its residual degrees of freedom (NaN: none)."""
    own_df: _Array
    """Each stack's residual degrees of freedom: the sum of 1 - leverage over its cells."""


def two_way(means: _Array) -> TwoWay:
    """m[s, l] = alpha_s + gamma_l over the present cells by least squares, the first launch's
    effect fixed at 0 (the design has one dimension too many; every alpha_s - alpha_0 is the same
    whichever is fixed, where the launches connect through the baseline). Each cell's row of the
    design holds two ones, so leverages and weights are gathers from (X'X)^-1."""
    stacks, launches = means.shape
    cell_stack, cell_launch = np.nonzero(~np.isnan(means))
    cells = np.arange(cell_stack.size)
    values = means[cell_stack, cell_launch]
    column = np.where(cell_launch > 0, stacks + cell_launch - 1, -1)  # -1: the fixed launch
    design = np.zeros((cells.size, stacks + launches))
    design[cells, cell_stack] = 1.0
    design[cells, column] = np.where(column >= 0, 1.0, 0.0)
    design = design[:, : stacks + launches - 1]
    normal = design.T @ design
    try:
        inverse = np.linalg.inv(normal)
    except np.linalg.LinAlgError:
        inverse = np.linalg.pinv(normal)
    theta = inverse @ (design.T @ values)
    residual = values - design @ theta
    # A cell's coefficient in parameter k is inverse[k, stack] + inverse[k, launch column].
    def coefficient(rows: _Array) -> _Array:
        on_launch = np.where(column >= 0, rows[:, np.maximum(column, 0)], 0.0)
        out: _Array = rows[:, cell_stack] + on_launch
        return out

    leverage = np.sum(design * coefficient(inverse).T, axis=1)
    member = np.zeros((cells.size, stacks))
    member[cells, cell_stack] = 1.0
    own_df = np.maximum(1.0 - leverage, 0.0) @ member
    with np.errstate(invalid="ignore", divide="ignore"):
        own_var = np.where(own_df > _TINY, residual ** 2 @ member / np.where(own_df > _TINY, own_df, 1.0), np.nan)
    contrast = coefficient(inverse[1:stacks] - inverse[0])
    return TwoWay(centre=theta[1:stacks] - theta[0], weights=contrast ** 2 @ member,
                  own_var=own_var, own_df=np.where(own_df > _TINY, own_df, 0.0))


def fit(logs: _Array, confidence: float = CONFIDENCE, *, guard: bool = True) -> Bounds:
    """Intervals of every stack's log ratio to stack 0 (the baseline) from one table of log
    throughput (stack, launch, round); the Bounds hold stacks 1.. in order. `guard=False` pulls
    even a baseline out of line with its table toward it (for showing what the guard costs)."""
    means = cell_means(logs)
    table = two_way(means)
    variance, df, baseline_own = moderated_spreads(table.own_var, table.own_df, guard=guard)
    if baseline_own:
        launches = int(np.max(np.sum(~np.isnan(means[1:]), axis=1)))
        if table.own_df[0] < launches - 1:
            # Its own spread rests on fewer degrees of freedom than the paired estimator gives
            # the baseline's share (a complete design): that estimator is the better one.
            return paired_bounds(logs, confidence)
    parts = table.weights * np.nan_to_num(variance)[None, :]
    se2 = np.sum(parts, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.sum(np.where(parts > 0, parts ** 2 / np.where(df > 0, df, np.inf)[None, :], 0.0), axis=1)
        total_df = np.where(spread > 0, se2 ** 2 / np.where(spread > 0, spread, 1.0), np.inf)
    n = np.sum(~np.isnan(means[1:]), axis=1)
    quantile = stdtrit(np.where(np.isfinite(total_df), total_df, 1e9), 0.5 + confidence / 2.0)
    usable = (n >= 2) & (total_df >= OWN_DF) & np.isfinite(se2) & (se2 > 0)
    return Bounds(centre=np.where(n > 0, table.centre, np.nan), se=np.sqrt(se2), df=total_df,
                  half=np.where(usable, quantile * np.sqrt(se2), np.nan), launches=n,
                  rounds=np.sum(~np.isnan(logs[1:]), axis=(-2, -1)))


def paired_bounds(logs: _Array, confidence: float = CONFIDENCE) -> Bounds:
    """Today's paired intervals (analyze/moderation.py) of the same table of log throughput."""
    bounds, _, _ = moderated_intervals(logs[1:] - logs[:1], confidence)
    return bounds


def moderated_spreads(own_var: _Array, own_df: _Array, *, guard: bool = True) -> tuple[_Array, _Array, bool]:
    """Each stack's launch-level variance and its degrees of freedom, moderated across the table
    (the baseline, index 0, is one of its stacks); an outlying spread, or a table too small to
    lend, keeps its own. A stack with no residual degrees of freedom takes the table's (or none).

    The baseline's share enters every ratio, so a noisier baseline pulled toward the table would
    under-cover the whole table at once: from BASELINE_OUTLYING up (the third value returned) it
    keeps its own spread, on its own degrees of freedom (fit: or the paired intervals, where
    those are fewer than the paired estimator gives it). `guard=False` pulls it regardless."""
    prior_var, prior_df = estimate_priors(np.where(np.isnan(own_var), 0.0, own_var), own_df)
    s0, d0 = float(prior_var), float(prior_df)
    if d0 <= 0:
        return own_var, own_df, False
    own = np.where(own_df > 0, np.nan_to_num(own_var), 0.0)
    outlying = spread_outlying(own, own_df, s0, d0)
    baseline_own = guard and bool(own_df[0] > 0 and own[0] > s0 * fdtri(max(float(own_df[0]), 1e-3), d0, BASELINE_OUTLYING))
    outlying[0] = baseline_own or (guard and bool(outlying[0]))
    pooled = (d0 * s0 + own_df * own) / (d0 + own_df)
    return np.where(outlying, own_var, pooled), np.where(outlying, own_df, d0 + own_df), baseline_own


def baseline_standing(logs: _Array) -> float | None:
    """Where the baseline's own spread lies in its table's distribution (a quantile; the paired
    intervals are kept from BASELINE_OUTLYING up); None where the table lends nothing."""
    table = two_way(cell_means(logs))
    prior_var, prior_df = estimate_priors(np.nan_to_num(table.own_var), table.own_df)
    if float(prior_df) <= 0 or table.own_df[0] <= 0:
        return None
    return float(fdtr(float(table.own_df[0]), float(prior_df), float(table.own_var[0]) / float(prior_var)))


def table_intervals_all(sets: Mapping[str, Sequence[Observation]], baseline: str, *,
                        confidence: float = CONFIDENCE) -> dict[str, Interval | None]:
    """Every stack's ratio to `baseline` with the baseline from all its windows. `sets` holds
    each stack's own windows (req/s, not ratios), the baseline's among them; the baseline gets
    no entry. Tables of fewer than SPREADS_TO_POOL ratios keep the paired estimator."""
    labels = [label for label in sets if label != baseline and sets[label]]
    out: dict[str, Interval | None] = {label: None for label in sets if label != baseline}
    if not labels or not sets.get(baseline):
        return out
    if len(labels) < SPREADS_TO_POOL:
        paired, _ = table_intervals({label: paired_ratios(sets[label], sets[baseline]) for label in labels},
                                    confidence=confidence)
        out.update(paired)
        return out
    bounds = fit(window_array([sets[baseline], *(sets[label] for label in labels)]), confidence)
    for i, label in enumerate(labels):
        out[label] = interval_from_bounds(bounds, i, 0.0, confidence)  # nothing lent: no prior df
    return out


def window_array(sets: Sequence[Sequence[Observation]]) -> _Array:
    """Log values as an array (set, launch, round), NaN where a set has no window; rounds line
    up by their number within each launch, over every set (a round is one machine speed)."""
    keys = sorted({(o.launch, o.round) for obs in sets for o in obs})
    launches = sorted({launch for launch, _ in keys})
    launch_index = {launch: i for i, launch in enumerate(launches)}
    slot: dict[tuple[int, int], int] = {}
    held: dict[int, int] = {}
    for launch, round_ in keys:
        slot[(launch, round_)] = held.get(launch, 0)
        held[launch] = slot[(launch, round_)] + 1
    width = max(slot.values(), default=0) + 1
    out = np.full((len(sets), max(1, len(launches)), width), np.nan)
    for i, obs in enumerate(sets):
        for o in obs:
            if o.value <= 0:
                raise ValueError("values must be positive")
            out[i, launch_index[o.launch], slot[(o.launch, o.round)]] = math.log(o.value)
    return out
