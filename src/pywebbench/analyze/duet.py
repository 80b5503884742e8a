"""A stack's ratio to the baseline in each duet round, from every pair the round loaded.

A duet window loads two stacks at once and gives one log ratio, log(x_i / x_j). A round
loads every pair of its set once (up to five stacks; two cycles through them beyond, plan/
duet_design.py), so a stack meets the baseline directly and also through third stacks. The
least-squares fit of one level theta per stack to all of the round's log ratios (theta_i -
theta_j ~ d_ij, baseline at 0) uses them all: with every pair of k stacks its variance for
one stack is 2/k of a single direct pair's, which pays back exactly the extra
windows the complete design spends over a star around the baseline. Where a round lost a
window (a failed side), the fit uses what is left, if the stack is still connected to the
baseline through the round's pairs; the star rounds of older results reduce to the direct
ratio.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import stdtrit

from pywebbench.analyze.paired import Interval, Observation, with_run_term

_Array = np.ndarray[Any, Any]

DUET_RUN_SD = 0.0043
"""A duet run's own offset (sd of log ratio), beyond what its launches show. A2 and A are the
same server, so the offset is the run's, not the stack's: which side a cgroup, a lane or a CPU
favoured for the whole run. Estimated from the first 12 committed duet calibrations (docs/
results/calibrate/duet/1-12): 0.67% between runs against 0.51% within (RMS z 1.67 without this
term), so on 11 degrees of freedom. Runs 13-18, made after it was fixed (another host, Debian's
Python, one on starlette:uvicorn), are its out-of-sample check: A/A holds 1 in 6 of 6 with it.
(All 18 together give a moment estimate of 0.40%; putting that on 17 df would leave 2 of 18
runs' A/A missing 1.) tests/unit/test_duet_analysis.py re-derives both."""
DUET_RUN_DF = 11


def with_duet_term(interval: Interval | None) -> Interval | None:
    return None if interval is None else with_run_term(interval, DUET_RUN_SD, DUET_RUN_DF)


def duet_half_widths(se: _Array, df: _Array, confidence: float = 0.95) -> _Array:
    """with_duet_term's half-widths (of log ratios) for whole arrays of intervals, each given by
    its standard error and degrees of freedom: the simulations widen thousands at once."""
    own, run = se ** 2, DUET_RUN_SD ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.where(np.isfinite(df) & (df > 0), own ** 2 / df, 0.0) + run ** 2 / DUET_RUN_DF
        total_df = (own + run) ** 2 / spread
        # t_quantile's stand-in for an infinite df, so both forms read the same quantile.
        half: _Array = stdtrit(np.where(np.isfinite(total_df), total_df, 1e9), 0.5 + confidence / 2.0) \
            * np.sqrt(own + run)
    return half


@dataclass(frozen=True)
class PairSide:
    """One side of a duet window: its stack, the stack loaded beside it, and its figure."""

    launch: int
    round: int
    label: str
    partner: str
    value: float


def round_ratios(sides: Sequence[PairSide], label: str, baseline: str) -> tuple[Observation, ...]:
    """exp(theta_label - theta_baseline) per (launch, round), least squares over the round's pairs."""
    out = []
    for (launch, round_no), complete in sorted(pairs_by_round(sides).items()):
        level = round_levels(complete, baseline).get(label)
        if level is not None:
            out.append(Observation(launch, round_no, math.exp(level)))
    return tuple(out)


def pairs_by_round(sides: Sequence[PairSide]) -> dict[tuple[int, int], list[dict[str, float]]]:
    """Each (launch, round)'s windows with both sides measured: {label: value} for the two."""
    by_round: dict[tuple[int, int], dict[frozenset[str], dict[str, float]]] = defaultdict(dict)
    for side in sides:
        if side.value > 0 and side.partner:
            pair = by_round[(side.launch, side.round)].setdefault(frozenset((side.label, side.partner)), {})
            pair[side.label] = side.value
    return {key: [values for values in pairs.values() if len(values) == 2] for key, pairs in by_round.items()}


def round_levels(pairs: list[dict[str, float]], baseline: str) -> dict[str, float]:
    """Each stack's log level relative to the baseline's, for stacks connected to it by pairs."""
    reached = _connected(pairs, baseline)
    if len(reached) < 2:
        return {}
    stacks = sorted(reached - {baseline})
    column = {name: i for i, name in enumerate(stacks)}
    rows: list[list[float]] = []
    targets: list[float] = []
    for values in pairs:
        (a, va), (b, vb) = sorted(values.items())
        if a not in reached:
            continue
        row = [0.0] * len(stacks)
        if a != baseline:
            row[column[a]] = 1.0
        if b != baseline:
            row[column[b]] = -1.0
        rows.append(row)
        targets.append(math.log(va / vb))
    solution = np.linalg.lstsq(np.array(rows), np.array(targets), rcond=None)[0]
    return {baseline: 0.0, **{name: float(solution[column[name]]) for name in stacks}}


def window_noise(sides: Sequence[PairSide]) -> tuple[float, int] | None:
    """The RMS of the windows' log ratios around their round's least-squares fit, on the fit's
    residual degrees of freedom (windows less fitted levels), pooled over rounds: the pair noise
    a run itself shows, to set beside the calibrations'. None where no round has a residual."""
    squares, df = 0.0, 0
    for complete in pairs_by_round(sides).values():
        stacks = {name for values in complete for name in values}
        if len(complete) < len(stacks):
            continue
        anchor = min(stacks)
        levels = round_levels(complete, anchor)
        if len(levels) != len(stacks):
            continue
        for values in complete:
            (a, va), (b, vb) = sorted(values.items())
            squares += (math.log(va / vb) - (levels[a] - levels[b])) ** 2
        df += len(complete) - (len(stacks) - 1)
    return (math.sqrt(squares / df), df) if df > 0 else None


def _connected(pairs: list[dict[str, float]], start: str) -> set[str]:
    """The stacks reachable from `start` through the round's complete pairs."""
    neighbours: dict[str, set[str]] = defaultdict(set)
    for values in pairs:
        a, b = values
        neighbours[a].add(b)
        neighbours[b].add(a)
    if start not in neighbours:
        return set()
    seen, todo = {start}, [start]
    while todo:
        for other in neighbours[todo.pop()] - seen:
            seen.add(other)
            todo.append(other)
    return seen
